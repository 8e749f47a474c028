//! Server functions of the activations pages: the filtered list and one activation with its
//! timeline per host, as the API reads them (am_domain::read::activations). Pages format
//! times with am_domain::display, the same in the browser as on the server.

use crate::error::UiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
// As a module: the server functions `activation_detail` and `activation_summary` declare
// types of the names `ActivationDetail` and `ActivationSummary`.
use am_domain::read::activations::{self as read, ActivationFilter, ActivationPage};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The list's filters as the URL carries them (`?launch_setting=&group=&application=&host=
/// &status=&from=&to=&top_level=&page=`), and the page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivationsQuery {
    #[serde(flatten)]
    pub filter: ActivationFilter,
    /// One-based.
    pub page: u64,
}

/// One page of the list, with the choices of its filters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivationsView {
    pub page: ActivationPage,
    /// Choices of the filters.
    pub applications: Vec<String>,
    pub launch_settings: Vec<String>,
    pub groups: Vec<String>,
    pub statuses: Vec<String>,
    /// Whether the caller may re-run what the search found.
    pub can_operate: bool,
    /// When the server read the list: the base of its relative times and running durations.
    pub now: DateTime<Utc>,
}

/// One activation's page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivationDetailView {
    pub detail: read::ActivationDetail,
    /// What a re-run may start from, when the caller may re-run and the activation has ended.
    pub rerun: Option<am_domain::recovery::RerunChoices>,
    /// Whether the caller may interrupt or re-run it.
    pub can_operate: bool,
    /// When the server read it: the end of a running activation's duration.
    pub now: DateTime<Utc>,
}

/// An id as lists show it (`01a21774…b46e`), which the global search finds again.
pub fn short_id(id: &str) -> String {
    am_domain::shortened::shorten(id)
}

/// Activations matching the filters, newest first.
#[server(prefix = "/ui", endpoint = "list_activations", input = Json)]
pub async fn list_activations(query: ActivationsQuery) -> Result<ActivationsView, UiError> {
    use super::ssr::*;
    use am_services::activations::{self, filter_statuses};
    let who = require(Operation::Read)?;
    let s = services()?;
    let page = activations::list(&s.db, &who, &query.filter, Some(query.page), None).await?;
    let catalog = am_services::catalog::overview(&s.db, &who).await?;
    Ok(ActivationsView {
        page,
        applications: catalog.applications.into_iter().map(|a| a.id).collect(),
        launch_settings: catalog.launch_settings.into_iter().map(|l| l.id).collect(),
        groups: catalog.schedule_groups.into_iter().map(|g| g.id).collect(),
        statuses: filter_statuses().map(str::to_owned).collect(),
        can_operate: who.role.may(Operation::Run),
        now: Utc::now(),
    })
}

/// One activation: member runs, timeline per host, failures.
#[server(prefix = "/ui", endpoint = "activation_detail", input = Json)]
pub async fn activation_detail(id: String) -> Result<ActivationDetailView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let detail = am_services::activations::get(&s.db, &who, &id).await?;
    let rerun = am_services::runtime::run::choices(&s.db, &s.runtime, &who, &id).await?;
    Ok(ActivationDetailView {
        detail,
        rerun,
        can_operate: who.role.may(Operation::Run),
        now: Utc::now(),
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
pub async fn activation_summary(id: String) -> Result<read::ActivationSummary, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    Ok(am_services::activations::summary(&services()?.db, &who, &id).await?)
}
