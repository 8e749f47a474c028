//! The node's life cycle (start, graceful shutdown, abort) and its tasks: the control loop,
//! heartbeats, launches. What they share is [`Shared`](crate::shared::Shared).

mod control;
mod launch;

use crate::{BrokerAddresses, NodeBuilder, broker, outbox::Outbox, shared::Shared};
use std::{
    collections::HashMap,
    sync::{Arc, Mutex, atomic::AtomicU64},
    time::Duration,
};
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

pub(crate) fn start(b: NodeBuilder, brokers: BrokerAddresses) -> Arc<Shared> {
    let (tx, link) = broker::link();
    let brokers = brokers.spread_by(&format!("{}@{}", b.application, b.host));
    let shared = Arc::new(Shared {
        application: b.application,
        host: b.host,
        version: b.version,
        brokers,
        topology: b.topology,
        capacity: b.capacity,
        heartbeat_every: b.heartbeat_every,
        interrupt_grace: b.interrupt_grace,
        shutdown_timeout: b.shutdown_timeout,
        default_idle_timeout: b.default_idle_timeout,
        agents: b
            .agents
            .into_iter()
            .map(|(spec, agent)| (spec.id.clone(), (spec, agent)))
            .collect(),
        classifiers: b.classifiers,
        link,
        outbox: Arc::new(Outbox::new(b.outbox_capacity)),
        running: Mutex::new(HashMap::new()),
        stats: Mutex::new(HashMap::new()),
        slots: Arc::new(Semaphore::new(b.capacity as usize)),
        quarantined: AtomicU64::new(0),
        stop_intake: CancellationToken::new(),
        runs: CancellationToken::new(),
        stop_io: CancellationToken::new(),
        ready: watch::Sender::new(false),
    });
    let span = tracing::info_span!("node", application = %shared.application, host = %shared.host);
    tokio::spawn(control::supervise(Arc::clone(&shared), tx).instrument(span.clone()));
    tokio::spawn(control::control_loop(Arc::clone(&shared)).instrument(span.clone()));
    tokio::spawn(control::heartbeat_loop(Arc::clone(&shared)).instrument(span.clone()));
    let outbox = Arc::clone(&shared.outbox);
    let (link, queue, stop) = (
        shared.link.clone(),
        shared.topology.names().reports_queue(),
        shared.stop_io.clone(),
    );
    tokio::spawn(async move { outbox.run(link, queue, stop).await }.instrument(span));
    shared
}

pub(crate) async fn shutdown(shared: &Arc<Shared>) {
    tracing::info!(host = %shared.host, "node shutting down");
    shared.stop_intake.cancel();
    shared.runs.cancel();
    let finished: Vec<CancellationToken> = shared
        .running()
        .values()
        .flatten()
        .map(|r| r.finished.clone())
        .collect();
    let all = futures_util::future::join_all(finished.iter().map(|f| f.cancelled()));
    if tokio::time::timeout(shared.shutdown_timeout, all)
        .await
        .is_err()
    {
        tracing::warn!("activations still running at the end of the shutdown timeout");
    }
    if !shared.outbox.flush(Duration::from_secs(5)).await {
        tracing::warn!(
            pending = shared.outbox.pending(),
            "reports not confirmed at shutdown"
        );
    }
    shared.stop_io.cancel();
    shared.ready.send_replace(false);
}

pub(crate) async fn abort(shared: &Arc<Shared>) {
    // Close first so that nothing in flight gets acknowledged on the way out.
    shared.stop_io.cancel();
    shared.stop_intake.cancel();
    if let Some(conn) = shared.link.current() {
        crate::broker::close(&conn, 320, "node aborted").await;
    }
    shared.runs.cancel();
    shared.ready.send_replace(false);
}
