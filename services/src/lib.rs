//! The manager's persistence and services.
//!
//! Both front doors of the manager — the JSON HTTP API and the Leptos server functions of the
//! admin UI — call the functions here, so every write goes through the same validation, the
//! same transaction and the same audit entry whichever door it came through.

pub mod accounts;
pub mod activations;
pub mod audit;
pub mod bulk;
pub mod catalog;
pub mod classifiers;
pub mod dashboard;
pub mod db;
pub mod dead_letters;
pub mod entity;
pub mod error;
pub mod failures;
pub mod filters;
pub mod health;
pub mod login_limit;
pub mod ls_overview;
pub mod notifications;
pub mod operations;
pub mod quarantine;
pub mod recovery;
pub mod registry;
pub mod retention;
pub mod run_status;
pub mod runtime;
pub mod search;
mod sql;
pub mod status;
pub mod stream_health;
#[cfg(feature = "testing")]
pub mod testing;
pub mod throughput;
pub mod topology;
pub mod trace_context;

pub use accounts::{AuthMethod, Principal};
pub use error::ServiceError;

use sea_orm::DatabaseConnection;
use std::sync::Arc;

/// Handles every service function needs; cheap to clone.
#[derive(Clone)]
pub struct Services {
    pub db: DatabaseConnection,
    pub broker: health::BrokerStatus,
    pub login_limiter: Arc<login_limit::LoginLimiter>,
    pub settings: Arc<Settings>,
    /// The runtime's tunables and counters (dispatch from *Run now*, the runtime tasks).
    pub runtime: Arc<runtime::RuntimeConfig>,
    /// Where started bulk operations are queued (the server's job worker).
    pub operations: Arc<dyn operations::OperationQueue>,
    /// What the broker's queues hold, sampled by this replica's reconciler task.
    pub broker_depths: topology::DepthsHandle,
}

/// Tunables of the services, read once at start-up by the binary.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long a login session lives without being used (`AM_SESSION_IDLE`).
    pub session_ttl: chrono::Duration,
    /// How long a login session lives at most, however busy (`AM_SESSION_MAX_AGE`).
    pub session_max_age: chrono::Duration,
    /// A node that has not been heard from for this long is lost: nothing is dispatched to it.
    pub node_timeout: chrono::Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            session_ttl: chrono::Duration::hours(12),
            session_max_age: chrono::Duration::days(7),
            // Three missed heartbeats at the client library's default interval of 10 s.
            node_timeout: chrono::Duration::seconds(30),
        }
    }
}

impl Services {
    pub fn new(db: DatabaseConnection, broker: health::BrokerStatus, settings: Settings) -> Self {
        Self {
            db,
            broker,
            login_limiter: Arc::new(login_limit::LoginLimiter::default()),
            runtime: Arc::new(runtime::RuntimeConfig {
                node_timeout: settings.node_timeout,
                ..runtime::RuntimeConfig::new("am")
            }),
            settings: Arc::new(settings),
            operations: Arc::new(operations::NoQueue),
            broker_depths: topology::DepthsHandle::default(),
        }
    }

    /// Queues started operations here instead of leaving them for a worker to find.
    pub fn with_operation_queue(mut self, queue: Arc<dyn operations::OperationQueue>) -> Self {
        self.operations = queue;
        self
    }

    /// Uses this runtime configuration (broker prefix, timeouts) instead of the default.
    pub fn with_runtime(mut self, runtime: runtime::RuntimeConfig) -> Self {
        self.runtime = Arc::new(runtime);
        self
    }
}
