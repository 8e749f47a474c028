//! Server functions of the node registry's pages: nodes, what an application's nodes published
//! and offer, and launch settings whose parameters drifted from the published schemas.

use crate::error::UiError;
use am_domain::FieldError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// One node as the nodes page shows it; times already formatted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRow {
    pub application: String,
    pub host: String,
    pub version: String,
    /// The newest protocol version the node speaks.
    pub protocol: i32,
    /// Its application is not in the catalog: what it published waits.
    pub waiting_for_application: bool,
    /// `live` or `lost`.
    pub status: String,
    pub running: i32,
    pub capacity: i32,
    pub load: f64,
    pub started: String,
    pub last_heartbeat: String,
    /// How long ago the last heartbeat came, e.g. `12 s ago`.
    pub heartbeat_age: String,
    pub agents: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodesView {
    pub nodes: Vec<NodeRow>,
    /// Applications, for the filter's choices.
    pub applications: Vec<String>,
    /// Seconds without a heartbeat after which a node is lost.
    pub timeout_secs: i64,
    /// The caller may create applications (the shortcut for a node waiting for its own).
    pub can_edit_catalog: bool,
}

/// An agent of an application with what nodes published and offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentOfferView {
    pub id: String,
    pub title: String,
    pub in_catalog: bool,
    /// A messages agent waiting for an operator to pick its data queue.
    pub needs_data_queue: bool,
    /// `operator` or `node`.
    pub declared_by: Option<String>,
    /// `1.4.2 from app-01, 2030-01-01 12:00:00 UTC`, when a node published it.
    pub published: Option<String>,
    pub schema_differs: bool,
    /// Hosts of the live nodes offering it.
    pub offered_by: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassifierInfo {
    pub name: String,
    pub title: String,
    pub values: u64,
    /// When a node last published it.
    pub published_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicationView {
    pub live_hosts: Vec<String>,
    pub agents: Vec<AgentOfferView>,
    pub classifiers: Vec<ClassifierInfo>,
}

/// A launch setting whose saved parameters its agent's published schema rejects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriftRow {
    pub launch_setting: String,
    pub application: String,
    pub agent: String,
    pub errors: Vec<FieldError>,
}

/// A change of a node's last publication that the catalog could not take, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedRow {
    pub application: String,
    pub host: String,
    /// What was refused, as `agent 'billing/export'`.
    pub entity: String,
    pub errors: Vec<FieldError>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriftView {
    pub rows: Vec<DriftRow>,
    /// What nodes published that the catalog could not take.
    pub refused: Vec<RefusedRow>,
    /// Messages agents that wait for an operator to pick their data queue, as
    /// (application, agent).
    pub needs_data_queue: Vec<(String, String)>,
    pub applications: Vec<String>,
}

#[cfg(feature = "ssr")]
mod present {
    //! Times as pages show them.

    use chrono::{DateTime, Utc};

    pub fn time(t: DateTime<Utc>) -> String {
        am_domain::display::time(t)
    }

    pub fn age(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
        let s = (now - t).num_seconds().max(0);
        match s {
            0..60 => format!("{s} s ago"),
            60..3600 => format!("{} min ago", s / 60),
            3600..86_400 => format!("{} h ago", s / 3600),
            _ => format!("{} days ago", s / 86_400),
        }
    }
}

/// Nodes, of one application when `application` is not empty; lost ones when asked.
#[server(prefix = "/ui", endpoint = "list_nodes", input = Json)]
pub async fn list_nodes(application: String, include_lost: bool) -> Result<NodesView, UiError> {
    use super::ssr::*;
    use am_services::registry::{self, NodeFilter};
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
        nodes: nodes
            .into_iter()
            .map(|n| NodeRow {
                started: present::time(n.started_at),
                last_heartbeat: present::time(n.last_heartbeat_at),
                heartbeat_age: present::age(n.last_heartbeat_at, now),
                application: n.application,
                host: n.host,
                version: n.version,
                protocol: n.protocol,
                waiting_for_application: n.waiting_for_application,
                status: n.status,
                running: n.running,
                capacity: n.capacity,
                load: n.load,
                agents: n.agents,
            })
            .collect(),
        applications,
        timeout_secs: timeout.num_seconds(),
        can_edit_catalog: who.role.may(Operation::EditCatalog),
    })
}

/// The agents and classifiers of an application with what its nodes published and offer.
#[server(prefix = "/ui", endpoint = "application_publication", input = Json)]
pub async fn application_publication(application: String) -> Result<PublicationView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let p = am_services::registry::application_publication(
        &s.db,
        &who,
        &application,
        chrono::Utc::now(),
        s.settings.node_timeout,
    )
    .await?;
    Ok(PublicationView {
        live_hosts: p.live_hosts,
        agents: p
            .agents
            .into_iter()
            .map(|a| AgentOfferView {
                published: a.published_at.map(|t| {
                    format!(
                        "{} from {}, {}",
                        a.published_version.as_deref().unwrap_or("?"),
                        a.published_by_host.as_deref().unwrap_or("?"),
                        present::time(t)
                    )
                }),
                id: a.id,
                title: a.title,
                in_catalog: a.in_catalog,
                needs_data_queue: a.needs_data_queue,
                declared_by: a.declared_by,
                schema_differs: a.schema_differs,
                offered_by: a.offered_by,
            })
            .collect(),
        classifiers: p
            .classifiers
            .into_iter()
            .map(|c| ClassifierInfo {
                name: c.name,
                title: c.title,
                values: c.values,
                published_at: c.published_at.map(present::time),
            })
            .collect(),
    })
}

/// Launch settings whose parameters no longer pass their agent's published schema, of one
/// application when `application` is not empty.
#[server(prefix = "/ui", endpoint = "schema_drift", input = Json)]
pub async fn schema_drift(application: String) -> Result<DriftView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let rows = am_services::registry::drift(&s.db, &who)
        .await?
        .into_iter()
        .filter(|d| application.is_empty() || d.application == application)
        .map(|d| DriftRow {
            launch_setting: d.launch_setting,
            application: d.application,
            agent: d.agent,
            errors: d.errors.0,
        })
        .collect();
    let wanted = |app: &str| application.is_empty() || app == application;
    let refused = am_services::registry::refused_publications(&s.db, &who)
        .await?
        .into_iter()
        .filter(|p| wanted(&p.application))
        .flat_map(|p| {
            p.refused.into_iter().map(move |r| RefusedRow {
                application: p.application.clone(),
                host: p.host.clone(),
                entity: r.entity.to_string(),
                errors: r.errors.0,
            })
        })
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
