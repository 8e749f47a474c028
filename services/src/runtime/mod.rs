//! The manager runtime's state in the database: activations, their dispatch to nodes, reports,
//! the breaker policy, the watchdog and the scheduler's fires.
//!
//! Everything here is a database transition that is safe with several manager replicas on one
//! database: rows change by compare-and-set on their expected state, a fire is unique per
//! (group, fire time), and every broker command is written to the outbox in the transaction of
//! the change that needs it. The broker side (relay, report consumer, timers) lives in the
//! server crate and only moves bytes.

pub mod activate;
pub mod ahead;
pub mod breaker;
mod ending;
pub mod fires;
pub mod gauges;
pub mod groups;
mod heartbeats;
mod host_rows;
pub mod interrupt;
mod locks;
mod members;
pub mod metrics;
mod observe;
pub mod outbox;
mod overlap;
mod plan;
pub mod reports;
mod resolve;
pub mod run;
pub mod schedule;
pub mod settle;
mod starts;
mod stopping;
pub mod sweep;
pub mod watchdog;

pub use metrics::Metrics;

use am_domain::wire::names::Names;
use std::sync::Arc;

/// Tunables of the runtime, shared by every part of it.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Broker names (prefix) the nodes use.
    pub names: Names,
    /// A node not heard from for this long gets nothing dispatched.
    pub node_timeout: chrono::Duration,
    /// An activation waits this long for a live node before it fails.
    pub wait_timeout: chrono::Duration,
    /// A stream launch setting whose activation ended is started again after this pause, so a
    /// node that refuses it at once is not flooded.
    pub stream_restart_delay: chrono::Duration,
    /// A fire found late by more than this on start-up is a misfire (handled per group policy);
    /// a later but smaller lag just fires.
    pub misfire_threshold: chrono::Duration,
    /// How notifications are delivered (docs/notifications.md).
    pub notify: NotifySettings,
    pub metrics: Arc<Metrics>,
}

/// Tunables of notification delivery.
#[derive(Debug, Clone)]
pub struct NotifySettings {
    /// The manager's address as operators reach it (`AM_PUBLIC_URL`), put before each
    /// notification's link; without it links are paths.
    pub public_url: Option<String>,
    /// A notification not delivered this long after it was raised (or resent) is given up
    /// (`AM_NOTIFY_GIVE_UP`, default 24 h).
    pub give_up: chrono::Duration,
    /// The wait after a failed try (10 s), doubling with each, at most 10 minutes.
    pub retry_first: chrono::Duration,
    /// How long one delivery may take, connection included (10 s).
    pub timeout: std::time::Duration,
    /// At most this many deliveries per endpoint and minute, per manager process (60); the
    /// rest wait their turn.
    pub per_endpoint_per_minute: u32,
    /// The relay e-mail notifications go through; without it they fail with a last error
    /// that says so.
    pub smtp: Option<SmtpSettings>,
}

/// The SMTP relay of e-mail notifications (`AM_SMTP_URL`, `AM_SMTP_FROM`).
#[derive(Clone, PartialEq, Eq)]
pub struct SmtpSettings {
    /// `smtp://host:port` (plain; `?tls=required` for STARTTLS) or `smtps://host` (TLS),
    /// with `user:password@` when the relay wants a login.
    pub url: String,
    /// The sender, e.g. `Agent Manager <agent-manager@example.com>`.
    pub from: String,
}

impl std::fmt::Debug for SmtpSettings {
    /// Leaves the password out: settings are logged at start-up.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = crate::db::redact_url(&self.url);
        f.debug_struct("SmtpSettings")
            .field("url", &url)
            .field("from", &self.from)
            .finish()
    }
}

impl Default for NotifySettings {
    fn default() -> Self {
        Self {
            public_url: None,
            give_up: chrono::Duration::hours(24),
            retry_first: chrono::Duration::seconds(10),
            timeout: std::time::Duration::from_secs(10),
            per_endpoint_per_minute: 60,
            smtp: None,
        }
    }
}

impl RuntimeConfig {
    pub fn new(prefix: &str) -> Self {
        Self {
            names: Names::new(prefix),
            node_timeout: chrono::Duration::seconds(30),
            wait_timeout: chrono::Duration::minutes(10),
            stream_restart_delay: chrono::Duration::seconds(5),
            misfire_threshold: chrono::Duration::seconds(60),
            notify: NotifySettings::default(),
            metrics: Arc::new(Metrics::default()),
        }
    }
}

pub(crate) use crate::sql::CHUNK;

pub(crate) use crate::db::begin_write;
