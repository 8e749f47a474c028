//! The settings the manager runs with, as `Config::load` gives them, and its error.

use crate::allowed_hosts::AllowedHosts;
use std::net::SocketAddr;

pub const DEFAULT_AMQP_URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
pub const DEFAULT_LISTEN: &str = "127.0.0.1:3000";

#[derive(Debug, Clone)]
pub struct Config {
    pub database: DatabaseConfig,
    pub broker: BrokerConfig,
    pub runtime: RuntimeTunables,
    pub http: HttpConfig,
    pub admin: AdminConfig,
}

#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    pub url: String,
}

#[derive(Debug, Clone)]
pub struct BrokerConfig {
    pub url: String,
    /// Prefix of the broker names (`AM_PREFIX`, default `am`); nodes must use the same one.
    pub prefix: String,
    /// Queues expire when unused this long (`AM_QUEUE_EXPIRY`): a throw-away topology for tests
    /// and demos only.
    pub queue_expiry: Option<std::time::Duration>,
}

/// Runtime tunables that are not part of the catalog (`AM_NODE_TIMEOUT`, `AM_WAIT_TIMEOUT`,
/// `AM_MISFIRE_THRESHOLD`, as durations like `30s` or `5m`; `AM_FAILURE_RETENTION_DAYS`, in
/// whole days).
#[derive(Debug, Clone)]
pub struct RuntimeTunables {
    pub node_timeout: std::time::Duration,
    pub wait_timeout: std::time::Duration,
    pub misfire_threshold: std::time::Duration,
    /// Failure logs older than this before a launch setting's last activation, when that
    /// failed or was interrupted, are deleted (docs/concepts.md, Failure logs; default 30 days).
    pub failure_retention: std::time::Duration,
    /// A notification not delivered this long after it was raised is given up
    /// (`AM_NOTIFY_GIVE_UP`, default 24 h; docs/notifications.md).
    pub notify_give_up: std::time::Duration,
    /// The relay of e-mail notifications (`AM_SMTP_URL`, `AM_SMTP_FROM`); none by default.
    pub smtp: Option<am_services::runtime::SmtpSettings>,
}

/// The sender of e-mail notifications when `AM_SMTP_FROM` is not set.
pub const DEFAULT_SMTP_FROM: &str = "Agent Manager <agent-manager@localhost>";

/// Longest `AM_FAILURE_RETENTION_DAYS` (100 years): longer means "keep", and a bound keeps the
/// date arithmetic far from overflowing.
pub const MAX_FAILURE_RETENTION_DAYS: u64 = 36_500;
pub(crate) const DEFAULT_FAILURE_RETENTION_DAYS: u64 = 30;

#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub listen: SocketAddr,
    /// Origins allowed on state-changing browser requests besides the request's own host,
    /// e.g. `https://manager.example.com` behind a reverse proxy.
    pub allowed_origins: Vec<String>,
    /// Host names the manager answers to besides IP literals and `localhost`
    /// (`AM_ALLOWED_HOSTS` and the hosts of `allowed_origins`).
    pub allowed_hosts: AllowedHosts,
    /// Mark the session cookie `Secure` (set when served over HTTPS).
    pub secure_cookies: bool,
    /// Serve `/metrics` without a token (`AM_METRICS_PUBLIC`), for a scraper on a trusted
    /// network; otherwise it needs a token or session of any role.
    pub metrics_public: bool,
    /// The manager's address as operators reach it (`AM_PUBLIC_URL`, e.g.
    /// `https://manager.example.com`): notifications link to pages under it.
    pub public_url: Option<String>,
    /// A login session not used this long ends (`AM_SESSION_IDLE`, default 12 h).
    pub session_idle: std::time::Duration,
    /// A login session ends this long after login however busy (`AM_SESSION_MAX_AGE`,
    /// default 7 days).
    pub session_max_age: std::time::Duration,
}

#[derive(Clone)]
pub struct AdminConfig {
    /// Password of the first admin; generated and printed once when unset.
    pub initial_password: Option<String>,
}

impl std::fmt::Debug for AdminConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminConfig")
            .field(
                "initial_password",
                &self.initial_password.as_ref().map(|_| "***"),
            )
            .finish()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{key}: {message}")]
    Invalid { key: String, message: String },
    #[error("cannot read the configuration file {path}: {message}")]
    File { path: String, message: String },
}
