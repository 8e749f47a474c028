//! The node's shared state and life cycle (start, graceful shutdown, abort), per launch
//! setting counters and breakers, and the reports every part sends.

mod control;
mod launch;

pub(crate) use launch::with_grace;

use crate::{
    AgentError, AgentSpec, BrokerAddresses, Classifier, NodeBuilder, Topology,
    agent::Registered,
    breaker::{Breaker, Trip},
    broker::{self, Link},
    context::RunInfo,
    outbox::Outbox,
    tally::Tally,
};
use am_domain::wire::{
    self, ActivationId, BreakerTripped, Counters, FailureReport, Publication, ToManager,
    replay::ReplayToken,
};
use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// One activation running (or about to run) on this node.
#[derive(Debug)]
struct Running {
    id: ActivationId,
    /// The token it was launched with ([`Interrupt::up_to_token`](crate::wire::Interrupt)).
    fencing_token: u64,
    /// The activation's own counters (also in its [`RunInfo`]).
    tally: Arc<Tally>,
    cancel: CancellationToken,
    /// Cancelled when the activation has fully ended (reports sent, message returned).
    finished: CancellationToken,
}

/// Counts one event of `info`'s activation in its own counters and its launch setting's.
pub(crate) fn count(stats: &LsStats, info: &RunInfo, pick: fn(&Tally) -> &AtomicU64) {
    pick(&stats.tally).fetch_add(1, Ordering::Relaxed);
    pick(&info.tally).fetch_add(1, Ordering::Relaxed);
}

/// Counters and breaker of one launch setting on this node.
#[derive(Debug)]
pub(crate) struct LsStats {
    tally: Tally,
    breaker: Mutex<Breaker>,
}

impl LsStats {
    fn counters(&self) -> Counters {
        self.tally.counters()
    }

    fn breaker(&self) -> MutexGuard<'_, Breaker> {
        self.breaker.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn success(&self) {
        self.breaker().success();
    }

    /// A failure of a standalone run (`data_message` `None`) or of the data message with
    /// that identity (see [`crate::breaker`]).
    pub(crate) fn failure(&self, err: &AgentError, data_message: Option<u64>) -> Option<Trip> {
        self.breaker()
            .failure(err.error_type(), err.message(), data_message)
    }
}

/// Everything the node's tasks share.
pub(crate) struct Shared {
    pub(crate) application: String,
    pub(crate) host: String,
    version: String,
    brokers: BrokerAddresses,
    pub(crate) topology: Topology,
    capacity: u32,
    heartbeat_every: Duration,
    pub(crate) interrupt_grace: Duration,
    shutdown_timeout: Duration,
    pub(crate) default_idle_timeout: Duration,
    agents: HashMap<String, (AgentSpec, Registered)>,
    classifiers: Vec<Classifier>,
    pub(crate) link: Link,
    pub(crate) outbox: Arc<Outbox>,
    running: Mutex<HashMap<String, Vec<Running>>>,
    stats: Mutex<HashMap<String, Arc<LsStats>>>,
    slots: Arc<Semaphore>,
    quarantined: AtomicU64,
    /// Stops taking commands.
    stop_intake: CancellationToken,
    /// Parent of every activation's cancellation.
    runs: CancellationToken,
    /// Stops the connection, the outbox and heartbeats: the very last step.
    stop_io: CancellationToken,
    pub(crate) ready: watch::Sender<bool>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("application", &self.application)
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

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
        let _ = conn.close(320, "node aborted".into()).await;
    }
    shared.runs.cancel();
    shared.ready.send_replace(false);
}

impl Shared {
    fn running(&self) -> MutexGuard<'_, HashMap<String, Vec<Running>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn stats(&self, launch_setting: &str) -> Arc<LsStats> {
        let mut map = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(map.entry(launch_setting.to_owned()).or_insert_with(|| {
            Arc::new(LsStats {
                tally: Tally::default(),
                breaker: Mutex::new(Breaker::new(am_domain::catalog::DEFAULT_FAILURE_THRESHOLD)),
            })
        }))
    }

    fn publication(&self) -> Publication {
        let mut agents: Vec<_> = self
            .agents
            .values()
            .map(|(spec, agent)| spec.publish(agent.input()))
            .collect();
        agents.sort_by(|a, b| a.id.cmp(&b.id));
        Publication {
            application: self.application.clone(),
            host: self.host.clone(),
            version: self.version.clone(),
            capacity: self.capacity,
            protocol: wire::PROTOCOL_VERSION,
            agents,
            classifiers: self.classifiers.iter().map(Classifier::publish).collect(),
        }
    }

    pub(crate) fn report_failure(
        &self,
        info: &RunInfo,
        err: &AgentError,
        attempt: u32,
        data_message_id: Option<String>,
        disposition: Option<&str>,
        replay: Option<ReplayToken>,
    ) {
        tracing::warn!(
            error_type = err.error_type(),
            error = err.message(),
            attempt,
            disposition,
            "agent failed"
        );
        self.outbox.push(&ToManager::Failure(FailureReport {
            application: self.application.clone(),
            host: self.host.clone(),
            activation_id: info.activation_id.clone(),
            launch_setting: info.launch_setting.clone(),
            agent: info.agent.clone(),
            error_type: err.error_type().to_owned(),
            message: err.message().to_owned(),
            details: err.details().to_owned(),
            data_message_id,
            attempt,
            temporary: err.is_temporary(),
            disposition: disposition.map(str::to_owned),
            at: chrono::Utc::now(),
            report_id: Some(uuid::Uuid::new_v4().to_string()),
            replay,
        }));
    }

    /// A replayed dead letter was processed: the manager shows the replay's outcome.
    pub(crate) fn report_replay_processed(&self, info: &RunInfo, replay: ReplayToken) {
        self.outbox
            .push(&ToManager::ReplayProcessed(wire::replay::ReplayProcessed {
                application: self.application.clone(),
                host: self.host.clone(),
                activation_id: info.activation_id.clone(),
                launch_setting: info.launch_setting.clone(),
                replay,
                at: chrono::Utc::now(),
            }));
    }

    pub(crate) fn report_trip(&self, info: &RunInfo, trip: Trip) {
        tracing::warn!(
            consecutive = trip.consecutive,
            same_type = trip.same_type,
            "breaker tripped"
        );
        self.outbox.push(&ToManager::BreakerTripped(BreakerTripped {
            application: self.application.clone(),
            host: self.host.clone(),
            activation_id: info.activation_id.clone(),
            launch_setting: info.launch_setting.clone(),
            consecutive_failures: trip.consecutive,
            same_type_failures: trip.same_type,
            last_errors: trip.last_errors,
            at: chrono::Utc::now(),
        }));
    }
}
