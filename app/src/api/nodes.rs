//! Server functions of the node registry's pages: nodes, what an application's nodes published
//! and offer, and launch settings whose parameters drifted from the published schemas.

use crate::error::UiError;
use am_domain::{
    publication::Drift,
    read::nodes::{self as read, NodeView, RefusedPublication},
};
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The nodes page: the nodes with what the page needs around them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodesView {
    pub nodes: Vec<NodeView>,
    /// Applications, for the filter's choices.
    pub applications: Vec<String>,
    /// Seconds without a heartbeat after which a node is lost.
    pub timeout_secs: i64,
    /// The caller may create applications (the shortcut for a node waiting for its own).
    pub can_edit_catalog: bool,
    /// When the server read the nodes: heartbeat ages count from it, so the server's page and
    /// the hydrated one say the same.
    pub now: DateTime<Utc>,
}

/// The schema-drift page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriftView {
    pub rows: Vec<Drift>,
    /// What nodes published that the catalog could not take.
    pub refused: Vec<RefusedPublication>,
    /// Messages agents that wait for an operator to pick their data queue, as
    /// (application, agent).
    pub needs_data_queue: Vec<(String, String)>,
    pub applications: Vec<String>,
}

/// Nodes, of one application when `application` is not empty; lost ones when asked.
#[server(prefix = "/ui", endpoint = "list_nodes", input = Json)]
pub async fn list_nodes(application: String, include_lost: bool) -> Result<NodesView, UiError> {
    use super::ssr::*;
    use am_domain::read::nodes::NodeFilter;
    use am_services::registry;
    let who = require(Operation::Read)?;
    let s = services()?;
    let now = chrono::Utc::now();
    let timeout = s.settings.node_timeout;
    let filter = NodeFilter {
        application: Some(application),
        include_lost,
    };
    let nodes = registry::list(&s.db, &who, &filter, now, timeout).await?;
    let mut applications: Vec<String> = am_services::catalog::overview(&s.db, &who)
        .await?
        .applications
        .into_iter()
        .map(|a| a.id)
        .collect();
    // Nodes of applications the catalog does not know are listed too.
    for n in &nodes {
        if !applications.contains(&n.application) {
            applications.push(n.application.clone());
        }
    }
    applications.sort();
    Ok(NodesView {
        nodes,
        applications,
        timeout_secs: timeout.num_seconds(),
        can_edit_catalog: who.role.may(Operation::EditCatalog),
        now,
    })
}

/// The agents and classifiers of an application with what its nodes published and offer.
#[server(prefix = "/ui", endpoint = "application_publication", input = Json)]
pub async fn application_publication(
    application: String,
) -> Result<read::ApplicationPublication, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    Ok(am_services::registry::application_publication(
        &s.db,
        &who,
        &application,
        chrono::Utc::now(),
        s.settings.node_timeout,
    )
    .await?)
}

/// Launch settings whose parameters no longer pass their agent's published schema, of one
/// application when `application` is not empty.
#[server(prefix = "/ui", endpoint = "schema_drift", input = Json)]
pub async fn schema_drift(application: String) -> Result<DriftView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let wanted = |app: &str| application.is_empty() || app == application;
    let rows = am_services::registry::drift(&s.db, &who)
        .await?
        .into_iter()
        .filter(|d| wanted(&d.application))
        .collect();
    let refused = am_services::registry::refused_publications(&s.db, &who)
        .await?
        .into_iter()
        .filter(|p| wanted(&p.application))
        .collect();
    let needs_data_queue = am_services::registry::agents_needing_data_queue(&s.db, &who)
        .await?
        .into_iter()
        .filter(|(app, _)| wanted(app))
        .collect();
    let applications = am_services::catalog::overview(&s.db, &who)
        .await?
        .applications
        .into_iter()
        .map(|a| a.id)
        .collect();
    Ok(DriftView {
        rows,
        refused,
        needs_data_queue,
        applications,
    })
}
