//! Server functions of bulk operations: their list and progress, cancelling one, and starting
//! the ones whose selection lives on other pages' searches (re-run the activations a search
//! found, re-enable disabled launch settings and groups). Dead-letter replay and delete are
//! started from the dead-letter pages.

use crate::error::UiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// An item of an operation that failed (or, for a consistency sweep, was found wrong and
/// repaired).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemErrorView {
    pub item: String,
    pub error: String,
    pub repaired: bool,
}

/// An operation as pages show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationRow {
    pub id: String,
    pub kind: String,
    /// What it does, in words ("Replay dead letters").
    pub title: String,
    pub status: String,
    pub requested_by: String,
    pub total: u64,
    pub done: u64,
    pub failed: u64,
    pub errors: Vec<ItemErrorView>,
    pub cancel_requested: bool,
    pub created: String,
    pub finished: Option<String>,
    /// What was selected, in words.
    pub selection: String,
    /// A dead-letter replay: what became of what it sent.
    pub replay_outcomes: Option<am_domain::recovery::ReplayOutcomes>,
}

impl OperationRow {
    /// Still queued or running: pages keep refreshing it.
    pub fn active(&self) -> bool {
        am_domain::status::OperationStatus::parse(&self.status)
            .is_some_and(am_domain::status::OperationStatus::is_active)
    }

    /// Whole percent of the items processed (done or failed).
    pub fn percent(&self) -> u64 {
        (self.done + self.failed)
            .saturating_mul(100)
            .checked_div(self.total)
            .unwrap_or(100)
            .min(100)
    }
}

/// The operations page: the newest operations, and whether the caller may act.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationsView {
    pub rows: Vec<OperationRow>,
    pub can_operate: bool,
}

/// A disabled launch setting or group, as the re-enable form lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisabledView {
    pub id: String,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisabledListView {
    pub launch_settings: Vec<DisabledView>,
    pub groups: Vec<DisabledView>,
    pub can_operate: bool,
}

#[cfg(feature = "ssr")]
pub(crate) mod present {
    use super::*;
    use am_services::operations::{OperationRequest, OperationView};

    fn title(kind: &str) -> String {
        match kind {
            "replay-dead-letters" => "Replay dead letters",
            "delete-dead-letters" => "Delete dead letters",
            "rerun-activations" => "Re-run activations",
            "enable-launch-settings" => "Re-enable launch settings",
            "enable-schedule-groups" => "Re-enable schedule groups",
            "replay-unrouted" => "Replay unrouted messages",
            "consistency-sweep" => "Consistency sweep",
            other => other,
        }
        .to_owned()
    }

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

    fn selection(request: Option<&OperationRequest>) -> String {
        let Some(request) = request else {
            return String::new();
        };
        match request {
            OperationRequest::EnableLaunchSettings { ids }
            | OperationRequest::EnableScheduleGroups { ids } => list(ids),
            OperationRequest::RerunActivations {
                ids,
                filter,
                from_where_it_broke,
            } => {
                let which = if ids.is_empty() {
                    format!("activations matching {}", describe(filter))
                } else {
                    format!("{} selected activations", ids.len())
                };
                if *from_where_it_broke {
                    format!("{which}, each from where it broke")
                } else {
                    which
                }
            }
            OperationRequest::InterruptActivations { ids, filter } => {
                if ids.is_empty() {
                    format!("running activations matching {}", describe(filter))
                } else {
                    format!("{} selected activations", ids.len())
                }
            }
            OperationRequest::ReplayDeadLetters { selection, .. }
            | OperationRequest::DeleteDeadLetters { selection }
                if selection.ids.is_empty() =>
            {
                format!("dead letters matching {}", describe(&selection.filter))
            }
            OperationRequest::ReplayDeadLetters { selection, .. }
            | OperationRequest::DeleteDeadLetters { selection } => {
                format!("{} selected dead letters", selection.ids.len())
            }
            OperationRequest::ReplayUnrouted { data_queue } => {
                format!("unrouted messages of data queue {data_queue}")
            }
            OperationRequest::ConsistencySweep {} => "every activation in progress".to_owned(),
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

    pub fn row(v: OperationView) -> OperationRow {
        let id = v.id.to_string();
        OperationRow {
            id,
            title: title(&v.kind),
            selection: selection(v.request.as_ref()),
            kind: v.kind,
            status: v.status,
            requested_by: v.requested_by,
            total: u64::try_from(v.total).unwrap_or(0),
            done: u64::try_from(v.done).unwrap_or(0),
            failed: u64::try_from(v.failed).unwrap_or(0),
            errors: v
                .errors
                .into_iter()
                .map(|e| ItemErrorView {
                    item: e.item,
                    error: e.error,
                    repaired: e.repaired,
                })
                .collect(),
            cancel_requested: v.cancel_requested,
            created: am_domain::display::time(v.created_at),
            finished: v.finished_at.map(am_domain::display::time),
            replay_outcomes: v.replay_outcomes,
        }
    }
}

#[server(prefix = "/ui", endpoint = "list_operations", input = Json)]
pub async fn list_operations() -> Result<OperationsView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let rows = am_services::operations::list(&s.db, &who, 100).await?;
    let rows = am_services::operations::views(&s.db, rows).await?;
    Ok(OperationsView {
        rows: rows.into_iter().map(present::row).collect(),
        can_operate: who.role.may(Operation::Bulk),
    })
}

#[server(prefix = "/ui", endpoint = "operation", input = Json)]
pub async fn operation(id: String) -> Result<OperationRow, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let id = am_services::operations::parse_id(&id)?;
    let s = services()?;
    let op = am_services::operations::get(&s.db, &who, id).await?;
    Ok(present::row(
        am_services::operations::view(&s.db, op).await?,
    ))
}

/// Cancels an operation (operators).
#[server(prefix = "/ui", endpoint = "cancel_operation", input = Json)]
pub async fn cancel_operation(id: String) -> Result<(), UiError> {
    use super::ssr::*;
    let who = require(Operation::Bulk)?;
    let id = am_services::operations::parse_id(&id)?;
    am_services::operations::cancel(&services()?.db, &who, id).await?;
    Ok(())
}

/// Re-runs what the activations matching `query` ran (operators), whole or each from where it
/// broke; returns the operation id.
#[server(prefix = "/ui", endpoint = "rerun_activations", input = Json)]
pub async fn rerun_activations(
    query: crate::api::activations::ActivationsQuery,
    from_where_it_broke: bool,
) -> Result<String, UiError> {
    use super::ssr::*;
    use am_services::operations::OperationRequest;
    let who = require(Operation::Run)?;
    let filter = query.filter;
    let op = am_services::operations::start(
        &services()?,
        &who,
        OperationRequest::RerunActivations {
            ids: vec![],
            filter,
            from_where_it_broke,
        },
    )
    .await?;
    Ok(op.id.to_string())
}

/// How many re-runs [`rerun_activations`] of `query` would start (operators), asked before it.
#[server(prefix = "/ui", endpoint = "rerun_count", input = Json)]
pub async fn rerun_count(
    query: crate::api::activations::ActivationsQuery,
    from_where_it_broke: bool,
) -> Result<u64, UiError> {
    use super::ssr::*;
    let who = require(Operation::Run)?;
    let s = services()?;
    Ok(
        am_services::operations::rerun_count(&s.db, &who, &query.filter, from_where_it_broke)
            .await?,
    )
}

/// Interrupts the activations matching `query` still waiting or running (operators), as one
/// bulk operation; returns the operation id.
#[server(prefix = "/ui", endpoint = "interrupt_matching", input = Json)]
pub async fn interrupt_matching(
    query: crate::api::activations::ActivationsQuery,
) -> Result<String, UiError> {
    use super::ssr::*;
    use am_services::operations::OperationRequest;
    let who = require(Operation::Interrupt)?;
    let op = am_services::operations::start(
        &services()?,
        &who,
        OperationRequest::InterruptActivations {
            ids: vec![],
            filter: query.filter,
        },
    )
    .await?;
    Ok(op.id.to_string())
}

/// How many activations [`interrupt_matching`] of `query` would interrupt (operators), asked
/// before it.
#[server(prefix = "/ui", endpoint = "interrupt_count", input = Json)]
pub async fn interrupt_count(
    query: crate::api::activations::ActivationsQuery,
) -> Result<u64, UiError> {
    use super::ssr::*;
    let who = require(Operation::Interrupt)?;
    let s = services()?;
    Ok(am_services::operations::interrupt_count(&s.db, &who, &query.filter).await?)
}

/// Starts a consistency sweep of the activations in progress (operators); returns the
/// operation id.
#[server(prefix = "/ui", endpoint = "start_sweep", input = Json)]
pub async fn start_sweep() -> Result<String, UiError> {
    use super::ssr::*;
    use am_services::operations::OperationRequest;
    let who = require(Operation::Repair)?;
    let op =
        am_services::operations::start(&services()?, &who, OperationRequest::ConsistencySweep {})
            .await?;
    Ok(op.id.to_string())
}

/// Disabled launch settings and groups, with why.
#[server(prefix = "/ui", endpoint = "disabled_entities", input = Json)]
pub async fn disabled_entities() -> Result<DisabledListView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let d = am_services::operations::disabled(&services()?.db, &who).await?;
    let map = |rows: Vec<(String, Option<String>)>| {
        rows.into_iter()
            .map(|(id, reason)| DisabledView { id, reason })
            .collect()
    };
    Ok(DisabledListView {
        launch_settings: map(d.launch_settings),
        groups: map(d.groups),
        can_operate: who.role.may(Operation::Bulk),
    })
}

/// Re-enables the chosen launch settings and groups (operators): one operation per kind
/// chosen; returns their ids.
#[server(prefix = "/ui", endpoint = "reenable", input = Json)]
pub async fn reenable(
    launch_settings: Vec<String>,
    groups: Vec<String>,
) -> Result<Vec<String>, UiError> {
    use super::ssr::*;
    use am_services::operations::OperationRequest;
    let who = require(Operation::Toggle)?;
    let s = services()?;
    if launch_settings.is_empty() && groups.is_empty() {
        return Err(am_services::ServiceError::invalid(
            "",
            "choose at least one launch setting or group to re-enable",
        )
        .into());
    }
    let mut ids = Vec::new();
    if !launch_settings.is_empty() {
        let op = am_services::operations::start(
            &s,
            &who,
            OperationRequest::EnableLaunchSettings {
                ids: launch_settings,
            },
        )
        .await?;
        ids.push(op.id.to_string());
    }
    if !groups.is_empty() {
        let op = am_services::operations::start(
            &s,
            &who,
            OperationRequest::EnableScheduleGroups { ids: groups },
        )
        .await?;
        ids.push(op.id.to_string());
    }
    Ok(ids)
}
