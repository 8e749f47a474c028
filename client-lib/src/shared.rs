//! Everything the node's tasks share: who the node is, its agents, its link to the broker and
//! outbox, what runs now, each launch setting's counters and breaker, and the reports every
//! part sends. The runtime starts and stops it; the consumers read and count through it.

use crate::{
    AgentError, AgentSpec, BrokerAddresses, Classifier, Topology,
    agent::Registered,
    breaker::{Breaker, Trip},
    broker::Link,
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

/// One activation running (or about to run) on this node.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) id: ActivationId,
    /// The token it was launched with ([`Interrupt::up_to_token`](crate::wire::Interrupt)).
    pub(crate) fencing_token: u64,
    /// The activation's own counters (also in its [`RunInfo`]).
    pub(crate) tally: Arc<Tally>,
    pub(crate) cancel: CancellationToken,
    /// Cancelled when the activation has fully ended (reports sent, message returned).
    pub(crate) finished: CancellationToken,
}

/// Counts one event of `info`'s activation in its own counters and its launch setting's.
pub(crate) fn count(stats: &LsStats, info: &RunInfo, pick: fn(&Tally) -> &AtomicU64) {
    pick(&stats.tally).fetch_add(1, Ordering::Relaxed);
    pick(&info.tally).fetch_add(1, Ordering::Relaxed);
}

/// Counters and breaker of one launch setting on this node.
#[derive(Debug)]
pub(crate) struct LsStats {
    pub(crate) tally: Tally,
    pub(crate) breaker: Mutex<Breaker>,
}

impl LsStats {
    pub(crate) fn counters(&self) -> Counters {
        self.tally.counters()
    }

    pub(crate) fn breaker(&self) -> MutexGuard<'_, Breaker> {
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
    pub(crate) version: String,
    pub(crate) brokers: BrokerAddresses,
    pub(crate) topology: Topology,
    pub(crate) capacity: u32,
    pub(crate) heartbeat_every: Duration,
    pub(crate) interrupt_grace: Duration,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) default_idle_timeout: Duration,
    pub(crate) agents: HashMap<String, (AgentSpec, Registered)>,
    pub(crate) classifiers: Vec<Classifier>,
    pub(crate) link: Link,
    pub(crate) outbox: Arc<Outbox>,
    pub(crate) running: Mutex<HashMap<String, Vec<Running>>>,
    pub(crate) stats: Mutex<HashMap<String, Arc<LsStats>>>,
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) quarantined: AtomicU64,
    /// Stops taking commands.
    pub(crate) stop_intake: CancellationToken,
    /// Parent of every activation's cancellation.
    pub(crate) runs: CancellationToken,
    /// Stops the connection, the outbox and heartbeats: the very last step.
    pub(crate) stop_io: CancellationToken,
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

impl Shared {
    pub(crate) fn running(&self) -> MutexGuard<'_, HashMap<String, Vec<Running>>> {
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

    pub(crate) fn publication(&self) -> Publication {
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
