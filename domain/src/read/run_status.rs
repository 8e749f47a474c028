//! The runtime status of a launch setting or schedule group as the API and the pages read it:
//! current status, the last activation's result, why it was disabled and, for a launch setting,
//! what waits for it in the broker, which hosts its breaker quarantined and how often the
//! runtime recovered it.

use super::depths::Backlog;
use crate::{display::plural, failing::StreamHealth, status::RecoveryKind};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

/// See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunStatus {
    /// `running` | `waiting` | `disabled`.
    pub current: String,
    /// `succeeded` | `failed` | `interrupted`; `None` before the first activation ends.
    pub last_result: Option<String>,
    pub last_result_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
    /// Launch settings only: what waits for it in the broker, from this replica's last sample
    /// (none before the first one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<Backlog>,
    /// Launch settings only: hosts its `MANY` breaker took out of the rotation, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quarantined: Vec<Quarantine>,
    /// Launch settings only: how often the runtime recovered it, by kind (`start_timeout`,
    /// `lost`, `redispatch`, `stale_report`, `quarantine`); kinds that never happened are left
    /// out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub recovery: BTreeMap<String, i64>,
    /// Stream launch settings only, on their own page: processed, failures and dead letters
    /// over the last 5 minutes and hour, last failure, failing since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamHealth>,
    /// Schedule groups only: when it fires next (`None` while disabled or never again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_fire_at: Option<DateTime<Utc>>,
    /// Launch settings only: real failures and dead letters of the last 24 hours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_24h: Option<RecentCounts>,
}

/// Real failures and dead letters of a launch setting over a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecentCounts {
    pub failures: u64,
    pub dead_letters: u64,
}

/// A quarantined host as pages and the API show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Quarantine {
    pub host: String,
    pub since: DateTime<Utc>,
    /// The trip that put it there: consecutive failures and the last error.
    pub cause: String,
    /// The activation whose run on that host tripped.
    pub activation_id: Option<Uuid>,
}

impl RunStatus {
    /// What waits in the broker, and who takes it how fast over the broker's last two
    /// samples: (`12 waiting`, `1 consumer (shared) · 12/min over 30 s`); `None` before the
    /// first sample.
    pub fn backlog_parts(&self) -> Option<(String, String)> {
        let b = self.backlog.as_ref()?;
        Some((
            format!("{} waiting", b.ready),
            format!(
                "{}{}{}",
                plural(u64::from(b.consumers), "consumer"),
                if b.shared { " (shared)" } else { "" },
                self.per_minute()
                    .map(|(n, s)| format!(" · {n}/min over {s} s"))
                    .unwrap_or_default()
            ),
        ))
    }

    /// [`backlog_parts`](Self::backlog_parts) on one line.
    pub fn backlog_line(&self) -> Option<String> {
        self.backlog_parts()
            .map(|(waiting, taking)| format!("{waiting} · {taking}"))
    }

    /// Messages processed per minute between the broker's last two samples, and the seconds
    /// between them.
    pub fn per_minute(&self) -> Option<(u64, u64)> {
        let b = self.backlog.as_ref()?;
        b.processed_per_minute.zip(b.processed_over_seconds)
    }

    /// How often the runtime recovered it, in words (`2 start timeouts · 1 lost run`); `None`
    /// when never.
    pub fn recovery_text(&self) -> Option<String> {
        let parts: Vec<String> = RecoveryKind::ALL
            .iter()
            .filter_map(|k| {
                let n = *self.recovery.get(k.as_str()).filter(|n| **n > 0)?;
                let (one, many) = match k {
                    RecoveryKind::StartTimeout => ("start timeout", "start timeouts"),
                    RecoveryKind::Lost => ("lost run", "lost runs"),
                    RecoveryKind::Redispatch => ("re-dispatch", "re-dispatches"),
                    RecoveryKind::StaleReport => ("stale report ignored", "stale reports ignored"),
                    RecoveryKind::Quarantine => ("quarantine", "quarantines"),
                };
                Some(format!("{n} {}", if n == 1 { one } else { many }))
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status() -> RunStatus {
        RunStatus {
            current: "waiting".into(),
            last_result: None,
            last_result_at: None,
            disabled_reason: None,
            backlog: None,
            quarantined: vec![],
            recovery: BTreeMap::new(),
            stream: None,
            next_fire_at: None,
            last_24h: None,
        }
    }

    #[test]
    fn the_backlog_says_what_waits_and_who_takes_it_how_fast() {
        let mut s = status();
        assert_eq!(s.backlog_line(), None, "nothing before the first sample");
        s.backlog = Some(Backlog {
            queue: "am.dq.jobs".into(),
            shared: true,
            ready: 12,
            consumers: 1,
            processed_per_minute: Some(40),
            processed_over_seconds: Some(30),
            sampled_at: None,
        });
        assert_eq!(
            s.backlog_line().as_deref(),
            Some("12 waiting · 1 consumer (shared) · 40/min over 30 s")
        );
        assert_eq!(s.per_minute(), Some((40, 30)));
    }

    #[test]
    fn recoveries_read_in_the_order_of_their_kinds_and_in_the_plural_when_many() {
        let mut s = status();
        assert_eq!(s.recovery_text(), None);
        s.recovery = [("lost", 1), ("start_timeout", 2), ("redispatch", 0)]
            .into_iter()
            .map(|(k, n)| (k.to_owned(), n))
            .collect();
        assert_eq!(
            s.recovery_text().as_deref(),
            Some("2 start timeouts · 1 lost run")
        );
    }
}
