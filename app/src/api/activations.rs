//! Server functions of the activations pages: the filtered list and one activation with its
//! timeline per host. Times are formatted on the server, so pages read the same before and
//! after hydration.

use crate::error::UiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The list's filters as the URL carries them (`?launch_setting=&group=&application=&host=
/// &status=&from=&to=&page=`); empty means no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivationsQuery {
    pub launch_setting: String,
    pub group: String,
    pub application: String,
    pub host: String,
    pub status: String,
    /// Activations with a failure of this error type.
    pub error_type: String,
    pub from: String,
    pub to: String,
    /// Runs as the dashboard counts them: a group's activation, not its member runs again.
    #[serde(default)]
    pub top_level: bool,
    /// One-based.
    pub page: u64,
}

impl ActivationsQuery {
    /// No filter set (the page aside): the search matches every activation.
    pub fn is_unfiltered(&self) -> bool {
        [
            &self.launch_setting,
            &self.group,
            &self.application,
            &self.host,
            &self.status,
            &self.error_type,
            &self.from,
            &self.to,
        ]
        .iter()
        .all(|f| f.trim().is_empty())
    }
}

#[cfg(feature = "ssr")]
impl ActivationsQuery {
    /// The services' filter of the same search (the list and its bulk re-run select alike).
    pub fn filter(&self) -> am_services::activations::ActivationFilter {
        am_services::activations::ActivationFilter {
            launch_setting: Some(self.launch_setting.clone()),
            group: Some(self.group.clone()),
            application: Some(self.application.clone()),
            host: Some(self.host.clone()),
            status: Some(self.status.clone()),
            error_type: Some(self.error_type.clone()),
            from: Some(self.from.clone()),
            to: Some(self.to.clone()),
            top_level: Some(self.top_level),
        }
    }
}

/// An activation as a row of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivationRow {
    pub id: String,
    pub launch_setting: Option<String>,
    pub group: Option<String>,
    pub parent: Option<String>,
    pub position: Option<i32>,
    pub application: Option<String>,
    pub trigger: String,
    pub status: String,
    /// Still waiting, dispatched or running: it can be interrupted, not re-run.
    pub active: bool,
    /// Ended without succeeding: worth a re-run.
    pub rerunnable: bool,
    pub requested_by: Option<String>,
    pub created: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub started: Option<String>,
    pub finished: Option<String>,
    /// From start (or creation) to the end, or until now while running.
    pub duration: Option<String>,
    pub error: Option<String>,
    pub hosts: Vec<String>,
    pub failures: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivationsView {
    pub rows: Vec<ActivationRow>,
    /// Activations matching, on every page.
    pub total: u64,
    pub page: u64,
    pub has_more: bool,
    /// Choices of the filters.
    pub applications: Vec<String>,
    pub launch_settings: Vec<String>,
    pub groups: Vec<String>,
    pub statuses: Vec<String>,
    /// Whether the caller may re-run what the search found.
    pub can_operate: bool,
    /// When the server read the list: the base of its relative times.
    pub now: chrono::DateTime<chrono::Utc>,
}

/// One dispatch of the activation to a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunView {
    pub attempt: i32,
    pub fencing_token: i64,
    pub status: String,
    pub dispatched: String,
    pub accepted: Option<String>,
    pub started: Option<String>,
    pub last_heartbeat: Option<String>,
    pub finished: Option<String>,
    pub stop_requested: Option<String>,
    pub processed: i64,
    pub failed: i64,
    pub retried: i64,
    pub dead_lettered: i64,
    pub error: Option<String>,
}

/// One event of a timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventView {
    /// `HH:MM:SS.mmm`, the day being the activation's.
    pub time: String,
    pub at: String,
    /// `re-dispatched`, `accepted`, ...
    pub kind: String,
    /// Why, for kinds that carry a reason (`re-dispatched: <reason>`).
    pub reason: Option<String>,
    pub detail: Option<String>,
}

/// The timeline of one host, or of the manager (no host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneView {
    pub host: Option<String>,
    pub runs: Vec<RunView>,
    pub events: Vec<EventView>,
    pub failures: u64,
}

/// A count of failures of one error type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountView {
    pub error_type: String,
    pub count: u64,
}

/// One failure as pages show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureRow {
    pub id: i64,
    pub launch_setting: String,
    pub activation: String,
    pub host: String,
    pub application: String,
    pub agent: String,
    pub error_type: String,
    pub message: String,
    pub details: Option<String>,
    pub data_message_id: Option<String>,
    pub attempt: Option<i32>,
    pub occurred: String,
    pub dead_letter: Option<i64>,
    /// The agent said the condition is temporary (not counted by the breaker).
    pub temporary: bool,
    /// What the node did with the data message: `retry`, `park` or `dead-letter`.
    pub disposition: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivationDetailView {
    pub activation: ActivationRow,
    pub members: Vec<ActivationRow>,
    pub lanes: Vec<LaneView>,
    pub failures_total: u64,
    pub failures_by_type: Vec<CountView>,
    /// The reports besides the real failures (retried attempts, unavailable answers).
    pub failures_kinds: am_domain::failing::KindCounts,
    /// The newest failures; the drill-down has them all.
    pub failures: Vec<FailureRow>,
    pub more_failures: bool,
    /// What a re-run may start from, when the caller may re-run and the activation has ended.
    pub rerun: Option<am_domain::recovery::RerunChoices>,
    /// Whether the caller may interrupt or re-run it.
    pub can_operate: bool,
}

/// An id as lists show it (`01a21774…b46e`), which the global search finds again.
pub fn short_id(id: &str) -> String {
    am_domain::shortened::shorten(id)
}

#[cfg(feature = "ssr")]
pub(crate) mod present {
    //! Service values as pages show them.

    use super::*;
    use am_services::{activations::ActivationSummary, failures::FailureEntry};
    use chrono::{DateTime, Utc};

    pub fn time(t: DateTime<Utc>) -> String {
        am_domain::display::time(t)
    }

    pub fn clock(t: DateTime<Utc>) -> String {
        t.format("%H:%M:%S%.3f").to_string()
    }

    pub fn duration(d: chrono::Duration) -> String {
        let s = d.num_seconds().max(0);
        match s {
            0 => format!("{} ms", d.num_milliseconds().max(0)),
            1..60 => format!("{s} s"),
            60..3600 => format!("{} min {} s", s / 60, s % 60),
            _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
        }
    }

    pub fn activation(a: ActivationSummary, now: DateTime<Utc>) -> ActivationRow {
        use am_services::status::activation as status;
        let begin = a.started_at.unwrap_or(a.created_at);
        let end = a
            .finished_at
            .or_else(|| (a.status == status::RUNNING).then_some(now));
        ActivationRow {
            id: a.id.to_string(),
            launch_setting: a.launch_setting,
            group: a.group,
            parent: a.parent.map(|p| p.to_string()),
            position: a.position,
            application: a.application,
            trigger: a.trigger,
            active: status::ACTIVE.contains(&a.status.as_str()),
            rerunnable: !status::ACTIVE.contains(&a.status.as_str())
                && a.status != status::SUCCEEDED,
            status: a.status,
            requested_by: a.requested_by,
            created: time(a.created_at),
            created_at: a.created_at,
            started: a.started_at.map(time),
            finished: a.finished_at.map(time),
            duration: end.map(|e| duration(e - begin)),
            error: a.error,
            hosts: a.hosts,
            failures: a.failures,
        }
    }

    pub fn failure(f: FailureEntry) -> FailureRow {
        FailureRow {
            id: f.id,
            activation: f.activation.to_string(),
            launch_setting: f.launch_setting,
            host: f.host,
            application: f.application,
            agent: f.agent,
            error_type: f.error_type,
            message: f.message,
            details: f.details,
            data_message_id: f.data_message_id,
            attempt: f.attempt,
            occurred: time(f.occurred_at),
            dead_letter: f.dead_letter,
            temporary: f.temporary,
            disposition: f.disposition,
        }
    }

    pub fn counts(c: Vec<am_services::failures::ErrorTypeCount>) -> Vec<CountView> {
        c.into_iter()
            .map(|c| CountView {
                error_type: c.error_type,
                count: c.count,
            })
            .collect()
    }
}

/// Activations matching the filters, newest first.
#[server(prefix = "/ui", endpoint = "list_activations", input = Json)]
pub async fn list_activations(query: ActivationsQuery) -> Result<ActivationsView, UiError> {
    use super::ssr::*;
    use am_services::activations::{self, filter_statuses};
    let who = require(Operation::Read)?;
    let s = services()?;
    let page = activations::list(&s.db, &who, &query.filter(), Some(query.page), None).await?;
    let catalog = am_services::catalog::overview(&s.db, &who).await?;
    let now = chrono::Utc::now();
    Ok(ActivationsView {
        rows: page
            .items
            .into_iter()
            .map(|a| present::activation(a, now))
            .collect(),
        total: page.total,
        page: page.page,
        has_more: page.has_more,
        applications: catalog.applications.into_iter().map(|a| a.id).collect(),
        launch_settings: catalog.launch_settings.into_iter().map(|l| l.id).collect(),
        groups: catalog.schedule_groups.into_iter().map(|g| g.id).collect(),
        statuses: filter_statuses().map(str::to_owned).collect(),
        can_operate: who.role.may(Operation::Run),
        now,
    })
}

/// One activation: member runs, timeline per host, failures.
#[server(prefix = "/ui", endpoint = "activation_detail", input = Json)]
pub async fn activation_detail(id: String) -> Result<ActivationDetailView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let d = am_services::activations::get(&s.db, &who, &id).await?;
    let now = chrono::Utc::now();
    let lanes = d
        .timeline
        .into_iter()
        .map(|l| LaneView {
            host: l.host,
            failures: l.failures,
            runs: l
                .runs
                .into_iter()
                .map(|r| RunView {
                    attempt: r.attempt,
                    fencing_token: r.fencing_token,
                    status: r.status,
                    dispatched: present::time(r.dispatched_at),
                    accepted: r.accepted_at.map(present::time),
                    started: r.started_at.map(present::time),
                    last_heartbeat: r.last_heartbeat_at.map(present::time),
                    finished: r.finished_at.map(present::time),
                    stop_requested: r.stop_requested_at.map(present::time),
                    processed: r.processed,
                    failed: r.failed,
                    retried: r.retried,
                    dead_lettered: r.dead_lettered,
                    error: r.error,
                })
                .collect(),
            events: l
                .events
                .into_iter()
                .map(|e| {
                    let (kind, reason) = match e.kind.split_once(": ") {
                        Some((k, r)) => (k.to_owned(), Some(r.to_owned())),
                        None => (e.kind, None),
                    };
                    EventView {
                        time: present::clock(e.at),
                        at: present::time(e.at),
                        kind,
                        reason,
                        detail: e.detail,
                    }
                })
                .collect(),
        })
        .collect();
    let rerun = am_services::runtime::run::choices(&s.db, &s.runtime, &who, &id).await?;
    Ok(ActivationDetailView {
        rerun,
        can_operate: who.role.may(Operation::Run),
        activation: present::activation(d.activation, now),
        members: d
            .members
            .into_iter()
            .map(|m| present::activation(m, now))
            .collect(),
        lanes,
        failures_total: d.failures.total,
        failures_by_type: present::counts(d.failures.by_error_type),
        failures_kinds: d.failures.kinds,
        more_failures: d.failures.next.is_some(),
        failures: d
            .failures
            .entries
            .into_iter()
            .map(present::failure)
            .collect(),
    })
}

/// Re-runs an ended activation from where it broke (operators); returns the new activation's
/// id.
#[server(prefix = "/ui", endpoint = "rerun_activation", input = Json)]
pub async fn rerun_activation(
    id: String,
    how: am_domain::recovery::Rerun,
) -> Result<String, UiError> {
    use super::ssr::*;
    let who = require(Operation::Run)?;
    let s = services()?;
    let started = am_services::runtime::run::rerun(&s.db, &s.runtime, &who, &id, &how).await?;
    Ok(started.to_string())
}

/// Interrupts an activation still waiting or running (operators).
#[server(prefix = "/ui", endpoint = "interrupt_activation", input = Json)]
pub async fn interrupt_activation(id: String) -> Result<(), UiError> {
    use super::ssr::*;
    let who = require(Operation::Interrupt)?;
    let s = services()?;
    am_services::runtime::interrupt::interrupt(&s.db, &s.runtime, &who, &id).await?;
    Ok(())
}

/// One activation as a list row: what a page polls for the outcome of a re-run or interrupt.
#[server(prefix = "/ui", endpoint = "activation_summary", input = Json)]
pub async fn activation_summary(id: String) -> Result<ActivationRow, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let a = am_services::activations::summary(&services()?.db, &who, &id).await?;
    Ok(present::activation(a, chrono::Utc::now()))
}
