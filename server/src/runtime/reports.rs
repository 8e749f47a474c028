//! The report consumer: reads node reports from the reports queue in batches, applies each
//! batch in one transaction, runs the breaker policy for the trips it contained, and only then
//! acknowledges it to the broker: nothing acknowledged is lost, a trip included. A batch that
//! comes again (not acknowledged, or acknowledged and lost) is applied again idempotently:
//! failure reports by their id, trips by their row, the policy because it is.

use super::{batches::Batches, hearing::Hearing};
use crate::broker::Link;
use agent_client::telemetry::TraceHeaders;
use am_domain::wire::{self, ToManager};
use am_services::runtime::{Metrics, RuntimeConfig, breaker, reports};
use lapin::{
    message::Delivery,
    options::{BasicAckOptions, BasicNackOptions},
};
use sea_orm::DatabaseConnection;
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// Reports per transaction, and how long a batch may wait to fill.
const BATCH: usize = 1000;
const LINGER: Duration = Duration::from_millis(20);

pub async fn run(
    db: DatabaseConnection,
    cfg: Arc<RuntimeConfig>,
    link: Link,
    hearing: Hearing,
    stop: CancellationToken,
) {
    let queue = cfg.names.reports_queue();
    let batches = Batches {
        queue: &queue,
        tag: "agent-manager-reports",
        size: BATCH,
        linger: LINGER,
        hearing: Some(&hearing),
    };
    batches
        .run(&link, &stop, |batch| {
            let (db, cfg, stop, hearing) = (&db, &cfg, &stop, &hearing);
            async move { handle(db, cfg, &batch, hearing, stop).await }
        })
        .await;
}

/// Applies reports one at a time; a report that still fails is logged and dropped.
async fn one_by_one(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    decoded: &[ToManager],
) -> reports::Outcome {
    let mut total = reports::Outcome::default();
    for r in decoded {
        match reports::apply(db, cfg, std::slice::from_ref(r), chrono::Utc::now()).await {
            Ok(o) => {
                total.applied += o.applied;
                total.stale += o.stale;
                total.ignored += o.ignored;
                total.trips.extend(o.trips);
            }
            Err(e) => {
                Metrics::inc(&cfg.metrics.malformed_reports);
                tracing::error!(error = %e, report = ?r, "report cannot be stored; dropped");
            }
        }
    }
    total
}

/// Applies one batch until it commits, then acknowledges it. `false` when stopping.
#[tracing::instrument(skip_all, fields(reports = batch.len()))]
async fn handle(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    batch: &[Delivery],
    hearing: &Hearing,
    stop: &CancellationToken,
) -> bool {
    let mut decoded = Vec::with_capacity(batch.len());
    let span = tracing::Span::current();
    for d in batch {
        // The batch's span links to the spans on the nodes that sent its reports.
        TraceHeaders::from_amqp(d.properties.headers().as_ref()).link_from(&span);
        match wire::decode::<ToManager>(&d.data) {
            Ok(r) => decoded.push(r),
            Err(e) => {
                // A report no version of us can read would block the queue forever: log it
                // with enough to find the sender, and drop it.
                Metrics::inc(&cfg.metrics.malformed_reports);
                tracing::warn!(error = %e, bytes = d.data.len(), "unreadable report dropped");
            }
        }
    }
    let mut backoff = Duration::from_millis(200);
    let mut failures = 0;
    let outcome = loop {
        match reports::apply(db, cfg, &decoded, chrono::Utc::now()).await {
            Ok(o) => {
                hearing.on();
                break o;
            }
            Err(e) if failures >= 2 && db.ping().await.is_ok() => {
                // The database is up, yet the batch keeps failing: one report in it is the
                // cause. Apply them one by one so only that one is dropped (and logged). Also
                // a batch of one: the bad report alone in its batch would block the queue.
                tracing::warn!(error = %e, "a report batch keeps failing; applying its reports one by one");
                break one_by_one(db, cfg, &decoded).await;
            }
            Err(e) => {
                // Reports not stored are heartbeats not heard.
                hearing.off();
                failures += 1;
                tracing::warn!(error = %e, retry_in = ?backoff, "cannot store reports; retrying");
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = stop.cancelled() => {
                        // Not acknowledged: the broker redelivers them to the next consumer.
                        if let Some(last) = batch.last() {
                            let _ = last.nack(BasicNackOptions { multiple: true, requeue: true }).await;
                        }
                        return false;
                    }
                }
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        }
    };
    // The counter `reports` counts them too (in `apply`); this keeps the rate of the last seconds.
    cfg.metrics
        .report_rate
        .record(u64::try_from(outcome.applied).unwrap_or(u64::MAX));
    if !apply_trips(db, cfg, &outcome.trips, stop).await {
        // Stored, but a trip's policy did not run: the broker redelivers the batch to the next
        // consumer, which stores nothing twice and runs the policy.
        if let Some(last) = batch.last() {
            let _ = last
                .nack(BasicNackOptions {
                    multiple: true,
                    requeue: true,
                })
                .await;
        }
        return false;
    }
    if let Some(last) = batch.last()
        && let Err(e) = last.ack(BasicAckOptions { multiple: true }).await
    {
        // Committed but not acknowledged: they come again and are applied idempotently.
        tracing::warn!(error = %e, "reports stored but not acknowledged");
    }
    if outcome.stale > 0 {
        tracing::info!(
            stale = outcome.stale,
            "reports with an outdated fencing token ignored"
        );
    }
    true
}

/// Runs the breaker policy for each trip, retrying while the database fails; `false` when
/// stopped first. A trip the policy refuses (its launch setting is gone) is logged and left.
async fn apply_trips(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    trips: &[wire::BreakerTripped],
    stop: &CancellationToken,
) -> bool {
    for trip in trips {
        let mut backoff = Duration::from_millis(200);
        loop {
            match breaker::apply_trip(db, cfg, trip, chrono::Utc::now()).await {
                Ok(_) => break,
                Err(e) if e.is_client_error() => {
                    tracing::warn!(error = %e, launch_setting = %trip.launch_setting, "breaker policy refused the trip");
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, launch_setting = %trip.launch_setting, retry_in = ?backoff,
                        "cannot apply the breaker policy; retrying before acknowledging");
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        () = stop.cancelled() => return false,
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(10));
                }
            }
        }
    }
    true
}
