//! Node reports applied to the database in batches: one transaction per batch, every state
//! change a compare-and-set on the expected state and the fencing token, failure reports
//! inserted together. The consumer acknowledges the batch to the broker only after commit.

use super::{Metrics, RuntimeConfig, locks, plan::Plan, settle, status};
use crate::{
    dead_letters::replay,
    entity::{activation_hosts, activations, breaker_trips, failure_logs, launch_settings},
    error::ServiceResult,
    recovery, registry,
    throughput::Grown,
};
use am_domain::{
    recovery::ReplayResult,
    wire::{ActivationEvent, ActivationReport, BreakerTripped, ToManager},
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set,
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QuerySelect,
    sea_query::{Expr, OnConflict},
};
use std::collections::{BTreeSet, HashMap, HashSet};
use uuid::Uuid;

/// What a batch did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub applied: usize,
    /// Reports with an outdated fencing token, ignored.
    pub stale: usize,
    /// Reports naming no known activation or repeating an applied one.
    pub ignored: usize,
    /// Breaker trips to run the policy for, after commit.
    pub trips: Vec<BreakerTripped>,
}

/// Applies a batch of reports. Publications are recorded first, each in its own transaction
/// (they rewrite catalog rows); everything else in one transaction.
pub async fn apply(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    reports: &[ToManager],
    now: DateTime<Utc>,
) -> ServiceResult<Outcome> {
    let mut out = Outcome::default();
    for r in reports {
        if let ToManager::Publication(p) = r {
            match registry::record_publication(db, p, now).await {
                Ok(()) => out.applied += 1,
                // A publication the catalog cannot take must not block the reports behind it.
                Err(e) if e.is_client_error() => {
                    tracing::warn!(application = %p.application, host = %p.host, error = %e,
                        "publication refused");
                    out.ignored += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }
    let txn = super::begin_write(db).await?;
    locks::reports(&txn).await?;
    let mut plan = Plan::default();
    let mut failures = Vec::new();
    let mut to_settle: Vec<Uuid> = Vec::new();
    let mut running: BTreeSet<String> = BTreeSet::new();
    let mut timeouts = WorkTimeouts::default();
    let mut replays = Vec::new();
    let mut recoveries = recovery::Tally::default();
    let mut grown = Grown::default();
    for r in reports {
        match r {
            ToManager::Publication(_) => {}
            ToManager::Heartbeat(hb) => {
                registry::record_heartbeat(&txn, hb, now).await?;
                for running in &hb.running {
                    let timeout = timeouts.of_ls(&txn, &running.launch_setting).await?;
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
                        .filter(activation_hosts::Column::ActivationId.is_in(ids.iter().copied()))
                        .filter(activation_hosts::Column::Host.eq(hb.host.as_str()))
                        .filter(activation_hosts::Column::ApplicationId.eq(hb.application.as_str()))
                        .filter(
                            activation_hosts::Column::Status
                                .is_in([status::host::ACCEPTED, status::host::RUNNING]),
                        )
                        .exec(&txn)
                        .await?;
                    let reported: HashMap<Uuid, u64> = running
                        .by_activation
                        .iter()
                        .filter_map(|each| {
                            Some((parse(&each.activation_id.0)?, each.counters.processed))
                        })
                        .collect();
                    let counted = Condition::all()
                        .add(activation_hosts::Column::ActivationId.is_in(reported.keys().copied()))
                        .add(activation_hosts::Column::Host.eq(hb.host.as_str()))
                        .add(activation_hosts::Column::ApplicationId.eq(hb.application.as_str()))
                        .add(
                            activation_hosts::Column::Status
                                .is_in([status::host::ACCEPTED, status::host::RUNNING]),
                        );
                    grown
                        .observe(&txn, &running.launch_setting, counted, &reported)
                        .await?;
                    for each in &running.by_activation {
                        let Ok(id) = Uuid::parse_str(&each.activation_id.0) else {
                            continue;
                        };
                        with_counters(activation_hosts::Entity::update_many(), &each.counters)
                            .filter(activation_hosts::Column::ActivationId.eq(id))
                            .filter(activation_hosts::Column::Host.eq(hb.host.as_str()))
                            .filter(
                                activation_hosts::Column::ApplicationId.eq(hb.application.as_str()),
                            )
                            .filter(
                                activation_hosts::Column::Status
                                    .is_in([status::host::ACCEPTED, status::host::RUNNING]),
                            )
                            .exec(&txn)
                            .await?;
                    }
                    interrupt_unknown_runs(
                        &txn,
                        cfg,
                        &mut plan,
                        hb,
                        &running.launch_setting,
                        &ids,
                        now,
                    )
                    .await?;
                }
                out.applied += 1;
            }
            ToManager::Activation(a) => {
                match activation_event(&txn, &mut plan, &mut timeouts, &mut grown, a, now).await? {
                    Applied::Yes { settle, started } => {
                        out.applied += 1;
                        running.extend(started);
                        if settle {
                            to_settle.push(parse(&a.activation_id.0).unwrap_or_default());
                        }
                    }
                    Applied::Stale { launch_setting } => {
                        out.stale += 1;
                        Metrics::inc(&cfg.metrics.stale_reports);
                        if let Some(ls) = launch_setting {
                            recoveries.add(&ls, recovery::kind::STALE_REPORT);
                        }
                    }
                    Applied::Ignored => out.ignored += 1,
                }
            }
            ToManager::Failure(f) => {
                let Some(activation) = parse(&f.activation_id.0) else {
                    out.ignored += 1;
                    continue;
                };
                failures.push(failure_logs::ActiveModel {
                    launch_setting_id: Set(f.launch_setting.clone()),
                    activation_id: Set(activation),
                    host: Set(f.host.clone()),
                    application_id: Set(f.application.clone()),
                    agent_id: Set(f.agent.clone()),
                    error_type: Set(f.error_type.clone()),
                    message: Set(f.message.clone()),
                    details: Set((!f.details.is_empty()).then(|| f.details.clone())),
                    data_message_id: Set(f.data_message_id.clone()),
                    attempt: Set(Some(i32::try_from(f.attempt).unwrap_or(i32::MAX))),
                    occurred_at: Set(f.at),
                    report_id: Set(f.report_id.clone()),
                    temporary: Set(f.temporary),
                    disposition: Set(f.disposition.clone()),
                    kind: Set(crate::failures::kinds::of_report(
                        f.temporary,
                        f.disposition.as_deref(),
                    )),
                    ..Default::default()
                });
                if let Some(token) = f.replay {
                    replays.push(replay::Reported {
                        token,
                        result: ReplayResult::of_disposition(f.disposition.as_deref()),
                        error: Some(format!("{}: {}", f.error_type, f.message)),
                        new_dead_letter: None,
                        at: f.at,
                    });
                }
                out.applied += 1;
            }
            ToManager::ReplayProcessed(r) => {
                replays.push(replay::Reported {
                    token: r.replay,
                    result: ReplayResult::Processed,
                    error: None,
                    new_dead_letter: None,
                    at: r.at,
                });
                out.applied += 1;
            }
            ToManager::BreakerTripped(t) => {
                let activation = parse(&t.activation_id.0);
                let known = breaker_trips::Entity::find()
                    .filter(breaker_trips::Column::LaunchSettingId.eq(t.launch_setting.as_str()))
                    .filter(breaker_trips::Column::Host.eq(t.host.as_str()))
                    .filter(breaker_trips::Column::ActivationId.eq(activation))
                    .one(&txn)
                    .await?;
                if known.is_none() {
                    breaker_trips::Entity::insert(breaker_trips::ActiveModel {
                        launch_setting_id: Set(t.launch_setting.clone()),
                        activation_id: Set(activation),
                        host: Set(t.host.clone()),
                        consecutive_failures: Set(
                            i32::try_from(t.consecutive_failures).unwrap_or(i32::MAX)
                        ),
                        last_errors: Set(serde_json::to_value(&t.last_errors).unwrap_or_default()),
                        tripped_at: Set(t.at),
                        ..Default::default()
                    })
                    .exec_without_returning(&txn)
                    .await?;
                    if let Some(a) = activation {
                        plan.event(
                            a,
                            Some(&t.host),
                            "breaker-tripped",
                            format!(
                                "{} consecutive failures ({} of the same type)",
                                t.consecutive_failures, t.same_type_failures
                            ),
                            now,
                        );
                    }
                    Metrics::inc(&cfg.metrics.breaker_trips);
                }
                // The policy runs again for a repeated trip: it is idempotent, and the first
                // delivery may have died between commit and policy.
                out.trips.push(t.clone());
                out.applied += 1;
            }
        }
    }
    // A report the node gave an id to is stored once, however often it is delivered: the
    // batch may come again after its commit (an acknowledgement lost, the manager stopped).
    let mut stored = 0;
    let mut rows = failures.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<_> = rows.by_ref().take(super::CHUNK).collect();
        stored += failure_logs::Entity::insert_many(chunk)
            .on_conflict(
                OnConflict::column(failure_logs::Column::ReportId)
                    .do_nothing()
                    .to_owned(),
            )
            .exec_without_returning(&txn)
            .await?;
    }
    Metrics::add(&cfg.metrics.failures, stored);
    replay::record(&txn, &replays).await?;
    plan.write(&txn).await?;
    recoveries.write(&txn).await?;
    grown.write(&txn, now).await?;
    // The launch settings of every run the batch started or may end, locked at once in the one
    // order (`locks`) before the first is written: written report by report, they would be
    // locked in the order the reports came.
    locks::for_settling(&txn, &to_settle, running.iter().cloned()).await?;
    for ls in &running {
        settle::ls_running(&txn, ls).await?;
    }
    let mut seen = HashSet::new();
    for id in to_settle {
        if seen.insert(id) {
            settle::settle_locked(&txn, cfg, id, None, now).await?;
        }
    }
    txn.commit().await?;
    Metrics::add(&cfg.metrics.reports, out.applied as u64);
    Ok(out)
}

/// A node runs an activation the manager no longer has on that node (re-dispatched elsewhere
/// after a start timeout, declared lost, ended): it is told to interrupt it, so the work does
/// not run twice. Repeated at every heartbeat until the node stops listing it.
async fn interrupt_unknown_runs(
    db: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    plan: &mut Plan,
    hb: &am_domain::wire::Heartbeat,
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

fn parse(id: &str) -> Option<Uuid> {
    Uuid::parse_str(id).ok()
}

enum Applied {
    Yes {
        settle: bool,
        /// The launch setting whose run started: marked running once the batch's launch
        /// settings are locked.
        started: Option<String>,
    },
    /// An outdated fencing token: the report of a run the manager moved on from.
    Stale {
        launch_setting: Option<String>,
    },
    Ignored,
}

/// Work timeouts of launch settings, read once per batch.
#[derive(Default)]
struct WorkTimeouts(HashMap<String, chrono::Duration>);

impl WorkTimeouts {
    async fn of_ls(
        &mut self,
        db: &impl ConnectionTrait,
        ls: &str,
    ) -> ServiceResult<chrono::Duration> {
        if let Some(t) = self.0.get(ls) {
            return Ok(*t);
        }
        let ms: Option<i64> = launch_settings::Entity::find()
            .select_only()
            .column(launch_settings::Column::WorkTimeoutMs)
            .filter(launch_settings::Column::Id.eq(ls))
            .into_tuple()
            .one(db)
            .await?;
        let t = chrono::Duration::milliseconds(ms.unwrap_or(120_000));
        self.0.insert(ls.to_owned(), t);
        Ok(t)
    }
}

async fn activation_event(
    db: &impl ConnectionTrait,
    plan: &mut Plan,
    timeouts: &mut WorkTimeouts,
    grown: &mut Grown,
    r: &ActivationReport,
    now: DateTime<Utc>,
) -> ServiceResult<Applied> {
    use activation_hosts::Column as C;
    use status::host as h;
    let Some(id) = parse(&r.activation_id.0) else {
        return Ok(Applied::Ignored);
    };
    let token = i64::try_from(r.fencing_token).unwrap_or(i64::MAX);
    let deadline = now + timeouts.of_ls(db, &r.launch_setting).await?;
    let mut update = activation_hosts::Entity::update_many()
        .filter(C::ActivationId.eq(id))
        .filter(C::Host.eq(r.host.as_str()))
        .filter(C::ApplicationId.eq(r.application.as_str()))
        .filter(C::FencingToken.eq(token));
    let (kind, detail, settle) = match &r.event {
        ActivationEvent::Accepted => {
            update = update
                .col_expr(C::Status, Expr::value(h::ACCEPTED))
                .col_expr(C::AcceptedAt, Expr::value(Some(r.at)))
                .col_expr(C::RecoveryDeadline, Expr::value(Some(deadline)))
                .filter(C::Status.eq(h::DISPATCHED));
            ("accepted", String::new(), false)
        }
        ActivationEvent::Started => {
            update = update
                .col_expr(C::Status, Expr::value(h::RUNNING))
                .col_expr(C::StartedAt, Expr::value(Some(r.at)))
                .col_expr(C::RecoveryDeadline, Expr::value(Some(deadline)))
                .filter(C::Status.is_in([h::DISPATCHED, h::ACCEPTED]));
            ("started", String::new(), false)
        }
        ActivationEvent::Progress { .. } => {
            update = update
                .col_expr(C::LastHeartbeatAt, Expr::value(Some(now)))
                .col_expr(C::RecoveryDeadline, Expr::value(Some(deadline)))
                .filter(C::Status.is_in([h::ACCEPTED, h::RUNNING]));
            ("progress", String::new(), false)
        }
        ActivationEvent::Skipped { reason } => {
            update = update
                .col_expr(C::Status, Expr::value(h::SKIPPED))
                .col_expr(C::FinishedAt, Expr::value(Some(r.at)))
                .col_expr(C::Error, Expr::value(Some(reason.clone())))
                .col_expr(
                    C::RecoveryDeadline,
                    Expr::value(Option::<DateTime<Utc>>::None),
                )
                .filter(C::Status.is_in([h::DISPATCHED, h::ACCEPTED]));
            ("skipped", reason.clone(), true)
        }
        ActivationEvent::Finished {
            result,
            error,
            counters,
        } => {
            let s = match result {
                am_domain::wire::ActivationResult::Succeeded => h::SUCCEEDED,
                am_domain::wire::ActivationResult::Failed => h::FAILED,
                am_domain::wire::ActivationResult::Interrupted => h::INTERRUPTED,
            };
            update = update
                .col_expr(C::Status, Expr::value(s))
                .col_expr(C::FinishedAt, Expr::value(Some(r.at)))
                .col_expr(C::Error, Expr::value(error.clone()))
                .col_expr(
                    C::RecoveryDeadline,
                    Expr::value(Option::<DateTime<Utc>>::None),
                )
                .filter(C::Status.is_in(h::ACTIVE));
            // The final figures, when the node sends them; else the last heartbeat's stay.
            if let Some(c) = counters {
                let rows = Condition::all()
                    .add(C::ActivationId.eq(id))
                    .add(C::Host.eq(r.host.as_str()))
                    .add(C::ApplicationId.eq(r.application.as_str()))
                    .add(C::FencingToken.eq(token))
                    .add(C::Status.is_in(h::ACTIVE));
                let reported = HashMap::from([(id, c.processed)]);
                grown
                    .observe(db, &r.launch_setting, rows, &reported)
                    .await?;
                update = with_counters(update, c);
            }
            (s, error.clone().unwrap_or_default(), true)
        }
    };
    if update.exec(db).await?.rows_affected == 0 {
        let current: Option<(i64, Option<String>)> = activations::Entity::find()
            .select_only()
            .column(activations::Column::FencingToken)
            .column(activations::Column::LaunchSettingId)
            .filter(activations::Column::Id.eq(id))
            .into_tuple()
            .one(db)
            .await?;
        return Ok(match current {
            Some((current, launch_setting)) if token < current => {
                plan.event(
                    id,
                    Some(&r.host),
                    "stale-report",
                    format!("{kind} with fencing token {token} ignored (current {current})"),
                    now,
                );
                Applied::Stale { launch_setting }
            }
            _ => Applied::Ignored,
        });
    }
    if kind == "progress" {
        return Ok(Applied::Yes {
            settle: false,
            started: None,
        });
    }
    if kind == "started" {
        activations::Entity::update_many()
            .col_expr(
                activations::Column::Status,
                Expr::value(status::activation::RUNNING),
            )
            .col_expr(activations::Column::StartedAt, Expr::value(Some(r.at)))
            .filter(activations::Column::Id.eq(id))
            .filter(activations::Column::Status.eq(status::activation::DISPATCHED))
            .exec(db)
            .await?;
        plan.event(id, Some(&r.host), kind, detail, r.at);
        return Ok(Applied::Yes {
            settle: false,
            started: Some(r.launch_setting.clone()),
        });
    }
    plan.event(id, Some(&r.host), kind, detail, r.at);
    Ok(Applied::Yes {
        settle,
        started: None,
    })
}

/// Sets a host row's counters to what its node reported, never lower than they are: a row is
/// one dispatch, whose counters only grow, and two replicas may commit the heartbeats of one
/// node in either order (a late older one must not take back what the chart already counted).
fn with_counters(
    update: sea_orm::UpdateMany<activation_hosts::Entity>,
    c: &am_domain::wire::Counters,
) -> sea_orm::UpdateMany<activation_hosts::Entity> {
    use activation_hosts::Column as C;
    let grown = |col: C, v: u64| {
        let v = i64::try_from(v).unwrap_or(i64::MAX);
        Expr::case(sea_orm::sea_query::ExprTrait::lt(Expr::col(col), v), v).finally(Expr::col(col))
    };
    update
        .col_expr(C::Processed, grown(C::Processed, c.processed).into())
        .col_expr(C::Failed, grown(C::Failed, c.failed).into())
        .col_expr(C::Retried, grown(C::Retried, c.retried).into())
        .col_expr(
            C::DeadLettered,
            grown(C::DeadLettered, c.dead_lettered).into(),
        )
}
