//! The consistency sweep (docs/runtime.md, Consistency sweep): an operator-started check of
//! every activation still in progress against what the nodes report and what the outbox holds,
//! repairing what it can at once rather than when a timeout fires.
//!
//! Each check is a compare-and-set like the watchdog's, so a sweep may run beside the watchdog
//! and on several replicas.

use super::{
    RuntimeConfig, ending,
    plan::Plan,
    resolve::Resolver,
    watchdog::{dispatch_waiting, host_cas},
};
use crate::status;
use crate::{
    entity::{activation_hosts, activations, nodes, outbox},
    error::ServiceResult,
    recovery, registry,
};
use am_domain::status::EventKind;
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A launch command still unsent after this long is reported (the relay retries it).
const UNSENT_AFTER: chrono::Duration = chrono::Duration::seconds(60);

/// What the sweep found wrong with one activation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub activation: Uuid,
    pub host: Option<String>,
    /// `waiting-with-live-node`, `launch-missing`, `launch-unsent`, `node-gone` or
    /// `not-reported`.
    pub kind: String,
    pub detail: String,
    /// Whether the sweep repaired it (the rest is for an operator, or for time).
    pub repaired: bool,
}

/// The next activations in progress after `after` (ids are time-ordered), up to `until`.
pub async fn next_batch(
    db: &DatabaseConnection,
    after: Option<Uuid>,
    until: Uuid,
    limit: u64,
) -> ServiceResult<Vec<activations::Model>> {
    let mut q = activations::Entity::find()
        .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
        .filter(activations::Column::Id.lte(until));
    if let Some(after) = after {
        q = q.filter(activations::Column::Id.gt(after));
    }
    Ok(q.order_by_asc(activations::Column::Id)
        .limit(limit)
        .all(db)
        .await?)
}

/// Checks one activation and repairs what it can; returns what it found.
#[tracing::instrument(skip_all, fields(activation = %a.id))]
pub async fn check(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    a: &activations::Model,
    now: DateTime<Utc>,
) -> ServiceResult<Vec<Finding>> {
    let mut found = Vec::new();
    let finding = |host: Option<&str>, kind: &str, detail: String, repaired: bool| Finding {
        activation: a.id,
        host: host.map(str::to_owned),
        kind: kind.to_owned(),
        detail,
        repaired,
    };
    if a.status == status::activation::WAITING {
        let Some(ls) = a.launch_setting_id.clone() else {
            return Ok(found);
        };
        let mut resolver =
            Resolver::load(db, std::slice::from_ref(&ls), now, cfg.node_timeout).await?;
        let live: Vec<String> = match resolver.target(&ls) {
            Some(t) => resolver
                .eligible(t)
                .iter()
                .map(|n| n.host.clone())
                .collect(),
            None => Vec::new(),
        };
        if !live.is_empty() {
            let txn = super::begin_write(db).await?;
            let sent = dispatch_waiting(&txn, cfg, &mut resolver, a, now).await?;
            txn.commit().await?;
            found.push(finding(
                None,
                "waiting-with-live-node",
                format!("waiting while {} could take it", live.join(", ")),
                !sent.is_empty(),
            ));
        }
        return Ok(found);
    }
    let rows = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::ActivationId.eq(a.id))
        .filter(activation_hosts::Column::Status.is_in(status::host::ACTIVE))
        .all(db)
        .await?;
    for row in rows {
        if row.status == status::host::DISPATCHED {
            found.extend(check_launch(db, cfg, a, &row, now).await?);
            continue;
        }
        let node = nodes::Entity::find_by_id((row.application_id.clone(), row.host.clone()))
            .one(db)
            .await?;
        let live = node
            .as_ref()
            .is_some_and(|n| registry::is_live(n, now, cfg.node_timeout));
        // The last time the node said it runs it (or the start, before its first heartbeat).
        let said = [row.last_heartbeat_at, row.started_at, row.accepted_at]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(row.dispatched_at);
        let why = match &node {
            None => Some(("node-gone", format!("node {} is not registered", row.host))),
            Some(_) if !live => Some(("node-gone", format!("node {} is lost", row.host))),
            Some(n) if n.last_heartbeat_at - said > cfg.node_timeout => Some((
                "not-reported",
                format!(
                    "node {} has not listed it in its heartbeats since {}",
                    row.host,
                    said.format("%Y-%m-%d %H:%M:%S UTC")
                ),
            )),
            Some(_) => None,
        };
        let Some((kind, detail)) = why else { continue };
        let txn = super::begin_write(db).await?;
        let repaired = host_cas(&txn, &row, status::host::LOST, &detail, now).await?;
        if repaired {
            let mut plan = Plan::default();
            plan.event(
                a.id,
                Some(&row.host),
                EventKind::Lost,
                format!("consistency sweep: {detail}"),
                now,
            );
            plan.write(&txn).await?;
            if let Some(ls) = &a.launch_setting_id {
                recovery::count(&txn, ls, recovery::kind::LOST).await?;
            }
            ending::settle(&txn, cfg, a.id, Some(detail.clone()), now).await?;
        }
        txn.commit().await?;
        found.push(finding(Some(&row.host), kind, detail, repaired));
    }
    Ok(found)
}

/// A dispatched host row: its launch command must be in the outbox, and sent by now.
async fn check_launch(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    a: &activations::Model,
    row: &activation_hosts::Model,
    now: DateTime<Utc>,
) -> ServiceResult<Vec<Finding>> {
    let key = format!("launch:{}:{}:{}", a.id, row.host, row.fencing_token);
    let command = outbox::Entity::find()
        .filter(outbox::Column::MessageId.eq(key.as_str()))
        .one(db)
        .await?;
    let finding = |kind: &str, detail: String, repaired: bool| Finding {
        activation: a.id,
        host: Some(row.host.clone()),
        kind: kind.to_owned(),
        detail,
        repaired,
    };
    match command {
        Some(c) if c.sent_at.is_none() && now - c.created_at > UNSENT_AFTER => Ok(vec![finding(
            "launch-unsent",
            format!(
                "the launch has waited in the outbox since {} ({} attempts{})",
                c.created_at.format("%Y-%m-%d %H:%M:%S UTC"),
                c.attempts,
                c.last_error
                    .map(|e| format!(", last error: {e}"))
                    .unwrap_or_default()
            ),
            false,
        )]),
        Some(_) => Ok(Vec::new()),
        None => {
            // Written in the dispatch's own transaction, so only a lost database write or a
            // hand edit gets here: write it again (the node drops a duplicate by its token).
            let Some(ls) = a.launch_setting_id.clone() else {
                return Ok(Vec::new());
            };
            let resolver =
                Resolver::load(db, std::slice::from_ref(&ls), now, cfg.node_timeout).await?;
            let Some(target) = resolver.target(&ls) else {
                return Ok(vec![finding(
                    "launch-missing",
                    "no launch command, and the launch setting is gone".into(),
                    false,
                )]);
            };
            let txn = super::begin_write(db).await?;
            let mut plan = Plan::default();
            plan.command(
                &cfg.names,
                &row.application_id,
                &row.host,
                &am_domain::wire::ToNode::Launch(target.launch(a.id, row.fencing_token)),
                key,
                now,
            );
            plan.event(
                a.id,
                Some(&row.host),
                EventKind::Relaunched,
                "consistency sweep: the launch command was missing from the outbox",
                now,
            );
            plan.write(&txn).await?;
            txn.commit().await?;
            Ok(vec![finding(
                "launch-missing",
                "no launch command in the outbox; written again".into(),
                true,
            )])
        }
    }
}

/// How many activations are in progress now, and the newest one: the bound of a sweep
/// started now (ids are time-ordered; later ones are not part of it).
pub async fn in_progress(db: &DatabaseConnection) -> ServiceResult<(u64, Option<Uuid>)> {
    let q = activations::Entity::find()
        .filter(activations::Column::Status.is_in(status::activation::ACTIVE));
    let count = q.clone().count(db).await?;
    let newest: Option<Uuid> = q
        .select_only()
        .column(activations::Column::Id)
        .order_by_desc(activations::Column::Id)
        .into_tuple()
        .one(db)
        .await?;
    Ok((count, newest))
}
