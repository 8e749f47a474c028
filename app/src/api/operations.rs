//! Server functions of bulk operations: their list and progress, cancelling one, and starting
//! the ones whose selection lives on other pages' searches (re-run the activations a search
//! found, re-enable disabled launch settings and groups). Dead-letter replay and delete are
//! started from the dead-letter pages.

use crate::error::UiError;
use am_domain::read::operations::{Disabled, OperationView};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The operations page: the newest operations, and whether the caller may act.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationsView {
    pub rows: Vec<OperationView>,
    pub can_operate: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisabledListView {
    pub disabled: Disabled,
    pub can_operate: bool,
}

#[server(prefix = "/ui", endpoint = "list_operations", input = Json)]
pub async fn list_operations() -> Result<OperationsView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let rows = am_services::operations::list(&s.db, &who, 100).await?;
    let rows = am_services::operations::views(&s.db, rows).await?;
    Ok(OperationsView {
        rows,
        can_operate: who.role.may(Operation::Bulk),
    })
}

#[server(prefix = "/ui", endpoint = "operation", input = Json)]
pub async fn operation(id: String) -> Result<OperationView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let id = am_services::operations::parse_id(&id)?;
    let s = services()?;
    let op = am_services::operations::get(&s.db, &who, id).await?;
    Ok(am_services::operations::view(&s.db, op).await?)
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
    use am_domain::read::operations::OperationRequest;
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
    use am_domain::read::operations::OperationRequest;
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
    use am_domain::read::operations::OperationRequest;
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
    Ok(DisabledListView {
        disabled: d,
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
    use am_domain::read::operations::OperationRequest;
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
