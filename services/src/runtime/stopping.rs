//! Telling running activations to end: *stop* (every run of a launch setting on a node) or
//! *interrupt* (one activation), once per host by compare-and-set on the host's stop request;
//! a run still waiting for a node ends at once. Called through `ending.rs`, which lets a group
//! go on when a waiting member ended here.

use super::{
    Metrics, RuntimeConfig,
    plan::Plan,
    settle::{self, MemberEnded},
};
use crate::status;
use crate::{
    entity::{activation_hosts, activations},
    error::ServiceResult,
};
use am_domain::status::EventKind;
use am_domain::wire::{ActivationId, Interrupt, ToNode};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, sea_query::Expr};

/// How an activation that must end is told to.
pub(crate) enum Ending<'a> {
    /// This *stop* to every node running it.
    Stop(&'a ToNode),
    /// An *interrupt* of this activation only.
    Interrupt,
}

/// Ends an activation that must no longer run, in the caller's transaction: a waiting one at
/// once (interrupted; a member's end is returned for its group to go on), a running one by a
/// command to each host still running it, once per host (compare-and-set on the host's stop
/// request).
pub(crate) async fn end_in(
    txn: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    a: &activations::Model,
    reason: &str,
    ending: Ending<'_>,
    now: DateTime<Utc>,
) -> ServiceResult<Option<MemberEnded>> {
    if a.status == status::activation::WAITING {
        return settle::finish(
            txn,
            &cfg.metrics,
            a,
            status::activation::INTERRUPTED,
            Some(reason.to_owned()),
            now,
        )
        .await;
    }
    let rows = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::ActivationId.eq(a.id))
        .filter(activation_hosts::Column::Status.is_in(status::host::ACTIVE))
        .filter(activation_hosts::Column::StopRequestedAt.is_null())
        .all(txn)
        .await?;
    let mut plan = Plan::default();
    for row in rows {
        if !mark_stop_requested(txn, &row, now).await? {
            continue;
        }
        let (command, key, kind) = match &ending {
            Ending::Stop(stop) => ((*stop).clone(), "stop", EventKind::StopRequested),
            Ending::Interrupt => (
                ToNode::Interrupt(Interrupt {
                    activation_id: ActivationId(a.id.to_string()),
                    reason: reason.to_owned(),
                    up_to_token: u64::try_from(row.fencing_token).ok(),
                }),
                "interrupt",
                EventKind::InterruptRequested,
            ),
        };
        plan.command(
            &cfg.names,
            &row.application_id,
            &row.host,
            &command,
            format!("{key}:{}:{}:{}", a.id, row.host, row.fencing_token),
            now,
        );
        plan.event(a.id, Some(&row.host), kind, reason, now);
        Metrics::inc(&cfg.metrics.stops);
    }
    plan.write(txn).await?;
    Ok(None)
}

/// Records a stop request on a host row still active without one; false when another pass
/// (or replica) did it first.
pub(crate) async fn mark_stop_requested(
    db: &impl ConnectionTrait,
    row: &activation_hosts::Model,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    let r = activation_hosts::Entity::update_many()
        .col_expr(
            activation_hosts::Column::StopRequestedAt,
            Expr::value(Some(now)),
        )
        .filter(activation_hosts::Column::Id.eq(row.id))
        .filter(activation_hosts::Column::StopRequestedAt.is_null())
        .filter(activation_hosts::Column::Status.is_in(status::host::ACTIVE))
        .exec(db)
        .await?;
    Ok(r.rows_affected == 1)
}
