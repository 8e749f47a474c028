//! The broker objects that carry data, as plain values: exchanges, queues and bindings with
//! every argument spelled out. [`Layout`] is the one place that builds them (names from
//! [`crate::wire::names::Names`], arguments here); the manager's reconciler declares what
//! [`Layout::desired`] derives from the catalog, nodes only check that what they consume
//! exists, and [`plan`] says how to get from what the broker has to what the catalog wants
//! without losing or doubling a message. The whole picture is in `docs/protocol.md`.

mod layout;
mod plan;

pub use layout::{
    Layout, MAX_WAIT_LEVELS, SUBSCRIPTION_DELIVERY_LIMIT, consumed_data_queue, wait_delays,
};
pub use plan::{Departure, Leaving, Plan, plan};

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// An argument value of a declaration or binding (AMQP long string or 64-bit integer).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Arg {
    Int(i64),
    Str(String),
}

impl Arg {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Arg::Str(s) => Some(s),
            Arg::Int(_) => None,
        }
    }
}

impl From<&str> for Arg {
    fn from(s: &str) -> Self {
        Arg::Str(s.to_owned())
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Self {
        Arg::Str(s)
    }
}

impl From<i64> for Arg {
    fn from(v: i64) -> Self {
        Arg::Int(v)
    }
}

/// Arguments by name, in a stable order (they are compared and stored).
pub type Args = BTreeMap<String, Arg>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExchangeType {
    Direct,
    Fanout,
    Headers,
}

impl ExchangeType {
    pub fn as_str(self) -> &'static str {
        match self {
            ExchangeType::Direct => "direct",
            ExchangeType::Fanout => "fanout",
            ExchangeType::Headers => "headers",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    pub name: String,
    pub kind: ExchangeType,
    #[serde(default)]
    pub args: Args,
}

/// What a queue is for: decides how it leaves when the catalog no longer wants it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum QueueRole {
    /// Dead letters, reports, quarantine: always wanted.
    System,
    /// The subscription of one launch setting on a `topic` data queue.
    Subscription {
        launch_setting: String,
        data_queue: String,
        /// Longest time a message of this launch setting can spend in a wait queue (its
        /// longest retry delay or park cool-down), in ms: a leaving subscription is kept this
        /// long after it is unbound, so those messages come back to it before it is emptied.
        hold_ms: u64,
    },
    /// The one queue all launch settings of a `queue` data queue consume.
    Shared { data_queue: String, hold_ms: u64 },
    /// A Delayed launch setting's messages waiting for the data queue's delay.
    Delay {
        launch_setting: String,
        data_queue: String,
    },
    /// Messages waiting for one retry delay or park cool-down, of every launch setting.
    Wait,
    /// What no launch setting of a data queue took.
    Unrouted { data_queue: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    pub name: String,
    #[serde(flatten)]
    pub role: QueueRole,
    #[serde(default)]
    pub args: Args,
}

/// The roles of the queues whose depth is sampled (the manager's queue depth samples).
pub mod queue_role {
    /// A launch setting's own subscription queue (`topic` data queues).
    pub const SUBSCRIPTION: &str = "subscription";
    /// A `queue` data queue's queue, shared by its launch settings.
    pub const SHARED: &str = "shared";
    /// What no launch setting of a data queue took.
    pub const UNROUTED: &str = "unrouted";
}

/// The kinds of broker object the reconciler keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ObjectKind {
    Exchange,
    Queue,
    Binding,
}

impl ObjectKind {
    /// Its name, for people.
    pub fn label(self) -> &'static str {
        match self {
            ObjectKind::Exchange => "exchange",
            ObjectKind::Queue => "queue",
            ObjectKind::Binding => "binding",
        }
    }
}

/// How the broker differs from what the reconciler keeps for one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum DriftState {
    /// Applied once, but the broker no longer has it (removed outside the manager): the next
    /// full pass declares it again.
    Missing,
    /// The broker has it with other arguments and refused the declaration; an operator
    /// decides what becomes of its messages (the manager never deletes a queue that holds some).
    WrongArguments,
    /// The broker refused it for another reason; every pass tries again.
    Refused,
}

impl DriftState {
    /// What it means, for people.
    pub fn describe(self) -> &'static str {
        match self {
            DriftState::Missing => "missing: removed outside the manager",
            DriftState::WrongArguments => "exists with other arguments",
            DriftState::Refused => "refused by the broker",
        }
    }
}

/// Broker argument names used by the layout.
pub mod arg {
    pub const QUEUE_TYPE: &str = "x-queue-type";
    pub const DELIVERY_LIMIT: &str = "x-delivery-limit";
    pub const DEAD_LETTER_EXCHANGE: &str = "x-dead-letter-exchange";
    pub const DEAD_LETTER_ROUTING_KEY: &str = "x-dead-letter-routing-key";
    pub const MESSAGE_TTL: &str = "x-message-ttl";
    pub const EXPIRES: &str = "x-expires";
    pub const ALTERNATE_EXCHANGE: &str = "alternate-exchange";
    pub const MATCH: &str = "x-match";
}

impl Queue {
    /// Where the broker sends this queue's expired or rejected messages, when it names a queue.
    pub fn dead_letter_target(&self) -> Option<&str> {
        self.args
            .get(arg::DEAD_LETTER_ROUTING_KEY)
            .and_then(Arg::as_str)
    }

    /// Whether declaring `other` over this queue would be accepted by the broker.
    pub fn same_declaration(&self, other: &Queue) -> bool {
        self.name == other.name && self.args == other.args
    }

    /// How long a leaving queue is kept before its messages are moved away (see
    /// [`QueueRole::Subscription`]).
    pub fn hold_ms(&self) -> u64 {
        match &self.role {
            QueueRole::Subscription { hold_ms, .. } | QueueRole::Shared { hold_ms, .. } => *hold_ms,
            _ => 0,
        }
    }
}

/// A binding of a queue to an exchange. Headers exchanges match on `args`; the routing key is
/// always empty in this layout (headers and fanout exchanges ignore it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Binding {
    pub queue: String,
    pub exchange: String,
    #[serde(default)]
    pub args: Args,
}

/// A set of broker objects: what the catalog wants, or what the reconciler last applied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerObjects {
    pub exchanges: BTreeMap<String, Exchange>,
    pub queues: BTreeMap<String, Queue>,
    pub bindings: BTreeSet<Binding>,
}

impl BrokerObjects {
    pub fn add_exchange(&mut self, exchange: Exchange) {
        self.exchanges.insert(exchange.name.clone(), exchange);
    }

    pub fn add_queue(&mut self, queue: Queue) {
        self.queues.insert(queue.name.clone(), queue);
    }

    pub fn bind(&mut self, binding: Binding) {
        self.bindings.insert(binding);
    }

    pub fn is_empty(&self) -> bool {
        self.exchanges.is_empty() && self.queues.is_empty() && self.bindings.is_empty()
    }
}

#[cfg(test)]
mod tests;
