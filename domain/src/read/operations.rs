//! Bulk operations as operators ask for them and as the API and the pages read them: the
//! request, what it does in words, and its progress.

use super::{activations::ActivationFilter, dead_letters::Selection};
use crate::{recovery::ReplayOutcomes, roles::Operation, status::OperationStatus, words::words};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

words! {
    /// What a bulk operation does (`operations.kind`, and the `kind` of its request).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum OperationKind {
        ReplayDeadLetters = "replay-dead-letters",
        DeleteDeadLetters = "delete-dead-letters",
        RerunActivations = "rerun-activations",
        InterruptActivations = "interrupt-activations",
        EnableLaunchSettings = "enable-launch-settings",
        EnableScheduleGroups = "enable-schedule-groups",
        ReplayUnrouted = "replay-unrouted",
        ConsistencySweep = "consistency-sweep",
    }
}

impl OperationKind {
    /// What it does, as a page's title.
    pub fn title(self) -> &'static str {
        match self {
            OperationKind::ReplayDeadLetters => "Replay dead letters",
            OperationKind::DeleteDeadLetters => "Delete dead letters",
            OperationKind::RerunActivations => "Re-run activations",
            OperationKind::InterruptActivations => "Interrupt activations",
            OperationKind::EnableLaunchSettings => "Re-enable launch settings",
            OperationKind::EnableScheduleGroups => "Re-enable schedule groups",
            OperationKind::ReplayUnrouted => "Replay unrouted messages",
            OperationKind::ConsistencySweep => "Consistency sweep",
        }
    }
}

/// What an operator asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum OperationRequest {
    /// Publish dead letters back to the subscription of the launch setting that gave up on
    /// them, with a fresh attempt count; they are marked replayed by the requester.
    ReplayDeadLetters {
        selection: Selection,
        /// Canary replay: replay this many first, wait for what becomes of them, and go on
        /// only if every one was processed; the operation stops by itself when one fails
        /// again, waits behind a disabled launch setting, or has no outcome within 5 minutes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        canary: Option<u32>,
        /// At most this many dead letters per second.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate_per_second: Option<u32>,
    },
    DeleteDeadLetters {
        selection: Selection,
    },
    /// Run again what these activations ran: the launch setting, or the group of a group
    /// activation; a member run of a group re-runs its launch setting alone. Each launch
    /// setting or group runs once, however many of the activations ran it.
    RerunActivations {
        /// Exactly these activations; when empty, every activation `filter` matches.
        #[serde(default)]
        ids: Vec<Uuid>,
        #[serde(default)]
        filter: ActivationFilter,
        /// Re-run each from where it broke instead (docs/runtime.md, Re-run): the newest run
        /// that failed or was interrupted of each launch setting or group (a member's run
        /// stands for its group's), a group from its first member that did not succeed, a
        /// launch setting on the hosts that failed when others succeeded.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        from_where_it_broke: bool,
    },
    /// Interrupt those of these activations still waiting, dispatched or running, each as
    /// `POST /api/v1/activations/{id}/interrupt` does (a member run whose group's run is among
    /// them goes with its group). One that ended meanwhile is left as it ended.
    InterruptActivations {
        /// Exactly these activations; when empty, every activation `filter` matches.
        #[serde(default)]
        ids: Vec<Uuid>,
        #[serde(default)]
        filter: ActivationFilter,
    },
    EnableLaunchSettings {
        ids: Vec<String>,
    },
    EnableScheduleGroups {
        ids: Vec<String>,
    },
    /// Give the messages no launch setting took (kept in the data queue's unrouted queue) back
    /// to the data queue, now that a launch setting may take them: at most as many as the
    /// unrouted queue held when the operation started, oldest first. A message that still
    /// matches no launch setting goes back to the unrouted queue.
    ReplayUnrouted {
        data_queue: String,
    },
    /// Check every activation in progress when it started against what the nodes report and
    /// the outbox holds, and repair what can be (docs/runtime.md, Consistency sweep): waiting
    /// while a node could take it (dispatched now), a launch command missing from the outbox
    /// (written again) or still unsent (reported), a run on a node that is gone or no longer
    /// lists it (lost, then settled). Each finding is listed with whether it was repaired.
    ConsistencySweep {},
}

impl OperationRequest {
    /// Its kind, which its `kind` tag spells.
    pub fn kind(&self) -> OperationKind {
        match self {
            OperationRequest::ReplayDeadLetters { .. } => OperationKind::ReplayDeadLetters,
            OperationRequest::DeleteDeadLetters { .. } => OperationKind::DeleteDeadLetters,
            OperationRequest::RerunActivations { .. } => OperationKind::RerunActivations,
            OperationRequest::InterruptActivations { .. } => OperationKind::InterruptActivations,
            OperationRequest::EnableLaunchSettings { .. } => OperationKind::EnableLaunchSettings,
            OperationRequest::EnableScheduleGroups { .. } => OperationKind::EnableScheduleGroups,
            OperationRequest::ReplayUnrouted { .. } => OperationKind::ReplayUnrouted,
            OperationRequest::ConsistencySweep {} => OperationKind::ConsistencySweep,
        }
    }

    /// What the requester asks to do, for the role it needs.
    pub fn operation(&self) -> Operation {
        match self {
            OperationRequest::ReplayDeadLetters { .. }
            | OperationRequest::DeleteDeadLetters { .. }
            | OperationRequest::ReplayUnrouted { .. } => Operation::HandleDeadLetters,
            OperationRequest::RerunActivations { .. } => Operation::Run,
            OperationRequest::InterruptActivations { .. } => Operation::Interrupt,
            OperationRequest::EnableLaunchSettings { .. }
            | OperationRequest::EnableScheduleGroups { .. } => Operation::Toggle,
            OperationRequest::ConsistencySweep {} => Operation::Repair,
        }
    }

    /// What it selected, in words: `billing-export, billing-import`, `12 selected dead
    /// letters`, `activations matching status = failed`.
    pub fn selection(&self) -> String {
        match self {
            OperationRequest::EnableLaunchSettings { ids }
            | OperationRequest::EnableScheduleGroups { ids } => list(ids),
            OperationRequest::RerunActivations {
                ids,
                filter,
                from_where_it_broke,
            } => {
                let which = activations("activations", ids, filter);
                if *from_where_it_broke {
                    format!("{which}, each from where it broke")
                } else {
                    which
                }
            }
            OperationRequest::InterruptActivations { ids, filter } => {
                activations("running activations", ids, filter)
            }
            OperationRequest::ReplayDeadLetters { selection, .. }
            | OperationRequest::DeleteDeadLetters { selection } => {
                if selection.ids.is_empty() {
                    format!("dead letters matching {}", describe(&selection.filter))
                } else {
                    format!("{} selected dead letters", selection.ids.len())
                }
            }
            OperationRequest::ReplayUnrouted { data_queue } => {
                format!("unrouted messages of data queue {data_queue}")
            }
            OperationRequest::ConsistencySweep {} => "every activation in progress".to_owned(),
        }
    }
}

/// The first few of `ids`, and how many more.
fn list(ids: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = ids
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        s.push_str(&format!(" and {} more", ids.len() - SHOWN));
    }
    s
}

fn activations(what: &str, ids: &[Uuid], filter: &ActivationFilter) -> String {
    if ids.is_empty() {
        format!("{what} matching {}", describe(filter))
    } else {
        format!("{} selected activations", ids.len())
    }
}

/// A filter in words: its non-empty fields, or "all".
fn describe(filter: &impl Serialize) -> String {
    let fields: Vec<String> = serde_json::to_value(filter)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(k, v)| match v {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) if s.trim().is_empty() => None,
            serde_json::Value::String(s) => Some(format!("{k} = {s}")),
            other => Some(format!("{k} = {other}")),
        })
        .collect();
    if fields.is_empty() {
        "no filter (all)".to_owned()
    } else {
        fields.join(", ")
    }
}

/// An item that failed, as kept in `errors`; for a consistency sweep, also what it found wrong
/// and repaired (`repaired: true`, not counted as failed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ItemError {
    pub item: String,
    pub error: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repaired: bool,
}

/// An operation as the API and the pages show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OperationView {
    pub id: Uuid,
    /// `replay-dead-letters`, `delete-dead-letters`, `rerun-activations`,
    /// `interrupt-activations`, `enable-launch-settings`, `enable-schedule-groups`,
    /// `replay-unrouted` or `consistency-sweep`.
    pub kind: String,
    /// `queued`, `running`, `succeeded`, `failed` (finished, some items failed) or `cancelled`.
    pub status: String,
    pub requested_by: String,
    pub total: i64,
    pub done: i64,
    pub failed: i64,
    /// The first errors (at most 50), one per failed item; a sweep's repaired findings too.
    pub errors: Vec<ItemError>,
    pub cancel_requested: bool,
    /// What was asked for.
    pub request: Option<OperationRequest>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
    /// A dead-letter replay: what became of the dead letters it sent, as the nodes reported
    /// (`done` counts those the broker took, not those processed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_outcomes: Option<ReplayOutcomes>,
}

impl OperationView {
    /// Still queued or running: pages keep refreshing it.
    pub fn is_active(&self) -> bool {
        OperationStatus::parse(&self.status).is_some_and(OperationStatus::is_active)
    }

    /// What it does, as a page's title (its kind's word when the manager does not know it).
    pub fn title(&self) -> &str {
        match OperationKind::parse(&self.kind) {
            Some(kind) => kind.title(),
            None => &self.kind,
        }
    }

    /// What it selected, in words (empty when its request is not readable).
    pub fn selection(&self) -> String {
        self.request
            .as_ref()
            .map(OperationRequest::selection)
            .unwrap_or_default()
    }
}

/// A disabled launch setting or schedule group, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisabledEntity {
    pub id: String,
    pub reason: Option<String>,
}

/// What is disabled now, as a re-enable operation selects from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disabled {
    pub launch_settings: Vec<DisabledEntity>,
    pub groups: Vec<DisabledEntity>,
}

#[cfg(test)]
mod tests;
