//! The dashboard's figures as one document: what `GET /api/v1/dashboard` answers, what the
//! live feed (`/api/v1/dashboard/events`) pushes, and what the browser reads back. It lives
//! here, free of I/O, so the server and the browser (wasm) share the one definition.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// How far back finished activations are counted and failures are charted.
pub const WINDOW_HOURS: i64 = 24;

/// Error types the chart names; the rarer ones are summed under [`OTHER_ERROR_TYPES`].
pub const CHART_ERROR_TYPES: usize = 8;

/// The chart's name for the error types beyond the [`CHART_ERROR_TYPES`] most frequent.
/// Parenthesised so it cannot be mistaken for a real (Java- or Rust-style) error type.
pub const OTHER_ERROR_TYPES: &str = "(other types)";

/// The manager's state at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Dashboard {
    pub generated_at: DateTime<Utc>,
    /// Runs by status (activations without a parent: a group's run once, its members' runs
    /// not again), every status listed (zero included): the active ones
    /// (`waiting`, `dispatched`, `running`) whatever their age, the finished ones created in
    /// the last [`WINDOW_HOURS`] hours.
    pub activations: Vec<StatusCount>,
    /// The newest active activations (at most 20), newest first.
    pub running: Vec<RunningActivation>,
    /// Active activations in all.
    pub running_total: u64,
    /// Live nodes, by application and host.
    pub nodes: Vec<NodeLoad>,
    /// Dead letters waiting for an operator (status `dead`).
    pub dead_letters: u64,
    /// Disabled launch settings, the most recently disabled first (at most 50).
    pub disabled_launch_settings: Vec<Disabled>,
    pub disabled_launch_settings_total: u64,
    /// Disabled schedule groups, by id (at most 50).
    pub disabled_groups: Vec<Disabled>,
    pub disabled_groups_total: u64,
    /// Failures reported in the last 60 minutes.
    pub failures_last_hour: u64,
    pub failures_per_hour: FailureChart,
    /// What waits in the broker, as the manager last sampled it.
    #[serde(default)]
    pub backlog: BrokerBacklog,
}

/// What waits in the broker's data queues.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BrokerBacklog {
    /// When the sample began; `None` before the first.
    pub sampled_at: Option<DateTime<Utc>>,
    /// Messages ready in the queues nodes consume.
    pub ready: u64,
    /// Messages kept in unrouted queues (no launch setting took them).
    pub unrouted: u64,
    /// Queues with messages ready and no node consuming them.
    pub unconsumed: u64,
    /// The queues with the most messages waiting (at most [`LARGEST_BACKLOGS`]), most first.
    pub largest: Vec<QueueBacklog>,
}

/// How many queues [`BrokerBacklog::largest`] lists.
pub const LARGEST_BACKLOGS: usize = 5;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueueBacklog {
    pub queue: String,
    pub launch_setting: Option<String>,
    pub data_queue: Option<String>,
    /// Unrouted queue: what no launch setting of `data_queue` took.
    pub unrouted: bool,
    pub ready: u64,
    pub consumers: u32,
}

impl Dashboard {
    /// The count of activations with `status` (0 for a status not listed).
    pub fn activations_with(&self, status: &str) -> u64 {
        self.activations
            .iter()
            .find(|c| c.status == status)
            .map_or(0, |c| c.count)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatusCount {
    pub status: String,
    pub count: u64,
    /// Still able to change (counted whatever its age); otherwise finished in the window.
    pub active: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunningActivation {
    pub id: String,
    /// The launch setting run; `None` for a group activation.
    pub launch_setting: Option<String>,
    /// The schedule group, for a group activation and its member runs.
    pub group: Option<String>,
    pub application: Option<String>,
    /// `waiting`, `dispatched` or `running`.
    pub status: String,
    /// Hosts it is dispatched to now, by name.
    pub hosts: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeLoad {
    pub application: String,
    pub host: String,
    /// Activations running on the node.
    pub running: i32,
    /// Activations the node runs at once.
    pub capacity: i32,
    /// One-minute load average of the host (0 when the node does not know it).
    pub load: f64,
    pub last_heartbeat_at: DateTime<Utc>,
}

impl NodeLoad {
    /// Share of the capacity in use, 0–1 (1 when the capacity is 0 and something runs).
    pub fn usage(&self) -> f64 {
        match (self.running, self.capacity) {
            (r, _) if r <= 0 => 0.0,
            (_, c) if c <= 0 => 1.0,
            (r, c) => (f64::from(r) / f64::from(c)).min(1.0),
        }
    }
}

/// A disabled launch setting or schedule group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Disabled {
    pub id: String,
    pub application: String,
    /// Why: the breaker's cause or the operator's action; `None` when nobody said.
    pub reason: Option<String>,
    /// When (launch settings only).
    pub disabled_at: Option<DateTime<Utc>>,
}

/// Failures per hour over the last [`WINDOW_HOURS`] hours, by error type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FailureChart {
    /// The legend: the error types charted with their totals over the window, most frequent
    /// first, [`OTHER_ERROR_TYPES`] last when there are more than [`CHART_ERROR_TYPES`].
    pub error_types: Vec<TypeCount>,
    /// One per hour, oldest first; the last is the current (partial) hour.
    pub hours: Vec<HourCount>,
}

impl FailureChart {
    /// The largest hourly total (the chart's scale).
    pub fn peak(&self) -> u64 {
        self.hours.iter().map(|h| h.total).max().unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.error_types.iter().map(|t| t.count).sum()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TypeCount {
    pub error_type: String,
    pub count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HourCount {
    /// Start of the hour (UTC).
    pub start: DateTime<Utc>,
    pub total: u64,
    /// Non-zero counts only, in the legend's order.
    pub by_error_type: Vec<TypeCount>,
}

/// Builds the chart from `(hour start, error type, count)` rows: one bucket per hour of the
/// window ending with the hour of `now`, the [`CHART_ERROR_TYPES`] most frequent types named
/// and the rest summed. Rows outside the window are ignored.
pub fn failure_chart(now: DateTime<Utc>, rows: &[(DateTime<Utc>, String, u64)]) -> FailureChart {
    let current = hour_start(now);
    let first = current - chrono::Duration::hours(WINDOW_HOURS - 1);
    let mut totals: Vec<TypeCount> = Vec::new();
    for (start, error_type, n) in rows {
        if *start < first || *start > current {
            continue;
        }
        match totals.iter_mut().find(|t| &t.error_type == error_type) {
            Some(t) => t.count += n,
            None => totals.push(TypeCount {
                error_type: error_type.clone(),
                count: *n,
            }),
        }
    }
    totals.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.error_type.cmp(&b.error_type))
    });
    if totals.len() > CHART_ERROR_TYPES {
        let rest: u64 = totals
            .drain(CHART_ERROR_TYPES..)
            .map(|t| t.count)
            .sum::<u64>();
        totals.push(TypeCount {
            error_type: OTHER_ERROR_TYPES.into(),
            count: rest,
        });
    }
    // The legend slot of an error type: its own, or the last one (the summed rest).
    let named = totals.len().min(CHART_ERROR_TYPES);
    let slot = |error_type: &str| {
        totals[..named]
            .iter()
            .position(|t| t.error_type == error_type)
            .or_else(|| (totals.len() > named).then_some(named))
    };
    let hours = (0..WINDOW_HOURS)
        .map(|i| {
            let start = first + chrono::Duration::hours(i);
            let mut counts = vec![0u64; totals.len()];
            for (s, error_type, n) in rows {
                if *s != start {
                    continue;
                }
                if let Some(i) = slot(error_type) {
                    counts[i] += n;
                }
            }
            HourCount {
                start,
                total: counts.iter().sum(),
                by_error_type: totals
                    .iter()
                    .zip(counts)
                    .filter(|(_, n)| *n > 0)
                    .map(|(t, n)| TypeCount {
                        error_type: t.error_type.clone(),
                        count: n,
                    })
                    .collect(),
            }
        })
        .collect();
    FailureChart {
        error_types: totals,
        hours,
    }
}

/// The start of the hour `t` falls in.
pub fn hour_start(t: DateTime<Utc>) -> DateTime<Utc> {
    let secs = t.timestamp();
    DateTime::from_timestamp(secs - secs.rem_euclid(3600), 0).unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2030, 5, 2, h, m, 0)
            .single()
            .expect("valid")
    }

    #[test]
    fn hours_cover_the_window_ending_with_the_current_hour() {
        let now = at(10, 42);
        let c = failure_chart(now, &[]);
        assert_eq!(c.hours.len(), 24);
        assert_eq!(c.hours[23].start, at(10, 0));
        assert_eq!(
            c.hours[0].start,
            Utc.with_ymd_and_hms(2030, 5, 1, 11, 0, 0)
                .single()
                .expect("valid")
        );
        assert_eq!(c.peak(), 0);
        assert!(c.error_types.is_empty());
    }

    #[test]
    fn counts_land_in_their_hour_and_rare_types_are_summed() {
        let now = at(10, 42);
        let mut rows = vec![
            (at(10, 0), "A".to_string(), 5),
            (at(9, 0), "A".to_string(), 1),
            (at(9, 0), "B".to_string(), 2),
            // Before the window: ignored.
            (
                at(10, 0) - chrono::Duration::hours(24),
                "A".to_string(),
                100,
            ),
        ];
        for i in 0..9 {
            rows.push((at(8, 0), format!("Rare{i}"), 1));
        }
        let c = failure_chart(now, &rows);
        assert_eq!(c.error_types.len(), CHART_ERROR_TYPES + 1);
        assert_eq!(c.error_types[0].error_type, "A");
        assert_eq!(c.error_types[0].count, 6);
        assert_eq!(c.error_types[1].error_type, "B");
        let other = c.error_types.last().expect("other");
        assert_eq!(other.error_type, OTHER_ERROR_TYPES);
        // Nine rare types, six of them named (eight slots minus A and B), three summed.
        assert_eq!(other.count, 3);
        assert_eq!(c.total(), 6 + 2 + 9);
        assert_eq!(c.hours[23].total, 5);
        assert_eq!(c.hours[22].total, 3);
        assert_eq!(c.hours[21].total, 9);
        assert_eq!(
            c.hours[21].by_error_type.last().map(|t| t.count),
            Some(3),
            "{:?}",
            c.hours[21]
        );
        assert_eq!(c.peak(), 9);
    }

    #[test]
    fn usage_is_a_share_of_the_capacity() {
        let n = |running, capacity| NodeLoad {
            application: "a".into(),
            host: "h".into(),
            running,
            capacity,
            load: 0.0,
            last_heartbeat_at: at(0, 0),
        };
        assert!((n(2, 8).usage() - 0.25).abs() < 1e-9);
        assert!((n(0, 0).usage()).abs() < 1e-9);
        assert!((n(3, 0).usage() - 1.0).abs() < 1e-9);
        assert!((n(9, 8).usage() - 1.0).abs() < 1e-9);
    }
}
