#![doc = include_str!("../README.md")]

mod addresses;
mod agent;
mod breaker;
mod broker;
mod confirmed;
mod consumer;
mod context;
mod env;
mod error;
mod metrics;
mod node;
mod outbox;
mod runtime;
mod shared;
mod tally;
pub mod telemetry;
mod topology;

pub use addresses::{AddressError, BrokerAddresses};
pub use agent::{AgentSpec, Classifier, MessageAgent, StandaloneAgent};
pub use broker::{
    CLOSE_TIMEOUT, CONNECT_TIMEOUT, ConnectError, close, connect, connect_within,
    is_precondition_failed, lost_by,
};
pub use context::{Context, Message};
pub use error::{AgentError, ErrorKind, NodeError};
pub use metrics::NodeMetrics;
pub use node::{DEFAULT_AMQP_URL, Node, NodeBuilder};
pub use topology::{SUBSCRIPTION_DELIVERY_LIMIT, Topology};

/// The types and rules shared with the manager (catalog, parameters, wire protocol).
///
/// ```
/// use agent_client::domain::wire::names::Names;
/// assert_eq!(Names::default().reports_queue(), "am.reports");
/// ```
pub use am_domain as domain;

/// `docs/getting-started.md`: its Rust code compiles as a doctest, so the guide cannot drift
/// from the library.
#[cfg(doctest)]
#[doc = include_str!("../../docs/getting-started.md")]
pub struct GettingStarted;
