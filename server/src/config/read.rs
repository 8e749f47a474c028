//! Reading the settings: the optional file's shape, where each raw value came from, and one
//! reader per concern (database, broker, HTTP, admin, runtime), each refusing a bad value with
//! the name of the variable or file key it came from.

use super::settings::{
    AdminConfig, BrokerConfig, ConfigError, DEFAULT_AMQP_URL, DEFAULT_FAILURE_RETENTION_DAYS,
    DEFAULT_LISTEN, DEFAULT_SMTP_FROM, HttpConfig, MAX_FAILURE_RETENTION_DAYS, RuntimeTunables,
};
use crate::allowed_hosts::AllowedHosts;
use am_services::db::DEFAULT_DATABASE_URL;
use serde::Deserialize;
use std::{net::SocketAddr, path::Path, time::Duration};

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

/// Where raw values come from: the environment over the file, each named for error messages.
pub(super) struct Source<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    file_path: Option<String>,
    file: FileConfig,
}

impl<'a> Source<'a> {
    /// The environment, and the file `file` or `AM_CONFIG` names (read whole here).
    pub(super) fn open(
        env: &'a dyn Fn(&str) -> Option<String>,
        file: Option<&Path>,
    ) -> Result<Self, ConfigError> {
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
        Ok(Self {
            env,
            file_path,
            file: file_cfg,
        })
    }

    /// The environment's `env_key`, else the file's `file_key` (taken out of the file's
    /// settings: each is read once).
    fn take(
        &mut self,
        env_key: &str,
        file_key: &str,
        field: fn(&mut FileConfig) -> &mut Option<String>,
    ) -> Option<(String, String)> {
        let file_value = field(&mut self.file).take();
        self.get(env_key, file_value, file_key)
    }

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

    /// `AM_DATABASE_URL`: SQLite or PostgreSQL.
    pub(super) fn database_url(&mut self) -> Result<String, ConfigError> {
        let found = self.take("AM_DATABASE_URL", "database_url", |f| &mut f.database_url);
        let Some((key, url)) = found else {
            return Ok(DEFAULT_DATABASE_URL.to_owned());
        };
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
        Ok(url)
    }

    /// `AM_AMQP_URL` (one URL, or a cluster's members as a comma-separated list: agent_client's
    /// one rule), `AM_PREFIX`, `AM_QUEUE_EXPIRY`.
    pub(super) fn broker(&mut self) -> Result<BrokerConfig, ConfigError> {
        let url = match self.take("AM_AMQP_URL", "amqp_url", |f| &mut f.amqp_url) {
            Some((key, raw)) => {
                agent_client::BrokerAddresses::parse(&raw).map_err(|e| ConfigError::Invalid {
                    key,
                    message: e.to_string(),
                })?;
                raw
            }
            None => DEFAULT_AMQP_URL.to_owned(),
        };
        let (prefix_key, prefix) = self
            .take("AM_PREFIX", "prefix", |f| &mut f.prefix)
            .unwrap_or_else(|| ("AM_PREFIX".to_owned(), "am".to_owned()));
        if am_domain::ids::validate_id(&prefix).is_err() {
            return Err(ConfigError::Invalid {
                key: prefix_key,
                message: format!(
                    "`{prefix}` is not a valid prefix (lower-case letters, digits, . _ -)"
                ),
            });
        }
        let expiry = self.take("AM_QUEUE_EXPIRY", "queue_expiry", |f| &mut f.queue_expiry);
        Ok(BrokerConfig {
            url,
            prefix,
            queue_expiry: duration(expiry)?,
        })
    }

    /// `AM_ADMIN_PASSWORD`: the first admin's, if given, long enough.
    pub(super) fn admin(&mut self) -> Result<AdminConfig, ConfigError> {
        let initial_password = self
            .take("AM_ADMIN_PASSWORD", "admin_password", |f| {
                &mut f.admin_password
            })
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
        Ok(AdminConfig { initial_password })
    }

    /// The HTTP side: where to listen, who may call, cookies, metrics, sessions.
    pub(super) fn http(&mut self) -> Result<HttpConfig, ConfigError> {
        let listen = self.listen()?;
        let (allowed_origins, allowed_hosts) = self.origins_and_hosts()?;
        let secure_cookies = flag(
            "AM_SECURE_COOKIES",
            (self.env)("AM_SECURE_COOKIES"),
            self.file.secure_cookies,
        )?;
        let metrics_public = flag(
            "AM_METRICS_PUBLIC",
            (self.env)("AM_METRICS_PUBLIC"),
            self.file.metrics_public,
        )?;
        let public_url = self.public_url()?;
        let (session_idle, session_max_age) = self.sessions()?;
        Ok(HttpConfig {
            listen,
            allowed_origins,
            allowed_hosts,
            secure_cookies,
            metrics_public,
            public_url,
            session_idle,
            session_max_age,
        })
    }

    fn listen(&mut self) -> Result<SocketAddr, ConfigError> {
        match self.take("AM_LISTEN", "listen", |f| &mut f.listen) {
            Some((key, raw)) => raw.parse::<SocketAddr>().map_err(|_| ConfigError::Invalid {
                key,
                message: format!(
                    "`{raw}` is not a socket address (expected e.g. 127.0.0.1:3000 or 0.0.0.0:8080)"
                ),
            }),
            None => DEFAULT_LISTEN.parse().map_err(|_| ConfigError::Invalid {
                key: "AM_LISTEN".into(),
                message: "built-in default is invalid".into(),
            }),
        }
    }

    /// `AM_ALLOWED_ORIGINS`, and `AM_ALLOWED_HOSTS` with the origins' hosts added.
    fn origins_and_hosts(&mut self) -> Result<(Vec<String>, AllowedHosts), ConfigError> {
        let allowed_origins: Vec<String> = match (self.env)("AM_ALLOWED_ORIGINS") {
            Some(v) => v
                .split(',')
                .map(|s| s.trim().trim_end_matches('/').to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
            None => self.file.allowed_origins.take().unwrap_or_default(),
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
        let (hosts_key, host_entries) = match (self.env)("AM_ALLOWED_HOSTS") {
            Some(v) => (
                "AM_ALLOWED_HOSTS".to_owned(),
                v.split(',').map(str::to_owned).collect(),
            ),
            None => (
                "allowed_hosts".to_owned(),
                self.file.allowed_hosts.take().unwrap_or_default(),
            ),
        };
        let allowed_hosts = AllowedHosts::parse(host_entries.iter().map(String::as_str))
            .map_err(|e| ConfigError::Invalid {
                key: hosts_key,
                message: e.to_string(),
            })?
            .with_origins(&allowed_origins);
        Ok((allowed_origins, allowed_hosts))
    }

    fn public_url(&mut self) -> Result<Option<String>, ConfigError> {
        let Some((key, raw)) = self.take("AM_PUBLIC_URL", "public_url", |f| &mut f.public_url)
        else {
            return Ok(None);
        };
        match url::Url::parse(&raw) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {
                Ok(Some(raw.trim_end_matches('/').to_owned()))
            }
            _ => Err(ConfigError::Invalid {
                key,
                message: format!(
                    "`{raw}` is not an http(s) address (expected e.g. https://manager.example.com)"
                ),
            }),
        }
    }

    /// `AM_SESSION_IDLE` (default 12 h) and `AM_SESSION_MAX_AGE` (7 days), the second no
    /// shorter than the first.
    fn sessions(&mut self) -> Result<(Duration, Duration), ConfigError> {
        let idle_found = self.take("AM_SESSION_IDLE", "session_idle", |f| &mut f.session_idle);
        let idle_key = idle_found.as_ref().map(|(k, _)| k.clone());
        let session_idle = duration(idle_found)?.unwrap_or(secs(12 * 3600));
        let age_found = self.take("AM_SESSION_MAX_AGE", "session_max_age", |f| {
            &mut f.session_max_age
        });
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
        Ok((session_idle, session_max_age))
    }

    /// The runtime's timeouts, the failure logs' retention, notifications' give-up and relay.
    pub(super) fn runtime(&mut self) -> Result<RuntimeTunables, ConfigError> {
        let f = &mut self.file;
        let (node, wait, misfire) = (
            f.node_timeout.take(),
            f.wait_timeout.take(),
            f.misfire_threshold.take(),
        );
        let (days, give_up) = (
            f.failure_retention_days.take().map(Days::into_raw),
            f.notify_give_up.take(),
        );
        let (smtp_url, smtp_from) = (f.smtp_url.take(), f.smtp_from.take());
        let smtp = smtp_settings(
            self.get("AM_SMTP_URL", smtp_url, "smtp_url"),
            self.get("AM_SMTP_FROM", smtp_from, "smtp_from"),
        )?;
        let days =
            retention_days(self.get("AM_FAILURE_RETENTION_DAYS", days, "failure_retention_days"))?
                .unwrap_or(DEFAULT_FAILURE_RETENTION_DAYS);
        Ok(RuntimeTunables {
            node_timeout: duration(self.get("AM_NODE_TIMEOUT", node, "node_timeout"))?
                .unwrap_or(secs(30)),
            wait_timeout: duration(self.get("AM_WAIT_TIMEOUT", wait, "wait_timeout"))?
                .unwrap_or(secs(600)),
            misfire_threshold: duration(self.get(
                "AM_MISFIRE_THRESHOLD",
                misfire,
                "misfire_threshold",
            ))?
            .unwrap_or(secs(60)),
            failure_retention: secs(days * 86_400),
            notify_give_up: duration(self.get("AM_NOTIFY_GIVE_UP", give_up, "notify_give_up"))?
                .unwrap_or(secs(86_400)),
            smtp,
        })
    }
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A duration setting (`30s`, `5m`, `1h 30m`), if set.
fn duration(found: Option<(String, String)>) -> Result<Option<Duration>, ConfigError> {
    found
        .map(|(key, raw)| {
            humantime::parse_duration(&raw).map_err(|e| ConfigError::Invalid {
                key,
                message: format!("`{raw}` is not a duration (expected e.g. 30s or 5m): {e}"),
            })
        })
        .transpose()
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
