//! [`NodeBuilder`] registers agents and classifiers and starts a [`Node`].

use crate::{
    AgentSpec, BrokerAddresses, Classifier, MessageAgent, NodeError, NodeMetrics, StandaloneAgent,
    Topology, agent::Registered, runtime, shared::Shared,
};
use am_domain::{ids, params::validate_schema};
use std::{collections::HashSet, sync::Arc, time::Duration};

/// The default broker URL, as the manager's.
pub const DEFAULT_AMQP_URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";

/// Configures and starts a node: one application on one host.
///
/// ```no_run
/// use agent_client::{AgentError, AgentSpec, Context, NodeBuilder, StandaloneAgent};
///
/// struct Hello;
/// impl StandaloneAgent for Hello {
///     type Params = serde_json::Value;
///     async fn run(&self, _ctx: Context<Self::Params>) -> Result<(), AgentError> { Ok(()) }
/// }
///
/// # async fn f() -> Result<(), agent_client::NodeError> {
/// let node = NodeBuilder::new("billing", "host-a")
///     .amqp_url("amqp://guest:guest@127.0.0.1:5672/%2f")
///     .capacity(4)
///     .standalone(AgentSpec::new("hello").title("Say hello"), Hello)
///     .start()
///     .await?;
/// node.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct NodeBuilder {
    pub(crate) application: String,
    pub(crate) host: String,
    pub(crate) version: String,
    pub(crate) amqp_url: String,
    pub(crate) topology: Topology,
    pub(crate) capacity: u32,
    pub(crate) heartbeat_every: Duration,
    pub(crate) interrupt_grace: Duration,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) outbox_capacity: usize,
    pub(crate) default_idle_timeout: Duration,
    pub(crate) agents: Vec<(AgentSpec, Registered)>,
    pub(crate) classifiers: Vec<Classifier>,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Registered::Standalone(_) => "Standalone",
            Registered::Messages(_) => "Messages",
        })
    }
}

impl NodeBuilder {
    /// A node of `application` on `host` (each `[a-z0-9][a-z0-9._-]*`-style identifiers).
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "host-a");
    /// ```
    pub fn new(application: impl Into<String>, host: impl Into<String>) -> Self {
        Self {
            application: application.into(),
            host: host.into(),
            version: String::new(),
            amqp_url: DEFAULT_AMQP_URL.to_owned(),
            topology: Topology::new(am_domain::wire::names::DEFAULT_PREFIX),
            capacity: 8,
            heartbeat_every: Duration::from_secs(10),
            interrupt_grace: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(30),
            outbox_capacity: 10_000,
            default_idle_timeout: Duration::from_secs(30),
            agents: Vec::new(),
            classifiers: Vec::new(),
        }
    }

    /// The broker URL (default [`DEFAULT_AMQP_URL`]), or a RabbitMQ cluster's members as a
    /// comma-separated list: the node connects to one and, losing it, to another
    /// ([`BrokerAddresses`]).
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h").amqp_url("amqp://rabbit:5672/%2f");
    /// let cluster = agent_client::NodeBuilder::new("billing", "h")
    ///     .amqp_url("amqp://rabbit-1:5672/%2f,amqp://rabbit-2:5672/%2f,amqp://rabbit-3:5672/%2f");
    /// assert!(cluster.validate().is_ok());
    /// ```
    pub fn amqp_url(mut self, url: impl Into<String>) -> Self {
        self.amqp_url = url.into();
        self
    }

    /// The broker objects' names and arguments (default: prefix `am`). Must match the
    /// manager's.
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h")
    ///     .topology(agent_client::Topology::new("staging"));
    /// ```
    pub fn topology(mut self, topology: Topology) -> Self {
        self.topology = topology;
        self
    }

    /// The application's version, shown in the manager.
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h").version(env!("CARGO_PKG_VERSION"));
    /// ```
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// How many activations run at once (default 8). A launch that finds every slot busy is
    /// accepted and waits on the node for one (the heartbeat counts it, so the manager sends
    /// further launches to less busy nodes).
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h").capacity(2);
    /// ```
    pub fn capacity(mut self, capacity: u32) -> Self {
        self.capacity = capacity;
        self
    }

    /// How often the node heartbeats (default 10 s).
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h")
    ///     .heartbeat_every(std::time::Duration::from_secs(5));
    /// ```
    pub fn heartbeat_every(mut self, every: Duration) -> Self {
        self.heartbeat_every = every.max(Duration::from_millis(50));
        self
    }

    /// How long an agent may keep running after it was asked to stop before the node gives
    /// up on it (its message goes back to the queue; default 30 s).
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h")
    ///     .interrupt_grace(std::time::Duration::from_secs(5));
    /// ```
    pub fn interrupt_grace(mut self, grace: Duration) -> Self {
        self.interrupt_grace = grace;
        self
    }

    /// How long [`Node::shutdown`] waits for running activations (default 30 s).
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h")
    ///     .shutdown_timeout(std::time::Duration::from_secs(10));
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// How many reports wait for the broker at most (default 10,000); beyond, the oldest are
    /// dropped and counted.
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h").report_buffer(1_000);
    /// ```
    pub fn report_buffer(mut self, capacity: usize) -> Self {
        self.outbox_capacity = capacity;
        self
    }

    /// Idle timeout of scheduled message activations whose launch gives none (default 30 s).
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h")
    ///     .default_idle_timeout(std::time::Duration::from_secs(5));
    /// ```
    pub fn default_idle_timeout(mut self, timeout: Duration) -> Self {
        self.default_idle_timeout = timeout;
        self
    }

    /// Registers a standalone agent.
    ///
    /// ```
    /// # struct Cleanup;
    /// # impl agent_client::StandaloneAgent for Cleanup { type Params = ();
    /// #   async fn run(&self, _: agent_client::Context<()>) -> Result<(), agent_client::AgentError> { Ok(()) } }
    /// let b = agent_client::NodeBuilder::new("billing", "h")
    ///     .standalone(agent_client::AgentSpec::new("cleanup"), Cleanup);
    /// ```
    pub fn standalone<A: StandaloneAgent>(mut self, spec: AgentSpec, agent: A) -> Self {
        self.agents
            .push((spec, Registered::Standalone(Arc::new(Arc::new(agent)))));
        self
    }

    /// Registers a message agent.
    ///
    /// ```
    /// # struct Export;
    /// # impl agent_client::MessageAgent for Export { type Params = ();
    /// #   async fn handle(&self, _: &agent_client::Context<()>, _: &agent_client::Message)
    /// #     -> Result<(), agent_client::AgentError> { Ok(()) } }
    /// let b = agent_client::NodeBuilder::new("billing", "h")
    ///     .messages(agent_client::AgentSpec::new("export").prefetch(50), Export);
    /// ```
    pub fn messages<A: MessageAgent>(mut self, spec: AgentSpec, agent: A) -> Self {
        self.agents
            .push((spec, Registered::Messages(Arc::new(Arc::new(agent)))));
        self
    }

    /// Publishes a classifier with the node's agents.
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h")
    ///     .classifier(agent_client::Classifier::new("sites", "Sites").value("par", "Paris"));
    /// ```
    pub fn classifier(mut self, classifier: Classifier) -> Self {
        self.classifiers.push(classifier);
        self
    }

    /// Checks the configuration and every registration; lists every problem at once.
    ///
    /// ```
    /// let err = agent_client::NodeBuilder::new("billing", "").validate().unwrap_err();
    /// assert!(err.to_string().contains("host"));
    /// ```
    pub fn validate(&self) -> Result<(), NodeError> {
        let mut problems = Vec::new();
        if let Err(e) = ids::validate_id(&self.application) {
            problems.push(format!("application `{}`: {e}", self.application));
        }
        if let Err(e) = ids::validate_host_name(&self.host) {
            problems.push(format!("host `{}`: {e}", self.host));
        }
        if self.capacity == 0 {
            problems.push("capacity: must be at least 1".to_owned());
        }
        if let Err(e) = BrokerAddresses::parse(&self.amqp_url) {
            problems.push(format!("amqp_url: {e}"));
        }
        let mut seen = HashSet::new();
        for (spec, _) in &self.agents {
            if let Err(e) = ids::validate_id(&spec.id) {
                problems.push(format!("agent `{}`: {e}", spec.id));
            }
            if !seen.insert(spec.id.as_str()) {
                problems.push(format!("agent `{}`: registered twice", spec.id));
            }
            for err in validate_schema(&spec.params).0 {
                problems.push(format!(
                    "agent `{}` parameters.{}: {}",
                    spec.id, err.path, err.message
                ));
            }
        }
        let mut names = HashSet::new();
        for c in &self.classifiers {
            if !names.insert(c.name.as_str()) {
                problems.push(format!("classifier `{}`: registered twice", c.name));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(NodeError::Invalid(problems))
        }
    }

    /// Validates, then starts the node in the background: it connects (retrying with
    /// backoff), declares its topology, publishes itself and listens for launches. Use
    /// [`Node::ready`] to wait until it listens.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), agent_client::NodeError> {
    /// let node = agent_client::NodeBuilder::new("billing", "host-a").start().await?;
    /// node.ready(std::time::Duration::from_secs(10)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn start(self) -> Result<Node, NodeError> {
        self.validate()?;
        let brokers = BrokerAddresses::parse(&self.amqp_url)
            .map_err(|e| NodeError::Invalid(vec![format!("amqp_url: {e}")]))?;
        let shared = runtime::start(self, brokers);
        Ok(Node { shared })
    }
}

/// A running node. Dropping it does not stop it; call [`Node::shutdown`].
///
/// ```no_run
/// # async fn f(node: agent_client::Node) {
/// tokio::signal::ctrl_c().await.ok();
/// node.shutdown().await;
/// # }
/// ```
#[derive(Debug)]
pub struct Node {
    shared: Arc<Shared>,
}

impl Node {
    /// Waits until the node listens to its control queue, or the timeout.
    ///
    /// ```no_run
    /// # async fn f(node: agent_client::Node) -> Result<(), agent_client::NodeError> {
    /// node.ready(std::time::Duration::from_secs(10)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn ready(&self, timeout: Duration) -> Result<(), NodeError> {
        let mut rx = self.shared.ready.subscribe();
        match tokio::time::timeout(timeout, rx.wait_for(|r| *r)).await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(NodeError::Stopped),
        }
    }

    /// Whether the node is connected to the broker right now.
    ///
    /// ```no_run
    /// # fn f(node: &agent_client::Node) { println!("{}", node.is_connected()); }
    /// ```
    pub fn is_connected(&self) -> bool {
        self.shared.link.is_up()
    }

    /// Reports dropped because the buffer was full while the broker was away.
    ///
    /// ```no_run
    /// # fn f(node: &agent_client::Node) { assert_eq!(node.dropped_reports(), 0); }
    /// ```
    pub fn dropped_reports(&self) -> u64 {
        self.shared.outbox.dropped()
    }

    /// The node's figures in the Prometheus text format, for the application's own metrics
    /// endpoint ([`NodeMetrics::to_text`]).
    ///
    /// ```no_run
    /// # fn f(node: &agent_client::Node) { println!("{}", node.metrics().to_text()); }
    /// ```
    pub fn metrics(&self) -> NodeMetrics {
        NodeMetrics::new(Arc::clone(&self.shared))
    }

    /// Graceful stop: no new launches, every activation is asked to stop and awaited (the
    /// message in hand finishes or goes back to the queue, prefetched ones go back), reports
    /// are flushed, then the connection closes.
    ///
    /// ```no_run
    /// # async fn f(node: agent_client::Node) { node.shutdown().await; }
    /// ```
    pub async fn shutdown(self) {
        runtime::shutdown(&self.shared).await;
    }

    /// Stops at once, as if the process died: the connection closes with messages
    /// unacknowledged (the broker gives them to other nodes) and unsent reports are lost.
    ///
    /// ```no_run
    /// # async fn f(node: agent_client::Node) { node.abort().await; }
    /// ```
    pub async fn abort(self) {
        runtime::abort(&self.shared).await;
    }
}
