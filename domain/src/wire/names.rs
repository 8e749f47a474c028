//! Broker names of the topology, derived from a prefix so that several installations (or
//! tests) share one broker without touching each other's queues.
//!
//! ```
//! use am_domain::wire::names::Names;
//! let n = Names::new("am");
//! assert_eq!(n.subscription("billing.export.1"), "am.ls.billing.export.1");
//! assert_eq!(n.wait(std::time::Duration::from_millis(1500)), "am.wait.1500ms");
//! ```
//!
//! Data exchanges are the exception: a data queue's address is what producers publish to, so it
//! is used verbatim.

use std::time::Duration;

/// The prefix every name of an installation starts with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Names {
    prefix: String,
}

/// The prefix used when none is configured.
pub const DEFAULT_PREFIX: &str = "am";

impl Default for Names {
    fn default() -> Self {
        Self::new(DEFAULT_PREFIX)
    }
}

impl Names {
    pub fn new(prefix: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Direct exchange carrying manager → node commands.
    pub fn control_exchange(&self) -> String {
        format!("{}.control", self.prefix)
    }

    /// Routing key of one node on the control exchange.
    pub fn node_routing_key(&self, application: &str, host: &str) -> String {
        format!("node.{application}.{host}")
    }

    /// The control queue of one node (application on host).
    pub fn node_queue(&self, application: &str, host: &str) -> String {
        format!("{}.node.{application}.{host}", self.prefix)
    }

    /// Durable queue the manager reads every node report from.
    pub fn reports_queue(&self) -> String {
        format!("{}.reports", self.prefix)
    }

    /// Where unreadable control messages go, with the reason in a header.
    pub fn quarantine_queue(&self) -> String {
        format!("{}.quarantine", self.prefix)
    }

    /// The system dead-letter queue.
    pub fn dead_letter_queue(&self) -> String {
        format!("{}.dead-letters", self.prefix)
    }

    /// The shared subscription queue of a launch setting.
    pub fn subscription(&self, launch_setting: &str) -> String {
        format!("{}.ls.{launch_setting}", self.prefix)
    }

    /// The queue every launch setting of a `queue` (point-to-point) data queue consumes, so
    /// each message is processed by one of them.
    pub fn shared_queue(&self, data_queue: &str) -> String {
        format!("{}.dq.{data_queue}", self.prefix)
    }

    /// The alternate exchange of a data queue's exchange and the queue behind it: what no
    /// launch setting takes is kept there. Exchanges and queues have separate name spaces.
    pub fn unrouted(&self, data_queue: &str) -> String {
        format!("{}.dq.{data_queue}.unrouted", self.prefix)
    }

    /// Where messages of a Delayed launch setting wait for the data queue's delay, named by
    /// the delay: a changed delay gets a new queue while the old one drains.
    pub fn delay_queue(&self, launch_setting: &str, delay: Duration) -> String {
        format!(
            "{}.ls.{launch_setting}.delay.{}ms",
            self.prefix,
            delay.as_millis()
        )
    }

    /// The delay queue nodes of protocol version 1 declared themselves (no delay in its name);
    /// the reconciler unbinds and drains it when it adopts such an installation.
    pub fn legacy_delay_queue(&self, launch_setting: &str) -> String {
        format!("{}.ls.{launch_setting}.delay", self.prefix)
    }

    /// The wait exchange and queue of one delay, shared by every launch setting: a message
    /// published to it with the routing key of the queue it came from returns there after
    /// `delay` (retries and the park sump). One per delay, since a message expiring sooner
    /// would otherwise wait behind a longer one.
    pub fn wait(&self, delay: Duration) -> String {
        format!("{}.wait.{}ms", self.prefix, delay.as_millis())
    }
}
