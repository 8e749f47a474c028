//! The watchdog (docs/runtime.md, Watchdog), one pass per tick; every step is a
//! compare-and-set, so several replicas may run it at once.
//!
//! - nodes not heard from within the node timeout become `lost`;
//! - a dispatch not accepted within the start timeout goes to another node with a new fencing
//!   token (`ANY`) or counts as failed on that host (`MANY`);
//! - a run without heartbeat within the work timeout is `lost`, then restarted or failed per
//!   the launch setting's policy;
//! - a run past its maximum run time is interrupted;
//! - waiting activations are dispatched when a node appears, or fail when the wait is over;
//! - nodes still running a disabled launch setting are told to stop, and members of a disabled
//!   group to interrupt;
//! - enabled stream launch settings are kept running (on every live node for `MANY`).
//!
//! Apart from the pass, on a slower beat: schedule groups whose runs did not succeed within
//! their window are told ([`silent_groups`], the dead man's switch).

use super::{
    Metrics, RuntimeConfig,
    activate::{NewActivation, dispatch_hosts, next_attempt, plan_activation},
    ending,
    plan::Plan,
    resolve::Resolver,
    stopping::mark_stop_requested,
};
use crate::status::{self, Trigger};
use crate::{
    entity::{activation_hosts, activations, launch_settings},
    error::ServiceResult,
    notifications, recovery, registry,
};
use am_domain::status::EventKind;
use am_domain::{
    catalog::{Concurrency, LostPolicy},
    wire::{ActivationId, Interrupt, Stop, ToNode},
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, QueryTrait, sea_query::Expr,
};
use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;

mod concurrency;

use concurrency::concurrency_of;
mod disabled;
mod silent;
mod streams;

use disabled::stop_disabled;
pub use silent::silent_groups;
use streams::keep_streams;

/// Rows handled per step and tick, so one pass stays short under a backlog.
const BATCH: u64 = 500;

/// Whether the replica running a pass has been reading node reports long enough for a node's
/// silence to mean something.
///
/// A heartbeat or an acceptance the manager did not read (its broker member died under its
/// report consumer, the reports queue was electing a leader, the manager was just started
/// after an outage) is not a node's silence: judging it would declare live nodes lost and run
/// their work twice. So the steps that judge silence (nodes lost, start and work timeouts) run
/// only once the replica has read reports without a break for a whole node timeout; another
/// replica that has keeps judging meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listening {
    /// Reports read without a break for at least the node timeout.
    Long,
    /// Not reading reports, or not for long enough yet.
    NotLongEnough,
}

/// The moment up to which silence may be judged: the newest stored heartbeat of any node, not
/// the clock, while reports are flowing.
///
/// A deadline that passes while no report is being stored (a batch waiting for locks behind a
/// burst of fires, the reports queue electing a leader) says nothing about the node: its
/// heartbeat may be among those not stored yet. Every live node heartbeats, so the newest stored
/// heartbeat moves on with the clock when reports flow and stops when they do not. Once nothing
/// at all has been heard for a whole node timeout, every node is silent or the reports are not
/// read (which [`Listening`] covers): the clock judges again, so that the last node's death is
/// still seen.
pub fn judged_until(
    now: DateTime<Utc>,
    heard: Option<DateTime<Utc>>,
    node_timeout: chrono::Duration,
) -> DateTime<Utc> {
    match heard {
        Some(h) if now - h <= node_timeout => h.min(now),
        _ => now,
    }
}

/// One pass of every step.
#[tracing::instrument(skip_all, fields(?listening))]
pub async fn tick(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
    listening: Listening,
) -> ServiceResult<()> {
    registry::apply_waiting_publications(db, now).await?;
    if listening == Listening::Long {
        let judged = judged_until(now, registry::heard_until(db).await?, cfg.node_timeout);
        let lost_nodes = registry::mark_lost(db, judged, cfg.node_timeout).await?;
        for (app, host) in lost_nodes {
            tracing::warn!(application = %app, %host, "node lost: no heartbeat within the node timeout");
        }
        start_timeouts(db, cfg, now, judged).await?;
        work_timeouts(db, cfg, now, judged).await?;
    }
    max_run_times(db, cfg, now).await?;
    waiting(db, cfg, now).await?;
    stop_disabled(db, cfg, now).await?;
    keep_streams(db, cfg, now).await?;
    Ok(())
}

async fn overdue(
    db: &impl ConnectionTrait,
    statuses: &[&str],
    now: DateTime<Utc>,
) -> ServiceResult<Vec<activation_hosts::Model>> {
    Ok(activation_hosts::Entity::find()
        .filter(activation_hosts::Column::Status.is_in(statuses.iter().copied()))
        .filter(activation_hosts::Column::RecoveryDeadline.lt(now))
        .order_by_asc(activation_hosts::Column::RecoveryDeadline)
        .limit(BATCH)
        .all(db)
        .await?)
}

/// Compare-and-set of one host row from `from` to `to`.
pub(super) async fn host_cas(
    db: &impl ConnectionTrait,
    row: &activation_hosts::Model,
    to: &str,
    error: &str,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    host_cas_if(db, row, to, error, now, None).await
}

/// [`host_cas`] of a row found overdue: only if its deadline is still passed at `judged`, so a
/// heartbeat stored since the row was read (it moved the deadline) wins.
async fn overdue_cas(
    db: &impl ConnectionTrait,
    row: &activation_hosts::Model,
    to: &str,
    error: &str,
    (now, judged): (DateTime<Utc>, DateTime<Utc>),
) -> ServiceResult<bool> {
    host_cas_if(db, row, to, error, now, Some(judged)).await
}

async fn host_cas_if(
    db: &impl ConnectionTrait,
    row: &activation_hosts::Model,
    to: &str,
    error: &str,
    now: DateTime<Utc>,
    overdue_at: Option<DateTime<Utc>>,
) -> ServiceResult<bool> {
    let r = activation_hosts::Entity::update_many()
        .col_expr(activation_hosts::Column::Status, Expr::value(to))
        .col_expr(activation_hosts::Column::FinishedAt, Expr::value(Some(now)))
        .col_expr(
            activation_hosts::Column::Error,
            Expr::value(Some(error.to_owned())),
        )
        .col_expr(
            activation_hosts::Column::RecoveryDeadline,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .filter(activation_hosts::Column::Id.eq(row.id))
        .filter(activation_hosts::Column::Status.eq(row.status.as_str()))
        .apply_if(overdue_at, |q, at| {
            q.filter(activation_hosts::Column::RecoveryDeadline.lt(at))
        })
        .exec(db)
        .await?;
    Ok(r.rows_affected == 1)
}

/// Moves an `ANY` activation to another node with a new fencing token; waits when there is
/// none. `false` when the activation moved on meanwhile.
async fn redispatch(
    db: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    a: &activations::Model,
    away_from: &str,
    why: &str,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    let token = a.fencing_token + 1;
    let Some(ls) = a.launch_setting_id.clone() else {
        return Ok(false);
    };
    let mut resolver = Resolver::load(db, std::slice::from_ref(&ls), now, cfg.node_timeout).await?;
    let Some(target) = resolver.target(&ls).cloned() else {
        return Ok(false);
    };
    let hosts = resolver.choose(&target, None, &[away_from.to_owned()]);
    let waiting = hosts.is_empty();
    let moved = activations::Entity::update_many()
        .col_expr(activations::Column::FencingToken, Expr::value(token))
        .col_expr(
            activations::Column::Status,
            Expr::value(if waiting {
                status::activation::WAITING
            } else {
                status::activation::DISPATCHED
            }),
        )
        .col_expr(
            activations::Column::WaitUntil,
            Expr::value(waiting.then(|| now + cfg.wait_timeout)),
        )
        .filter(activations::Column::Id.eq(a.id))
        .filter(activations::Column::FencingToken.eq(a.fencing_token))
        .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
        .exec(db)
        .await?;
    if moved.rows_affected == 0 {
        return Ok(false);
    }
    let mut plan = Plan::default();
    if waiting {
        plan.event(
            a.id,
            None,
            EventKind::Waiting,
            format!("{why}; no other live node"),
            now,
        );
        Metrics::inc(&cfg.metrics.waiting);
    } else {
        let attempt = next_attempt(db, a.id).await?;
        dispatch_hosts(
            &mut plan,
            cfg,
            &target,
            a.id,
            &hosts,
            token,
            attempt,
            now,
            EventKind::Redispatched.because(why),
            a.trace_parent.as_deref(),
        );
    }
    plan.write(db).await?;
    Ok(true)
}

async fn start_timeouts(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
    judged: DateTime<Utc>,
) -> ServiceResult<()> {
    for row in overdue(db, &[status::host::DISPATCHED], judged).await? {
        let txn = super::begin_write(db).await?;
        let Some(a) = activations::Entity::find_by_id(row.activation_id)
            .one(&txn)
            .await?
        else {
            continue;
        };
        let why = format!("{} did not accept the launch in time", row.host);
        let ls = a.launch_setting_id.clone().unwrap_or_default();
        let many = concurrency_of(&txn, &a).await? == Concurrency::Many;
        if many || row.fencing_token != a.fencing_token {
            if overdue_cas(&txn, &row, status::host::LOST, &why, (now, judged)).await? {
                event(&txn, a.id, Some(&row.host), EventKind::Lost, &why, now).await?;
                let notice = notifications::events::activation_lost(
                    a.id,
                    Some(&ls).filter(|l| !l.is_empty()).map(String::as_str),
                    &row.host,
                    &why,
                    now,
                );
                notifications::raise(&txn, notice, now).await?;
                Metrics::inc(&cfg.metrics.lost);
                recovery::count(&txn, &ls, recovery::kind::START_TIMEOUT).await?;
                ending::settle(&txn, cfg, a.id, None, now).await?;
            }
        } else if overdue_cas(&txn, &row, status::host::SUPERSEDED, &why, (now, judged)).await? {
            recovery::count(&txn, &ls, recovery::kind::START_TIMEOUT).await?;
            if redispatch(&txn, cfg, &a, &row.host, &why, now).await? {
                Metrics::inc(&cfg.metrics.redispatch_start_timeout);
                recovery::count(&txn, &ls, recovery::kind::REDISPATCH).await?;
                tracing::info!(activation = %a.id, host = %row.host, "re-dispatched after the start timeout");
            }
        }
        txn.commit().await?;
    }
    Ok(())
}

async fn work_timeouts(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
    judged: DateTime<Utc>,
) -> ServiceResult<()> {
    for row in overdue(db, &[status::host::ACCEPTED, status::host::RUNNING], judged).await? {
        let txn = super::begin_write(db).await?;
        let why = format!("no heartbeat from {} within the work timeout", row.host);
        if !overdue_cas(&txn, &row, status::host::LOST, &why, (now, judged)).await? {
            continue;
        }
        Metrics::inc(&cfg.metrics.lost);
        tracing::warn!(activation_id = %row.activation_id, host = %row.host,
            last_heartbeat = ?row.last_heartbeat_at, deadline = ?row.recovery_deadline,
            "run lost: no heartbeat within the work timeout");
        event(
            &txn,
            row.activation_id,
            Some(&row.host),
            EventKind::Lost,
            &why,
            now,
        )
        .await?;
        let Some(a) = activations::Entity::find_by_id(row.activation_id)
            .one(&txn)
            .await?
        else {
            txn.commit().await?;
            continue;
        };
        let notice = notifications::events::activation_lost(
            a.id,
            a.launch_setting_id.as_deref(),
            &row.host,
            &why,
            now,
        );
        notifications::raise(&txn, notice, now).await?;
        let restart = match &a.launch_setting_id {
            Some(ls) => {
                recovery::count(&txn, ls, recovery::kind::LOST).await?;
                match launch_settings::Entity::find_by_id(ls.clone())
                    .one(&txn)
                    .await?
                {
                    Some(l) if l.enabled => {
                        crate::catalog::rows::enum_from_str::<LostPolicy>(
                            "lost policy",
                            &l.on_lost,
                        )? == LostPolicy::Restart
                    }
                    _ => false,
                }
            }
            None => false,
        };
        let any = concurrency_of(&txn, &a).await? == Concurrency::Any;
        if restart && any && row.fencing_token == a.fencing_token {
            if redispatch(&txn, cfg, &a, &row.host, &why, now).await? {
                Metrics::inc(&cfg.metrics.restarted_after_lost);
                if let Some(ls) = &a.launch_setting_id {
                    recovery::count(&txn, ls, recovery::kind::REDISPATCH).await?;
                }
            }
        } else {
            Metrics::inc(&cfg.metrics.failed_after_lost);
            ending::settle(&txn, cfg, a.id, Some(why), now).await?;
        }
        txn.commit().await?;
    }
    Ok(())
}

async fn max_run_times(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let limited: Vec<(String, i64)> = launch_settings::Entity::find()
        .select_only()
        .column(launch_settings::Column::Id)
        .column(launch_settings::Column::MaxRunTimeMs)
        .filter(launch_settings::Column::MaxRunTimeMs.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    for (ls, max_ms) in limited {
        let started_before = now - chrono::Duration::milliseconds(max_ms);
        let runs = activations::Entity::find()
            .filter(activations::Column::LaunchSettingId.eq(ls.as_str()))
            .filter(activations::Column::Status.eq(status::activation::RUNNING))
            .all(db)
            .await?;
        for a in runs {
            let rows = activation_hosts::Entity::find()
                .filter(activation_hosts::Column::ActivationId.eq(a.id))
                .filter(activation_hosts::Column::Status.eq(status::host::RUNNING))
                .filter(activation_hosts::Column::StopRequestedAt.is_null())
                .filter(activation_hosts::Column::StartedAt.lt(started_before))
                .all(db)
                .await?;
            for row in rows {
                let txn = super::begin_write(db).await?;
                if !mark_stop_requested(&txn, &row, now).await? {
                    continue;
                }
                let reason = format!("ran longer than its maximum run time of {} ms", max_ms);
                let mut plan = Plan::default();
                plan.command(
                    &cfg.names,
                    &row.application_id,
                    &row.host,
                    &ToNode::Interrupt(Interrupt {
                        activation_id: ActivationId(a.id.to_string()),
                        reason: reason.clone(),
                        up_to_token: u64::try_from(row.fencing_token).ok(),
                    }),
                    format!("interrupt:{}:{}:{}", a.id, row.host, row.fencing_token),
                    now,
                );
                plan.event(
                    a.id,
                    Some(&row.host),
                    EventKind::InterruptRequested,
                    reason,
                    now,
                );
                plan.write(&txn).await?;
                txn.commit().await?;
                Metrics::inc(&cfg.metrics.interrupted_max_run_time);
            }
        }
    }
    Ok(())
}

async fn waiting(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let rows = activations::Entity::find()
        .filter(activations::Column::Status.eq(status::activation::WAITING))
        .order_by_asc(activations::Column::CreatedAt)
        .limit(BATCH)
        .all(db)
        .await?;
    if rows.is_empty() {
        return Ok(());
    }
    let ls_ids: Vec<String> = rows
        .iter()
        .filter_map(|a| a.launch_setting_id.clone())
        .collect();
    let mut resolver = Resolver::load(db, &ls_ids, now, cfg.node_timeout).await?;
    for a in rows {
        let txn = super::begin_write(db).await?;
        if a.wait_until.is_some_and(|t| t < now) {
            let why = format!(
                "no live node appeared within {} s",
                cfg.wait_timeout.num_seconds()
            );
            Metrics::inc(&cfg.metrics.wait_timeouts);
            ending::finish(&txn, cfg, &a, status::activation::FAILED, Some(why), now).await?;
            txn.commit().await?;
            continue;
        }
        dispatch_waiting(&txn, cfg, &mut resolver, &a, now).await?;
        txn.commit().await?;
    }
    Ok(())
}

/// Dispatches a waiting activation to the nodes that may take it now; returns them (none: it
/// keeps waiting). A compare-and-set on `waiting`.
pub(super) async fn dispatch_waiting(
    txn: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    resolver: &mut Resolver,
    a: &activations::Model,
    now: DateTime<Utc>,
) -> ServiceResult<Vec<String>> {
    let Some(target) = a
        .launch_setting_id
        .as_deref()
        .and_then(|l| resolver.target(l))
        .cloned()
    else {
        return Ok(Vec::new());
    };
    let pinned = match a.parent_id {
        Some(p) => activations::Entity::find_by_id(p)
            .one(txn)
            .await?
            .and_then(|p| p.pinned_host),
        None => None,
    };
    let hosts = resolver.choose(&target, pinned.as_deref(), &[]);
    if hosts.is_empty() {
        return Ok(hosts);
    }
    let token = a.fencing_token + 1;
    let moved = activations::Entity::update_many()
        .col_expr(
            activations::Column::Status,
            Expr::value(status::activation::DISPATCHED),
        )
        .col_expr(activations::Column::FencingToken, Expr::value(token))
        .col_expr(
            activations::Column::WaitUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .filter(activations::Column::Id.eq(a.id))
        .filter(activations::Column::Status.eq(status::activation::WAITING))
        .exec(txn)
        .await?;
    if moved.rows_affected == 1 {
        let attempt = next_attempt(txn, a.id).await?;
        let mut plan = Plan::default();
        dispatch_hosts(
            &mut plan,
            cfg,
            &target,
            a.id,
            &hosts,
            token,
            attempt,
            now,
            EventKind::DispatchedAfterWaiting,
            a.trace_parent.as_deref(),
        );
        plan.write(txn).await?;
        return Ok(hosts);
    }
    Ok(Vec::new())
}

async fn event(
    db: &impl ConnectionTrait,
    activation: Uuid,
    host: Option<&str>,
    kind: EventKind,
    detail: &str,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let mut plan = Plan::default();
    plan.event(activation, host, kind, detail, now);
    plan.write(db).await
}

#[cfg(test)]
mod tests {
    use super::judged_until;
    use chrono::{Duration, TimeZone, Utc};

    #[test]
    fn silence_is_judged_up_to_the_newest_heartbeat_while_reports_flow() {
        let now = Utc.with_ymd_and_hms(2026, 11, 27, 12, 0, 10).unwrap();
        let timeout = Duration::seconds(5);
        // Reports stored 2 s ago: deadlines are judged as of then, not now.
        let heard = now - Duration::seconds(2);
        assert_eq!(judged_until(now, Some(heard), timeout), heard);
        // Nothing stored for longer than the node timeout: every node is silent; the clock.
        assert_eq!(
            judged_until(now, Some(now - Duration::seconds(6)), timeout),
            now
        );
        // No node ever heard from, or a heartbeat stored "after" now (another replica's clock).
        assert_eq!(judged_until(now, None, timeout), now);
        assert_eq!(
            judged_until(now, Some(now + Duration::seconds(1)), timeout),
            now
        );
    }
}
