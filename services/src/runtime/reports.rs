//! Node reports applied to the database in batches: one transaction per batch, every state
//! change a compare-and-set on the expected state and the fencing token, failure reports
//! inserted together. The consumer acknowledges the batch to the broker only after commit.

use super::{
    Metrics, RuntimeConfig, ending, heartbeats,
    host_rows::{WorkTimeouts, with_counters},
    locks, observe,
    plan::Plan,
    settle,
};
use crate::status;
use crate::{
    dead_letters::replay,
    entity::{activation_hosts, activations, breaker_trips, failure_logs},
    error::ServiceResult,
    failures::error_types,
    recovery, registry,
    throughput::Grown,
};
use am_domain::status::EventKind;
use am_domain::{
    recovery::ReplayResult,
    wire::{ActivationEvent, ActivationReport, BreakerTripped, FailureReport, ToManager},
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set,
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DatabaseTransaction, EntityTrait,
    QueryFilter, QuerySelect,
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
    let mut batch = Batch::default();
    for r in reports {
        if let ToManager::Publication(p) = r {
            match registry::record_publication(db, p, now).await {
                Ok(()) => batch.out.applied += 1,
                // A publication the catalog cannot take must not block the reports behind it.
                Err(e) if e.is_client_error() => {
                    tracing::warn!(application = %p.application, host = %p.host, error = %e,
                        "publication refused");
                    batch.out.ignored += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }
    let txn = super::begin_write(db).await?;
    locks::reports(&txn).await?;
    for r in reports {
        batch.take(&txn, cfg, r, now).await?;
    }
    let out = batch.finish(&txn, cfg, now).await?;
    txn.commit().await?;
    Metrics::add(&cfg.metrics.reports, out.applied as u64);
    Ok(out)
}

/// What one transaction's reports gather before it is written: each kind of report adds to it
/// ([`Batch::take`]), and [`Batch::finish`] writes it all in a fixed order.
#[derive(Default)]
struct Batch {
    out: Outcome,
    plan: Plan,
    failures: Vec<failure_logs::ActiveModel>,
    seen: error_types::Seen,
    to_settle: Vec<Uuid>,
    running: BTreeSet<String>,
    /// Runs whose first start the batch recorded, and when (for the start delay metric).
    first_starts: Vec<(Uuid, DateTime<Utc>)>,
    timeouts: WorkTimeouts,
    replays: Vec<replay::Reported>,
    recoveries: recovery::Tally,
    grown: Grown,
}

impl Batch {
    async fn take(
        &mut self,
        txn: &DatabaseTransaction,
        cfg: &RuntimeConfig,
        r: &ToManager,
        now: DateTime<Utc>,
    ) -> ServiceResult<()> {
        match r {
            ToManager::Publication(_) => {}
            ToManager::Heartbeat(hb) => {
                heartbeats::apply(
                    txn,
                    cfg,
                    &mut self.plan,
                    &mut self.timeouts,
                    &mut self.grown,
                    hb,
                    now,
                )
                .await?;
                self.out.applied += 1;
            }
            ToManager::Activation(a) => self.activation(txn, cfg, a, now).await?,
            ToManager::Failure(f) => self.failure(f),
            ToManager::ReplayProcessed(r) => {
                self.replays.push(replay::Reported {
                    token: r.replay,
                    result: ReplayResult::Processed,
                    error: None,
                    new_dead_letter: None,
                    at: r.at,
                });
                self.out.applied += 1;
            }
            ToManager::BreakerTripped(t) => self.breaker_tripped(txn, cfg, t, now).await?,
        }
        Ok(())
    }

    async fn activation(
        &mut self,
        txn: &DatabaseTransaction,
        cfg: &RuntimeConfig,
        a: &ActivationReport,
        now: DateTime<Utc>,
    ) -> ServiceResult<()> {
        let applied = activation_event(
            txn,
            &mut self.plan,
            &mut self.timeouts,
            &mut self.grown,
            a,
            now,
        )
        .await?;
        match applied {
            Applied::Yes {
                settle,
                started,
                first_start,
            } => {
                self.out.applied += 1;
                if let (Some(at), Some(id)) = (first_start, parse(&a.activation_id.0)) {
                    self.first_starts.push((id, at));
                }
                self.running.extend(started);
                if settle {
                    self.to_settle
                        .push(parse(&a.activation_id.0).unwrap_or_default());
                }
            }
            Applied::Stale { launch_setting } => {
                self.out.stale += 1;
                Metrics::inc(&cfg.metrics.stale_reports);
                if let Some(ls) = launch_setting {
                    self.recoveries.add(&ls, recovery::kind::STALE_REPORT);
                }
            }
            Applied::Ignored => self.out.ignored += 1,
        }
        Ok(())
    }

    fn failure(&mut self, f: &FailureReport) {
        let Some(activation) = parse(&f.activation_id.0) else {
            self.out.ignored += 1;
            return;
        };
        self.seen.note(&f.launch_setting, &f.error_type, f.at);
        self.failures.push(failure_logs::ActiveModel {
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
            self.replays.push(replay::Reported {
                token,
                result: ReplayResult::of_disposition(f.disposition.as_deref()),
                error: Some(format!("{}: {}", f.error_type, f.message)),
                new_dead_letter: None,
                at: f.at,
            });
        }
        self.out.applied += 1;
    }

    /// Records a trip once (the first delivery), and hands every delivery to the policy.
    async fn breaker_tripped(
        &mut self,
        txn: &DatabaseTransaction,
        cfg: &RuntimeConfig,
        t: &BreakerTripped,
        now: DateTime<Utc>,
    ) -> ServiceResult<()> {
        let activation = parse(&t.activation_id.0);
        let known = breaker_trips::Entity::find()
            .filter(breaker_trips::Column::LaunchSettingId.eq(t.launch_setting.as_str()))
            .filter(breaker_trips::Column::Host.eq(t.host.as_str()))
            .filter(breaker_trips::Column::ActivationId.eq(activation))
            .one(txn)
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
            .exec_without_returning(txn)
            .await?;
            if let Some(a) = activation {
                self.plan.event(
                    a,
                    Some(&t.host),
                    EventKind::BreakerTripped,
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
        self.out.trips.push(t.clone());
        self.out.applied += 1;
        Ok(())
    }

    /// Writes what the reports gathered, then settles the runs they started or may have ended.
    async fn finish(
        self,
        txn: &DatabaseTransaction,
        cfg: &RuntimeConfig,
        now: DateTime<Utc>,
    ) -> ServiceResult<Outcome> {
        observe::started(txn, &cfg.metrics, &self.first_starts).await?;
        // A report the node gave an id to is stored once, however often it is delivered: the
        // batch may come again after its commit (an acknowledgement lost, the manager stopped).
        let mut stored = 0;
        let mut rows = self.failures.into_iter().peekable();
        while rows.peek().is_some() {
            let chunk: Vec<_> = rows.by_ref().take(super::CHUNK).collect();
            stored += failure_logs::Entity::insert_many(chunk)
                .on_conflict(
                    OnConflict::column(failure_logs::Column::ReportId)
                        .do_nothing()
                        .to_owned(),
                )
                .exec_without_returning(txn)
                .await?;
        }
        Metrics::add(&cfg.metrics.failures, stored);
        self.seen.write(txn).await?;
        replay::record(txn, &self.replays).await?;
        self.plan.write(txn).await?;
        self.recoveries.write(txn).await?;
        self.grown.write(txn, now).await?;
        // The launch settings of every run the batch started or may end, locked at once in the
        // one order (`locks`) before the first is written: written report by report, they would
        // be locked in the order the reports came.
        locks::for_settling(txn, &self.to_settle, self.running.iter().cloned()).await?;
        for ls in &self.running {
            settle::ls_running(txn, ls).await?;
        }
        let mut seen = HashSet::new();
        for id in self.to_settle {
            if seen.insert(id) {
                ending::settle_locked(txn, cfg, id, None, now).await?;
            }
        }
        Ok(self.out)
    }
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
        /// The run's first start (its start report came first): when, by the node's clock.
        first_start: Option<DateTime<Utc>>,
    },
    /// An outdated fencing token: the report of a run the manager moved on from.
    Stale {
        launch_setting: Option<String>,
    },
    Ignored,
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
            (EventKind::Accepted, String::new(), false)
        }
        ActivationEvent::Started => {
            update = update
                .col_expr(C::Status, Expr::value(h::RUNNING))
                .col_expr(C::StartedAt, Expr::value(Some(r.at)))
                .col_expr(C::RecoveryDeadline, Expr::value(Some(deadline)))
                .filter(C::Status.is_in([h::DISPATCHED, h::ACCEPTED]));
            (EventKind::Started, String::new(), false)
        }
        ActivationEvent::Progress { .. } => {
            update = update
                .col_expr(C::LastHeartbeatAt, Expr::value(Some(now)))
                .col_expr(C::RecoveryDeadline, Expr::value(Some(deadline)))
                .filter(C::Status.is_in([h::ACCEPTED, h::RUNNING]));
            (EventKind::Progress, String::new(), false)
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
            (EventKind::Skipped, reason.clone(), true)
        }
        ActivationEvent::Finished {
            result,
            error,
            counters,
        } => {
            let (s, kind) = match result {
                am_domain::wire::ActivationResult::Succeeded => {
                    (h::SUCCEEDED, EventKind::Succeeded)
                }
                am_domain::wire::ActivationResult::Failed => (h::FAILED, EventKind::Failed),
                am_domain::wire::ActivationResult::Interrupted => {
                    (h::INTERRUPTED, EventKind::Interrupted)
                }
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
            (kind, error.clone().unwrap_or_default(), true)
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
                    EventKind::StaleReport,
                    format!("{kind} with fencing token {token} ignored (current {current})"),
                    now,
                );
                Applied::Stale { launch_setting }
            }
            _ => Applied::Ignored,
        });
    }
    if kind == EventKind::Progress {
        return Ok(Applied::Yes {
            settle: false,
            started: None,
            first_start: None,
        });
    }
    if kind == EventKind::Started {
        let first = activations::Entity::update_many()
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
            first_start: (first.rows_affected > 0).then_some(r.at),
        });
    }
    plan.event(id, Some(&r.host), kind, detail, r.at);
    Ok(Applied::Yes {
        settle,
        started: None,
        first_start: None,
    })
}
