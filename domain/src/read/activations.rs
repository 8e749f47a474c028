//! Activations as lists and pages read them: the filter of the list, a summary per activation,
//! and one activation with its dispatch to each host and its timeline.

use super::failures::FailureList;
use crate::status::{ActivationStatus, EventLabel};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Which activations the list returns; blank means no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::IntoParams, utoipa::ToSchema),
    into_params(parameter_in = Query)
)]
pub struct ActivationFilter {
    /// Runs of this launch setting (alone or as a group member).
    pub launch_setting: Option<String>,
    /// Activations of this schedule group (the group activations and their member runs).
    pub group: Option<String>,
    pub application: Option<String>,
    /// Activations dispatched to this host.
    pub host: Option<String>,
    /// `waiting`, `dispatched`, `running`, `succeeded`, `failed`, `interrupted` or `skipped`;
    /// `active` for the first three (every run not ended).
    pub status: Option<String>,
    /// Activations with a failure of this error type (a group activation: in a member run).
    pub error_type: Option<String>,
    /// Created at or after this time (RFC 3339, `YYYY-MM-DDTHH:MM` or `YYYY-MM-DD`, UTC).
    pub from: Option<String>,
    /// Created before this time.
    pub to: Option<String>,
    /// `true`: runs as the dashboard counts them, a group's activation once and its member
    /// runs not again (activations without a parent).
    pub top_level: Option<bool>,
}

impl ActivationFilter {
    /// No filter set: the search matches every activation.
    pub fn is_unfiltered(&self) -> bool {
        super::all_blank(&[
            &self.launch_setting,
            &self.group,
            &self.application,
            &self.host,
            &self.status,
            &self.error_type,
            &self.from,
            &self.to,
        ])
    }
}

/// An activation as lists show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivationSummary {
    pub id: Uuid,
    /// The launch setting run; `None` for a group activation.
    pub launch_setting: Option<String>,
    /// The schedule group, for a group activation and its member runs.
    pub group: Option<String>,
    /// For a member run: the group activation.
    pub parent: Option<Uuid>,
    /// For a member run: its position in the group (0 first).
    pub position: Option<i32>,
    pub application: Option<String>,
    /// `schedule`, `misfire`, `manual`, `stream` or `group`.
    pub trigger: String,
    pub status: String,
    /// Who pressed *Run now*.
    pub requested_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub error: Option<String>,
    /// Hosts it was dispatched to, by name.
    pub hosts: Vec<String>,
    /// Real failures reported (for a group activation: by its member runs); retried attempts
    /// and "temporarily unavailable" answers are not failures (failure_kind).
    pub failures: u64,
}

impl ActivationSummary {
    /// Still waiting, dispatched or running: it can be interrupted, not re-run.
    pub fn is_active(&self) -> bool {
        ActivationStatus::parse(&self.status).is_some_and(ActivationStatus::is_active)
    }

    /// Ended without succeeding: worth a re-run.
    pub fn is_rerunnable(&self) -> bool {
        !self.is_active() && self.status != ActivationStatus::Succeeded.as_str()
    }

    /// From its start (or creation, if it never started) to its end, or to `now` while it
    /// runs; `None` while it waits or after it ended unstarted.
    pub fn duration(&self, now: DateTime<Utc>) -> Option<Duration> {
        let begin = self.started_at.unwrap_or(self.created_at);
        let end = self
            .finished_at
            .or_else(|| (self.status == ActivationStatus::Running.as_str()).then_some(now))?;
        Some(end - begin)
    }
}

/// One page of activations, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivationPage {
    pub items: Vec<ActivationSummary>,
    /// Activations matching the filter, on every page.
    pub total: u64,
    /// One-based.
    pub page: u64,
    pub limit: u64,
    pub has_more: bool,
}

/// One dispatch of the activation to one host (a host has one per attempt).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HostRun {
    pub host: String,
    pub application: String,
    /// Dispatch round: re-dispatches and restarts count up.
    pub attempt: i32,
    pub fencing_token: i64,
    /// `dispatched`, `accepted`, `running`, `succeeded`, `failed`, `interrupted`, `skipped`,
    /// `lost` or `superseded`.
    pub status: String,
    pub dispatched_at: DateTime<Utc>,
    pub accepted_at: Option<DateTime<Utc>>,
    pub started_at: Option<DateTime<Utc>>,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub stop_requested_at: Option<DateTime<Utc>>,
    /// Counters of the last heartbeat.
    pub processed: i64,
    pub failed: i64,
    pub retried: i64,
    pub dead_lettered: i64,
    pub error: Option<String>,
}

/// Something that happened to the activation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TimelineEvent {
    pub at: DateTime<Utc>,
    /// `created`, `waiting`, `dispatched`, `re-dispatched: <reason>`, `accepted`, `started`,
    /// `skipped`, `succeeded`, `failed`, `interrupted`, `lost`, `stale-report`,
    /// `stop-requested`, `interrupt-requested`, `breaker-tripped`, `fired`, `finished`, ...
    pub kind: String,
    pub detail: Option<String>,
}

impl TimelineEvent {
    /// The kind without its reason (`re-dispatched`), and the reason of a kind that carries
    /// one (`re-dispatched: <reason>`).
    pub fn kind_and_reason(&self) -> (&str, Option<&str>) {
        EventLabel::split(&self.kind)
    }
}

/// The timeline of one host (or, with no host, of the manager's own decisions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HostTimeline {
    pub host: Option<String>,
    /// The host's dispatches, first attempt first.
    pub runs: Vec<HostRun>,
    /// In time order.
    pub events: Vec<TimelineEvent>,
    /// Real failures the host reported.
    pub failures: u64,
}

/// One activation with everything known about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivationDetail {
    pub activation: ActivationSummary,
    /// For a group activation: its member runs in order.
    pub members: Vec<ActivationSummary>,
    /// The manager's events first (host `None`), then each host in the order it was involved.
    pub timeline: Vec<HostTimeline>,
    /// Counts by error type and the newest real failures (of the member runs, for a group), and
    /// the reports of the other kinds counted.
    pub failures: FailureList,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2030, 5, 2, 10, 0, s)
            .single()
            .expect("valid")
    }

    fn summary(status: ActivationStatus) -> ActivationSummary {
        ActivationSummary {
            id: Uuid::nil(),
            launch_setting: Some("shop.sync".into()),
            group: None,
            parent: None,
            position: None,
            application: Some("shop".into()),
            trigger: "manual".into(),
            status: status.as_str().into(),
            requested_by: None,
            created_at: at(0),
            started_at: None,
            finished_at: None,
            error: None,
            hosts: vec![],
            failures: 0,
        }
    }

    #[test]
    fn an_activation_is_either_active_rerunnable_or_succeeded() {
        for s in ActivationStatus::ALL {
            let a = summary(*s);
            assert_eq!(a.is_active(), s.is_active(), "{s}");
            assert_eq!(
                a.is_rerunnable(),
                !s.is_active() && *s != ActivationStatus::Succeeded,
                "{s}"
            );
        }
    }

    #[test]
    fn a_duration_runs_from_the_start_to_the_end_or_to_now_while_running() {
        let mut a = summary(ActivationStatus::Running);
        assert_eq!(a.duration(at(9)), Some(Duration::seconds(9)));
        a.started_at = Some(at(2));
        assert_eq!(a.duration(at(9)), Some(Duration::seconds(7)));
        a.status = ActivationStatus::Succeeded.as_str().into();
        a.finished_at = Some(at(5));
        assert_eq!(a.duration(at(9)), Some(Duration::seconds(3)));
        let waiting = summary(ActivationStatus::Waiting);
        assert_eq!(waiting.duration(at(9)), None);
    }

    #[test]
    fn an_event_kind_splits_off_its_reason() {
        let e = TimelineEvent {
            at: at(0),
            kind: "re-dispatched: node lost".into(),
            detail: None,
        };
        assert_eq!(e.kind_and_reason(), ("re-dispatched", Some("node lost")));
        let plain = TimelineEvent {
            kind: "accepted".into(),
            ..e
        };
        assert_eq!(plain.kind_and_reason(), ("accepted", None));
    }

    #[test]
    fn a_filter_of_blanks_filters_nothing() {
        let mut f = ActivationFilter {
            host: Some("  ".into()),
            top_level: Some(true),
            ..ActivationFilter::default()
        };
        assert!(f.is_unfiltered());
        f.host = Some("shop-1".into());
        assert!(!f.is_unfiltered());
    }
}
