//! The manager runtime's moving parts around the database transitions of
//! `am_services::runtime`: the scheduler's timers, the outbox relay, the report consumer, the
//! dead-letter consumer and forwarder, the broker reconciler, the notifier and the watchdog's
//! ticks. Each is a task that survives broker outages (it waits for the next connection) and
//! database errors (it logs and tries again on its next round).

mod batches;
mod dead_letter_consumer;
mod forwarder;
mod hearing;
pub mod notifier;
mod relay;
mod reports;
mod scheduler;
pub mod topology;

use crate::broker::Link;
use agent_client::Topology;
use am_services::{
    Services,
    runtime::watchdog::{self, Listening},
};
use hearing::Hearing;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// How often the watchdog runs.
const WATCHDOG_EVERY: Duration = Duration::from_secs(1);
/// How often the schedule groups' dead man's switches are checked (a window is at least a
/// minute; a check reads every watched group).
const SILENCE_EVERY: Duration = Duration::from_secs(15);

/// Starts every runtime task; they end when `stop` fires.
pub fn spawn(
    services: &Services,
    topology: Topology,
    link: Link,
    stop: CancellationToken,
) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    let cfg = services.runtime.clone();
    let db = services.db.clone();
    tasks.spawn(topology::run(
        db.clone(),
        topology,
        link.clone(),
        stop.clone(),
    ));
    tasks.spawn(topology::sample(
        db.clone(),
        services.broker_depths.clone(),
        link.clone(),
        stop.clone(),
    ));
    tasks.spawn(scheduler::run(db.clone(), cfg.clone(), stop.clone()));
    tasks.spawn(relay::run(
        db.clone(),
        cfg.clone(),
        link.clone(),
        stop.clone(),
    ));
    tasks.spawn(dead_letter_consumer::run(
        db.clone(),
        cfg.clone(),
        link.clone(),
        stop.clone(),
    ));
    tasks.spawn(forwarder::run(db.clone(), link.clone(), stop.clone()));
    tasks.spawn(notifier::run(db.clone(), cfg.clone(), stop.clone()));
    let hearing = Hearing::default();
    tasks.spawn(reports::run(
        db.clone(),
        cfg.clone(),
        link,
        hearing.clone(),
        stop.clone(),
    ));
    let (silence_db, silence_stop) = (db.clone(), stop.clone());
    tasks.spawn(async move {
        let mut every = tokio::time::interval(WATCHDOG_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let node_timeout = cfg.node_timeout.to_std().unwrap_or_default();
        // A start is not a break: nothing to warn about until the replica has listened once.
        let mut was = Listening::NotLongEnough;
        loop {
            tokio::select! {
                _ = every.tick() => {}
                () = stop.cancelled() => return,
            }
            let listening = hearing.listening(node_timeout);
            match (was, listening) {
                (Listening::Long, Listening::NotLongEnough) => tracing::warn!(
                    ?node_timeout,
                    "node reports not read for a whole node timeout (yet): no node is declared \
                     lost and no launch moved by this replica until they are"
                ),
                (Listening::NotLongEnough, Listening::Long) => {
                    tracing::info!("node reports read for a whole node timeout: judging silence");
                }
                _ => {}
            }
            was = listening;
            if let Err(e) = watchdog::tick(&db, &cfg, chrono::Utc::now(), listening).await {
                tracing::warn!(error = %e, "watchdog pass failed; next pass retries");
            }
        }
    });
    tasks.spawn(async move {
        let mut every = tokio::time::interval(SILENCE_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = every.tick() => {}
                () = silence_stop.cancelled() => return,
            }
            if let Err(e) = watchdog::silent_groups(&silence_db, chrono::Utc::now()).await {
                tracing::warn!(error = %e, "dead man's switch check failed; the next one retries");
            }
        }
    });
    tasks
}
