//! A node's heartbeat, applied in its report batch's transaction: the node is live, each run
//! it lists has its heartbeat and recovery deadline moved on and its counters written (what
//! they grew by counted for the charts), and a run the manager no longer has on that node is
//! told to stop.

use super::{
    Metrics, RuntimeConfig,
    host_rows::{WorkTimeouts, running_on, with_counters},
    plan::Plan,
};
use crate::status;
use crate::{
    entity::{activation_hosts, activations},
    error::ServiceResult,
    registry,
    throughput::Grown,
};
use am_domain::wire::Heartbeat;
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, sea_query::Expr,
};
use std::collections::{HashMap, HashSet};
use uuid::Uuid;

/// Applies heartbeat `hb` received at `now`.
pub(super) async fn apply(
    txn: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    plan: &mut Plan,
    timeouts: &mut WorkTimeouts,
    grown: &mut Grown,
    hb: &Heartbeat,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    registry::record_heartbeat(txn, hb, now).await?;
    for running in &hb.running {
        let timeout = timeouts.of_ls(txn, &running.launch_setting).await?;
        let ids: Vec<Uuid> = running
            .activations
            .iter()
            .filter_map(|a| Uuid::parse_str(&a.0).ok())
            .collect();
        let mut update = activation_hosts::Entity::update_many()
            .col_expr(
                activation_hosts::Column::LastHeartbeatAt,
                Expr::value(Some(now)),
            )
            .col_expr(
                activation_hosts::Column::RecoveryDeadline,
                Expr::value(Some(now + timeout)),
            );
        // A node that sends no counters per activation: the launch setting's.
        if running.by_activation.is_empty() {
            update = with_counters(update, &running.counters);
        }
        update
            .filter(running_on(&hb.application, &hb.host, ids.iter().copied()))
            .exec(txn)
            .await?;
        let reported: HashMap<Uuid, u64> = running
            .by_activation
            .iter()
            .filter_map(|each| {
                Some((
                    Uuid::parse_str(&each.activation_id.0).ok()?,
                    each.counters.processed,
                ))
            })
            .collect();
        let counted = running_on(&hb.application, &hb.host, reported.keys().copied());
        grown
            .observe(txn, &running.launch_setting, counted, &reported)
            .await?;
        for each in &running.by_activation {
            let Ok(id) = Uuid::parse_str(&each.activation_id.0) else {
                continue;
            };
            with_counters(activation_hosts::Entity::update_many(), &each.counters)
                .filter(running_on(&hb.application, &hb.host, [id]))
                .exec(txn)
                .await?;
        }
        interrupt_unknown_runs(txn, cfg, plan, hb, &running.launch_setting, &ids, now).await?;
    }
    Ok(())
}

/// A node runs an activation the manager no longer has on that node (re-dispatched elsewhere
/// after a start timeout, declared lost, ended): it is told to interrupt it, so the work does
/// not run twice. Repeated at every heartbeat until the node stops listing it.
async fn interrupt_unknown_runs(
    db: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    plan: &mut Plan,
    hb: &Heartbeat,
    ls: &str,
    ids: &[Uuid],
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let known: HashSet<Uuid> = activation_hosts::Entity::find()
        .select_only()
        .column(activation_hosts::Column::ActivationId)
        .filter(activation_hosts::Column::ActivationId.is_in(ids.iter().copied()))
        .filter(activation_hosts::Column::Host.eq(hb.host.as_str()))
        .filter(activation_hosts::Column::ApplicationId.eq(hb.application.as_str()))
        .filter(activation_hosts::Column::Status.is_in(status::host::ACTIVE))
        .into_tuple::<Uuid>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let unknown: Vec<Uuid> = ids
        .iter()
        .filter(|id| !known.contains(id))
        .copied()
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    // What the node runs is a copy from an earlier launch (its token is at most the
    // activation's current one): a later launch to this node must not be hit by this command.
    let tokens: HashMap<Uuid, i64> = activations::Entity::find()
        .select_only()
        .column(activations::Column::Id)
        .column(activations::Column::FencingToken)
        .filter(activations::Column::Id.is_in(unknown.iter().copied()))
        .into_tuple::<(Uuid, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    for id in &unknown {
        tracing::warn!(activation = %id, host = %hb.host, launch_setting = %ls, "node runs an activation the manager gave up on; interrupting it");
        plan.command(
            &cfg.names,
            &hb.application,
            &hb.host,
            &am_domain::wire::ToNode::Interrupt(am_domain::wire::Interrupt {
                activation_id: am_domain::wire::ActivationId(id.to_string()),
                reason: "the manager no longer runs this activation on this node".into(),
                up_to_token: tokens.get(id).and_then(|t| u64::try_from(*t).ok()),
            }),
            format!("interrupt:{id}:{}:{}", hb.host, now.timestamp_millis()),
            now,
        );
        Metrics::inc(&cfg.metrics.stops);
    }
    Ok(())
}
