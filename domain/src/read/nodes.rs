//! The node registry as the API and the pages read it: nodes with their liveness, what an
//! application's nodes published and offer, and what the catalog could not take of it.

use crate::{publication::Refused, status::NodeStatus};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Which nodes to list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::IntoParams),
    into_params(parameter_in = Query)
)]
#[serde(default)]
pub struct NodeFilter {
    /// Only nodes of this application.
    pub application: Option<String>,
    /// Lost nodes too (no heartbeat within the node timeout); by default only live ones.
    pub include_lost: bool,
}

impl NodeFilter {
    /// The application filtered on; a blank one filters nothing.
    pub fn application(&self) -> Option<&str> {
        self.application.as_deref().filter(|a| !a.trim().is_empty())
    }
}

/// A node (one application on one host) as pages and the API show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeView {
    pub application: String,
    pub host: String,
    /// Version of the application the node runs (`unknown` before it published itself).
    pub version: String,
    /// The newest protocol version the node speaks: a node of version 1 works, but its failure
    /// reports carry no id, so one delivered twice may be counted twice.
    pub protocol: i32,
    /// Lost once no heartbeat came within the node timeout.
    pub status: NodeStatus,
    /// Activations running on the node.
    pub running: i32,
    /// Activations the node runs at once.
    pub capacity: i32,
    /// One-minute load average of the host (0 when the node does not know it).
    pub load: f64,
    pub started_at: DateTime<Utc>,
    pub last_heartbeat_at: DateTime<Utc>,
    /// Agents the node offers, by id.
    pub agents: Vec<String>,
    /// The node published itself while its application is not in the catalog: its agents and
    /// classifiers wait, and are applied as soon as the application is created.
    pub waiting_for_application: bool,
}

impl NodeView {
    /// Whether every slot of the node is taken.
    pub fn is_full(&self) -> bool {
        self.capacity > 0 && self.running >= self.capacity
    }
}

/// An agent of an application: in the catalog, offered by nodes, or both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentOffer {
    pub id: String,
    pub title: String,
    /// False for an agent nodes offer that the catalog could not take (the schema-drift page
    /// says why).
    pub in_catalog: bool,
    /// A messages agent waiting for an operator to pick its data queue.
    #[serde(default)]
    pub needs_data_queue: bool,
    /// `operator` or `node`, for agents in the catalog.
    pub declared_by: Option<String>,
    pub published_version: Option<String>,
    pub published_by_host: Option<String>,
    pub published_at: Option<DateTime<Utc>>,
    /// The schema a node last published differs from the catalog's.
    pub schema_differs: bool,
    /// Live nodes offering the agent, by host; empty when no live node does.
    pub offered_by: Vec<String>,
}

/// A classifier of an application.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassifierPublication {
    pub name: String,
    pub title: String,
    pub values: u64,
    /// When a node last published it; `None` for one only declared in the catalog.
    pub published_at: Option<DateTime<Utc>>,
}

/// What the nodes of an application published and offer now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplicationPublication {
    /// Hosts of the live nodes.
    pub live_hosts: Vec<String>,
    pub agents: Vec<AgentOffer>,
    pub classifiers: Vec<ClassifierPublication>,
}

/// What the catalog could not take of one node's last publication.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefusedPublication {
    pub application: String,
    pub host: String,
    pub refused: Vec<Refused>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_application_filters_nothing() {
        let blank = NodeFilter {
            application: Some("  ".into()),
            include_lost: false,
        };
        assert_eq!(blank.application(), None);
        let one = NodeFilter {
            application: Some("billing".into()),
            include_lost: true,
        };
        assert_eq!(one.application(), Some("billing"));
    }

    #[test]
    fn a_node_is_full_when_every_slot_is_taken() {
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let mut node = NodeView {
            application: "billing".into(),
            host: "app-01".into(),
            version: "1.0".into(),
            protocol: 2,
            status: NodeStatus::Live,
            running: 3,
            capacity: 4,
            load: 0.5,
            started_at: at,
            last_heartbeat_at: at,
            agents: vec![],
            waiting_for_application: false,
        };
        assert!(!node.is_full());
        node.running = 4;
        assert!(node.is_full());
        node.capacity = 0;
        assert!(
            !node.is_full(),
            "a node that states no capacity is never full"
        );
    }
}
