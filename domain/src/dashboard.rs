//! The dashboard's figures as one document: what `GET /api/v1/dashboard` answers, what the
//! live feed (`/api/v1/dashboard/events`) pushes, and what the browser reads back. It lives
//! here, free of I/O, so the server and the browser (wasm) share the one definition.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

mod alarm;

pub use alarm::{Alarm, AlarmKind};

/// How far back finished activations are counted and failures are charted.
pub const WINDOW_HOURS: i64 = 24;

/// How many failing launch settings the dashboard lists ([`Dashboard::failing`]).
pub const FAILING_SHOWN: u64 = 8;

/// The kinds of failure report ([`failure_kind::FAILED`] is the only one an operator has to
/// look at), said in their own module so the throughput figures count with them too.
pub use crate::failure_kind;

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
    /// The newest active runs (at most 20), newest first: a group's run once, with the member
    /// it is at, not again as that member's run.
    pub running: Vec<RunningActivation>,
    /// Active runs in all (counted as [`Dashboard::running`] lists them).
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
    /// Real failures (see [`failure_kind`]) reported in the last 60 minutes.
    pub failures_last_hour: u64,
    /// Failed attempts of the last 60 minutes whose message was sent to be tried again.
    #[serde(default)]
    pub retried_last_hour: u64,
    /// "Temporarily unavailable" answers of the last 60 minutes (not failures: the message
    /// waits, nothing counts them against the launch setting).
    #[serde(default)]
    pub unavailable_last_hour: u64,
    /// Notifications given up on after their retry budget (docs/notifications.md).
    #[serde(default)]
    pub failed_notifications: u64,
    pub failures_per_hour: FailureChart,
    /// Every launch setting's messages processed, failures and retries per minute over the
    /// last hour, with the broker's backlog.
    #[serde(default)]
    pub throughput: crate::throughput::Throughput,
    /// Launch settings with real failures in the last 60 minutes, the most recently failing
    /// first (at most [`FAILING_SHOWN`]), each with its last error.
    #[serde(default)]
    pub failing: Vec<Failing>,
    /// Launch settings with real failures in the last 60 minutes, in all.
    #[serde(default)]
    pub failing_total: u64,
    /// What waits in the broker, as the manager last sampled it.
    #[serde(default)]
    pub backlog: BrokerBacklog,
    /// Messages agents a node published without a data queue in the catalog, waiting for an
    /// operator to pick one (`application/agent`).
    #[serde(default)]
    pub needs_data_queue: Vec<String>,
    /// What is broken now, most urgent first: shown above everything else.
    #[serde(default)]
    pub alarms: Vec<Alarm>,
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
    /// Hosts it is dispatched to now, by name (a group's run: its member's).
    pub hosts: Vec<String>,
    /// A group's run: the launch setting of the member running now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
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
    /// When; `None` for one disabled before the manager recorded it.
    pub disabled_at: Option<DateTime<Utc>>,
    /// Who: a user's name, `breaker` for the breaker policy, `cli` for the command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The activation whose failures tripped the breaker, when the breaker did it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation: Option<String>,
}

/// A launch setting with real failures in the last hour, and what it last reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Failing {
    pub launch_setting: String,
    /// From the catalog; `None` for a launch setting deleted since.
    pub application: Option<String>,
    /// Real failures in the last 60 minutes.
    pub failures: u64,
    /// Hosts that reported them, by name.
    pub hosts: Vec<String>,
    pub last_error_type: String,
    /// The last error's message, cut to [`MESSAGE_SHOWN`] characters.
    pub last_message: String,
    pub last_host: String,
    pub last_activation: String,
    pub last_at: DateTime<Utc>,
    /// The first real failure after the launch setting last succeeded (or, if it has not
    /// succeeded since the failures kept began, the first kept).
    pub failing_since: DateTime<Utc>,
}

/// Characters of an error message the dashboard shows; the drill-down has the whole message.
pub const MESSAGE_SHOWN: usize = 300;

/// `message` cut to `max` characters (on a character boundary), with an ellipsis when cut.
pub fn cut(message: &str, max: usize) -> String {
    match message.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &message[..end]),
        None => message.to_owned(),
    }
}

/// Failures per hour over the last [`WINDOW_HOURS`] hours: the real ones by error type, the
/// retried attempts and the "unavailable" answers beside them (see [`failure_kind`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FailureChart {
    /// The legend: the error types of the real failures with their totals over the window,
    /// most frequent first, [`OTHER_ERROR_TYPES`] last when there are more than
    /// [`CHART_ERROR_TYPES`].
    pub error_types: Vec<TypeCount>,
    /// Retried attempts over the window.
    #[serde(default)]
    pub retried: u64,
    /// "Temporarily unavailable" answers over the window.
    #[serde(default)]
    pub unavailable: u64,
    /// One per hour, oldest first; the last is the current (partial) hour.
    pub hours: Vec<HourCount>,
}

impl FailureChart {
    /// The largest hourly count of every kind together (the chart's scale).
    pub fn peak(&self) -> u64 {
        self.hours
            .iter()
            .map(|h| h.total + h.retried + h.unavailable)
            .max()
            .unwrap_or(0)
    }

    /// Real failures over the window.
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
    /// Real failures.
    pub total: u64,
    /// Real failures: non-zero counts only, in the legend's order.
    pub by_error_type: Vec<TypeCount>,
    #[serde(default)]
    pub retried: u64,
    #[serde(default)]
    pub unavailable: u64,
}

/// Failure reports of one hour, one kind and one error type, as the database counts them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartRow {
    pub start: DateTime<Utc>,
    /// One of [`failure_kind`].
    pub kind: String,
    pub error_type: String,
    pub count: u64,
}

/// Builds the chart from counted rows: one bucket per hour of the window ending with the hour
/// of `now`; among the real failures, the [`CHART_ERROR_TYPES`] most frequent types named and
/// the rest summed. Rows outside the window are ignored.
pub fn failure_chart(now: DateTime<Utc>, rows: &[ChartRow]) -> FailureChart {
    let current = hour_start(now);
    let first = current - chrono::Duration::hours(WINDOW_HOURS - 1);
    let in_window = |r: &&ChartRow| r.start >= first && r.start <= current;
    let real =
        |r: &&ChartRow| r.kind != failure_kind::RETRIED && r.kind != failure_kind::UNAVAILABLE;
    let mut totals: Vec<TypeCount> = Vec::new();
    for r in rows.iter().filter(in_window).filter(real) {
        match totals.iter_mut().find(|t| t.error_type == r.error_type) {
            Some(t) => t.count += r.count,
            None => totals.push(TypeCount {
                error_type: r.error_type.clone(),
                count: r.count,
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
    let of_kind = |start: DateTime<Utc>, kind: &str| -> u64 {
        rows.iter()
            .filter(|r| r.start == start && r.kind == kind)
            .map(|r| r.count)
            .sum()
    };
    let hours: Vec<HourCount> = (0..WINDOW_HOURS)
        .map(|i| {
            let start = first + chrono::Duration::hours(i);
            let mut counts = vec![0u64; totals.len()];
            for r in rows.iter().filter(|r| r.start == start).filter(real) {
                if let Some(i) = slot(&r.error_type) {
                    counts[i] += r.count;
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
                retried: of_kind(start, failure_kind::RETRIED),
                unavailable: of_kind(start, failure_kind::UNAVAILABLE),
            }
        })
        .collect();
    FailureChart {
        error_types: totals,
        retried: hours.iter().map(|h| h.retried).sum(),
        unavailable: hours.iter().map(|h| h.unavailable).sum(),
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

    fn row(start: DateTime<Utc>, error_type: &str, count: u64) -> ChartRow {
        ChartRow {
            start,
            kind: failure_kind::FAILED.into(),
            error_type: error_type.into(),
            count,
        }
    }

    #[test]
    fn counts_land_in_their_hour_and_rare_types_are_summed() {
        let now = at(10, 42);
        let mut rows = vec![
            row(at(10, 0), "A", 5),
            row(at(9, 0), "A", 1),
            row(at(9, 0), "B", 2),
            // Before the window: ignored.
            row(at(10, 0) - chrono::Duration::hours(24), "A", 100),
        ];
        for i in 0..9 {
            rows.push(row(at(8, 0), &format!("Rare{i}"), 1));
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
    fn retries_and_unavailable_answers_are_charted_apart_from_real_failures() {
        let now = at(10, 42);
        let mut retried = row(at(10, 0), "DbTimeout", 7);
        retried.kind = failure_kind::RETRIED.into();
        let mut unavailable = row(at(10, 0), "NotReplicatedYet", 30);
        unavailable.kind = failure_kind::UNAVAILABLE.into();
        let c = failure_chart(now, &[row(at(10, 0), "DbTimeout", 2), retried, unavailable]);
        // The legend and the totals name only real failures.
        assert_eq!(c.error_types.len(), 1);
        assert_eq!(c.total(), 2);
        assert_eq!((c.retried, c.unavailable), (7, 30));
        let h = &c.hours[23];
        assert_eq!((h.total, h.retried, h.unavailable), (2, 7, 30));
        // The scale holds the whole stacked bar.
        assert_eq!(c.peak(), 39);
    }

    #[test]
    fn a_report_is_of_one_kind() {
        use crate::wire::disposition;
        assert_eq!(
            failure_kind::of(true, Some(disposition::RETRY)),
            failure_kind::UNAVAILABLE
        );
        assert_eq!(
            failure_kind::of(false, Some(disposition::RETRY)),
            failure_kind::RETRIED
        );
        assert_eq!(
            failure_kind::of(false, Some(disposition::DEAD_LETTER)),
            failure_kind::FAILED
        );
        assert_eq!(
            failure_kind::of(false, Some(disposition::PARK)),
            failure_kind::FAILED
        );
        assert_eq!(failure_kind::of(false, None), failure_kind::FAILED);
    }

    #[test]
    fn messages_are_cut_on_a_character_boundary() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ééééé", 3), "ééé…");
        assert_eq!(cut("abc", 3), "abc");
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
