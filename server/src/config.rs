//! Configuration, read once at start-up from the environment and an optional TOML file
//! (`AM_CONFIG`, or `--config`). Environment variables win over the file. Every bad value is
//! reported with the name of the variable (or file key) it came from.

use crate::host_check::AllowedHosts;
use am_services::db::DEFAULT_DATABASE_URL;
use serde::Deserialize;
use std::{net::SocketAddr, path::Path};

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
const DEFAULT_FAILURE_RETENTION_DAYS: u64 = 30;

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

/// The optional file's shape: the same settings as the environment, lower-case, without `AM_`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    database_url: Option<String>,
    amqp_url: Option<String>,
    listen: Option<String>,
    admin_password: Option<String>,
    allowed_origins: Option<Vec<String>>,
    allowed_hosts: Option<Vec<String>>,
    secure_cookies: Option<bool>,
    metrics_public: Option<bool>,
    prefix: Option<String>,
    queue_expiry: Option<String>,
    node_timeout: Option<String>,
    wait_timeout: Option<String>,
    misfire_threshold: Option<String>,
    failure_retention_days: Option<Days>,
    public_url: Option<String>,
    notify_give_up: Option<String>,
    smtp_url: Option<String>,
    smtp_from: Option<String>,
    session_idle: Option<String>,
    session_max_age: Option<String>,
}

/// A number of days in the file: `30` or `"30"` (the environment's spelling).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Days {
    Number(i64),
    Text(String),
}

impl Days {
    fn into_raw(self) -> String {
        match self {
            Days::Number(n) => n.to_string(),
            Days::Text(s) => s,
        }
    }
}

/// Where a raw value came from, for error messages.
struct Source<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    file_path: Option<String>,
}

impl Source<'_> {
    fn get(
        &self,
        env_key: &str,
        file_value: Option<String>,
        file_key: &str,
    ) -> Option<(String, String)> {
        if let Some(v) = (self.env)(env_key) {
            return Some((env_key.to_owned(), v));
        }
        file_value.map(|v| {
            (
                format!(
                    "{} ({file_key})",
                    self.file_path.as_deref().unwrap_or("config file")
                ),
                v,
            )
        })
    }
}

impl Config {
    /// Reads the process environment and the file it points to (or `file` if given).
    pub fn from_env(file: Option<&Path>) -> Result<Config, ConfigError> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Self::load(&env, file)
    }

    pub fn load(
        env: &dyn Fn(&str) -> Option<String>,
        file: Option<&Path>,
    ) -> Result<Config, ConfigError> {
        let file_path = file
            .map(|p| p.display().to_string())
            .or_else(|| env("AM_CONFIG"));
        let file_cfg = match &file_path {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| ConfigError::File {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                toml::from_str::<FileConfig>(&text).map_err(|e| ConfigError::File {
                    path: path.clone(),
                    message: e.to_string(),
                })?
            }
            None => FileConfig::default(),
        };
        let FileConfig {
            database_url,
            amqp_url,
            listen,
            admin_password,
            allowed_origins,
            allowed_hosts,
            secure_cookies,
            metrics_public,
            prefix,
            queue_expiry,
            node_timeout,
            wait_timeout,
            misfire_threshold,
            failure_retention_days,
            public_url,
            notify_give_up,
            smtp_url,
            smtp_from,
            session_idle,
            session_max_age,
        } = file_cfg;
        let src = Source { env, file_path };

        let database = match src.get("AM_DATABASE_URL", database_url, "database_url") {
            Some((key, url)) => {
                if !(url.starts_with("sqlite:")
                    || url.starts_with("postgres://")
                    || url.starts_with("postgresql://"))
                {
                    return Err(ConfigError::Invalid {
                        key,
                        message: format!(
                            "`{}` is not a supported database URL (expected sqlite:... or postgres://...)",
                            am_services::db::redact_url(&url)
                        ),
                    });
                }
                url
            }
            None => DEFAULT_DATABASE_URL.to_owned(),
        };

        // One URL, or a cluster's members as a comma-separated list (agent_client's one rule).
        let broker = match src.get("AM_AMQP_URL", amqp_url, "amqp_url") {
            Some((key, raw)) => {
                agent_client::BrokerAddresses::parse(&raw).map_err(|e| ConfigError::Invalid {
                    key,
                    message: e.to_string(),
                })?;
                raw
            }
            None => DEFAULT_AMQP_URL.to_owned(),
        };

        let listen = match src.get("AM_LISTEN", listen, "listen") {
            Some((key, raw)) => raw.parse::<SocketAddr>().map_err(|_| ConfigError::Invalid {
                key,
                message: format!("`{raw}` is not a socket address (expected e.g. 127.0.0.1:3000 or 0.0.0.0:8080)"),
            })?,
            None => DEFAULT_LISTEN.parse().map_err(|_| ConfigError::Invalid {
                key: "AM_LISTEN".into(),
                message: "built-in default is invalid".into(),
            })?,
        };

        let initial_password = src
            .get("AM_ADMIN_PASSWORD", admin_password, "admin_password")
            .map(|(_, v)| v);
        if initial_password
            .as_ref()
            .is_some_and(|p| p.chars().count() < am_services::accounts::MIN_PASSWORD)
        {
            return Err(ConfigError::Invalid {
                key: "AM_ADMIN_PASSWORD".into(),
                message: format!(
                    "must be at least {} characters",
                    am_services::accounts::MIN_PASSWORD
                ),
            });
        }

        let allowed_origins = match env("AM_ALLOWED_ORIGINS") {
            Some(v) => v
                .split(',')
                .map(|s| s.trim().trim_end_matches('/').to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
            None => allowed_origins.unwrap_or_default(),
        };
        for (i, o) in allowed_origins.iter().enumerate() {
            if url::Url::parse(o).is_err() {
                return Err(ConfigError::Invalid {
                    key: format!("AM_ALLOWED_ORIGINS[{i}]"),
                    message: format!(
                        "`{o}` is not an origin (expected e.g. https://manager.example.com)"
                    ),
                });
            }
        }
        let (hosts_key, host_entries) = match env("AM_ALLOWED_HOSTS") {
            Some(v) => (
                "AM_ALLOWED_HOSTS".to_owned(),
                v.split(',').map(str::to_owned).collect(),
            ),
            None => (
                "allowed_hosts".to_owned(),
                allowed_hosts.unwrap_or_default(),
            ),
        };
        let allowed_hosts = AllowedHosts::parse(host_entries.iter().map(String::as_str))
            .map_err(|e| ConfigError::Invalid {
                key: hosts_key,
                message: e.to_string(),
            })?
            .with_origins(&allowed_origins);
        let secure_cookies = flag(
            "AM_SECURE_COOKIES",
            env("AM_SECURE_COOKIES"),
            secure_cookies,
        )?;
        let metrics_public = flag(
            "AM_METRICS_PUBLIC",
            env("AM_METRICS_PUBLIC"),
            metrics_public,
        )?;

        let duration =
            |found: Option<(String, String)>| -> Result<Option<std::time::Duration>, ConfigError> {
                found
                    .map(|(key, raw)| {
                        humantime::parse_duration(&raw).map_err(|e| ConfigError::Invalid {
                            key,
                            message: format!(
                                "`{raw}` is not a duration (expected e.g. 30s or 5m): {e}"
                            ),
                        })
                    })
                    .transpose()
            };
        let secs = std::time::Duration::from_secs;
        let (prefix_key, prefix) = src
            .get("AM_PREFIX", prefix, "prefix")
            .unwrap_or_else(|| ("AM_PREFIX".to_owned(), "am".to_owned()));
        if am_domain::ids::validate_id(&prefix).is_err() {
            return Err(ConfigError::Invalid {
                key: prefix_key,
                message: format!(
                    "`{prefix}` is not a valid prefix (lower-case letters, digits, . _ -)"
                ),
            });
        }
        let queue_expiry = duration(src.get("AM_QUEUE_EXPIRY", queue_expiry, "queue_expiry"))?;
        let public_url = match src.get("AM_PUBLIC_URL", public_url, "public_url") {
            Some((key, raw)) => match url::Url::parse(&raw) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => {
                    Some(raw.trim_end_matches('/').to_owned())
                }
                _ => {
                    return Err(ConfigError::Invalid {
                        key,
                        message: format!(
                            "`{raw}` is not an http(s) address (expected e.g. https://manager.example.com)"
                        ),
                    });
                }
            },
            None => None,
        };
        let idle_found = src.get("AM_SESSION_IDLE", session_idle, "session_idle");
        let idle_key = idle_found.as_ref().map(|(k, _)| k.clone());
        let session_idle = duration(idle_found)?.unwrap_or(secs(12 * 3600));
        let age_found = src.get("AM_SESSION_MAX_AGE", session_max_age, "session_max_age");
        let age_key = age_found.as_ref().map(|(k, _)| k.clone());
        let session_max_age = duration(age_found)?.unwrap_or(secs(7 * 86_400));
        if session_idle.is_zero() {
            return Err(ConfigError::Invalid {
                key: idle_key.unwrap_or_else(|| "AM_SESSION_IDLE".into()),
                message: "must be longer than 0s".into(),
            });
        }
        if session_max_age < session_idle {
            return Err(ConfigError::Invalid {
                key: age_key.unwrap_or_else(|| "AM_SESSION_MAX_AGE".into()),
                message: format!(
                    "shorter than the idle time ({}): a session could never be idle that long",
                    humantime::format_duration(session_idle)
                ),
            });
        }
        let smtp = smtp_settings(
            src.get("AM_SMTP_URL", smtp_url, "smtp_url"),
            src.get("AM_SMTP_FROM", smtp_from, "smtp_from"),
        )?;
        let runtime = RuntimeTunables {
            node_timeout: duration(src.get("AM_NODE_TIMEOUT", node_timeout, "node_timeout"))?
                .unwrap_or(secs(30)),
            wait_timeout: duration(src.get("AM_WAIT_TIMEOUT", wait_timeout, "wait_timeout"))?
                .unwrap_or(secs(600)),
            misfire_threshold: duration(src.get(
                "AM_MISFIRE_THRESHOLD",
                misfire_threshold,
                "misfire_threshold",
            ))?
            .unwrap_or(secs(60)),
            failure_retention: secs(
                retention_days(src.get(
                    "AM_FAILURE_RETENTION_DAYS",
                    failure_retention_days.map(Days::into_raw),
                    "failure_retention_days",
                ))?
                .unwrap_or(DEFAULT_FAILURE_RETENTION_DAYS)
                    * 86_400,
            ),
            notify_give_up: duration(src.get(
                "AM_NOTIFY_GIVE_UP",
                notify_give_up,
                "notify_give_up",
            ))?
            .unwrap_or(secs(86_400)),
            smtp,
        };

        Ok(Config {
            database: DatabaseConfig { url: database },
            broker: BrokerConfig {
                url: broker,
                prefix,
                queue_expiry,
            },
            runtime,
            http: HttpConfig {
                listen,
                allowed_origins,
                allowed_hosts,
                secure_cookies,
                metrics_public,
                public_url,
                session_idle,
                session_max_age,
            },
            admin: AdminConfig { initial_password },
        })
    }
}

/// The SMTP relay: an `smtp://` or `smtps://` URL naming a host, and a sender the mail
/// library can write (checked here, so a typo stops the start rather than every e-mail).
fn smtp_settings(
    url: Option<(String, String)>,
    from: Option<(String, String)>,
) -> Result<Option<am_services::runtime::SmtpSettings>, ConfigError> {
    let Some((key, raw)) = url else {
        return Ok(None);
    };
    let parsed = url::Url::parse(&raw).ok().filter(|u| {
        matches!(u.scheme(), "smtp" | "smtps") && u.host_str().is_some_and(|h| !h.is_empty())
    });
    // The mail library reads it the same way when the notifier starts: a `tls=` it does not
    // know is refused here, not there.
    let readable = parsed.is_some()
        && lettre::AsyncSmtpTransport::<lettre::Tokio1Executor>::from_url(&raw).is_ok();
    if !readable {
        // The URL may hold a password: it is not repeated.
        return Err(ConfigError::Invalid {
            key,
            message: "not an SMTP relay address (expected smtp://host:port, smtp://host:587?tls=required or smtps://user:password@host)".into(),
        });
    }
    let from = match from {
        Some((key, f)) => {
            if f.parse::<lettre::message::Mailbox>().is_err() {
                return Err(ConfigError::Invalid {
                    key,
                    message: format!(
                        "`{f}` is not a sender address (expected e.g. Agent Manager <agent-manager@example.com>)"
                    ),
                });
            }
            f
        }
        None => DEFAULT_SMTP_FROM.to_owned(),
    };
    Ok(Some(am_services::runtime::SmtpSettings { url: raw, from }))
}

/// A whole number of days from 1 to [`MAX_FAILURE_RETENTION_DAYS`].
fn retention_days(found: Option<(String, String)>) -> Result<Option<u64>, ConfigError> {
    found
        .map(|(key, raw)| match raw.trim().parse::<u64>() {
            Ok(days) if (1..=MAX_FAILURE_RETENTION_DAYS).contains(&days) => Ok(days),
            _ => Err(ConfigError::Invalid {
                key,
                message: format!(
                    "`{raw}` is not a number of days (expected a whole number from 1 to \
                     {MAX_FAILURE_RETENTION_DAYS}, e.g. 30)"
                ),
            }),
        })
        .transpose()
}

/// A boolean setting: the environment variable `key` (`true`/`false`, `1`/`0`, `yes`/`no`)
/// over the configuration file's value, `false` when neither sets it.
fn flag(key: &str, env: Option<String>, file: Option<bool>) -> Result<bool, ConfigError> {
    match env.as_deref() {
        Some("true" | "1" | "yes") => Ok(true),
        Some("false" | "0" | "no") => Ok(false),
        Some(other) => Err(ConfigError::Invalid {
            key: key.into(),
            message: format!("`{other}` is not a boolean (expected true or false)"),
        }),
        None => Ok(file.unwrap_or(false)),
    }
}

#[cfg(test)]
mod tests;
