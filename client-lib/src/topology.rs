//! The broker objects of the protocol on a lapin channel. Names and arguments come from
//! [`Layout`] (in `am-domain`), the one place that builds them for the manager and the nodes.
//! The manager declares the data topology from its catalog; a node declares only its own
//! control queue and checks that the queue it consumes exists (docs/protocol.md).

use am_domain::{
    topology::{Arg, Args, Binding, BrokerObjects, Exchange, ExchangeType, Layout, Queue},
    wire::{Subscription, names::Names},
};
use lapin::{
    Channel, ExchangeKind,
    options::{
        ExchangeDeclareOptions, ExchangeDeleteOptions, QueueBindOptions, QueueDeclareOptions,
    },
    types::{AMQPValue, FieldTable, LongString},
};
use std::time::Duration;

pub use am_domain::topology::SUBSCRIPTION_DELIVERY_LIMIT;

/// The broker objects of one installation (a name prefix), declared through lapin.
///
/// ```no_run
/// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
/// use agent_client::Topology;
/// let topology = Topology::new("am");
/// topology.declare_manager_side(&channel).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Topology {
    layout: Layout,
}

impl Topology {
    /// The topology of the installation named by `prefix`.
    ///
    /// ```
    /// let t = agent_client::Topology::new("am");
    /// assert_eq!(t.names().reports_queue(), "am.reports");
    /// ```
    pub fn new(prefix: impl Into<String>) -> Self {
        Self {
            layout: Layout::new(Names::new(prefix)),
        }
    }

    /// Makes every queue declared through this topology expire after being unused this long
    /// (`x-expires`) and every exchange auto-delete once its last binding is gone. Meant for
    /// tests and demos, so nothing accumulates on the broker even when a test dies half-way;
    /// the expiry must exceed the longest retry delay.
    ///
    /// ```
    /// let t = agent_client::Topology::new("t-1").ephemeral(std::time::Duration::from_secs(60));
    /// ```
    pub fn ephemeral(mut self, expires: Duration) -> Self {
        self.layout = self.layout.ephemeral(expires);
        self
    }

    /// The names of the broker objects.
    ///
    /// ```
    /// let t = agent_client::Topology::new("am");
    /// assert_eq!(t.names().subscription("x.1"), "am.ls.x.1");
    /// ```
    pub fn names(&self) -> &Names {
        self.layout.names()
    }

    /// Every name and argument of the data topology.
    ///
    /// ```
    /// let t = agent_client::Topology::new("am");
    /// assert_eq!(t.layout().wait_queue(1_000).name, "am.wait.1000ms");
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The queue a launch's nodes consume: its subscription, or its data queue's shared queue.
    ///
    /// ```
    /// use agent_client::domain::{catalog::DataQueueKind, wire::Subscription};
    /// let sub = Subscription { data_queue: "jobs".into(), address: "jobs".into(),
    ///     kind: DataQueueKind::Queue, filter: Default::default(), delay: None };
    /// assert_eq!(agent_client::Topology::new("am").consumed_queue("app.w.1", &sub), "am.dq.jobs");
    /// ```
    pub fn consumed_queue(&self, launch_setting: &str, subscription: &Subscription) -> String {
        self.layout
            .consumed_queue(launch_setting, subscription.kind, &subscription.data_queue)
    }

    fn exchange_options(&self, auto_delete: bool) -> ExchangeDeclareOptions {
        ExchangeDeclareOptions {
            durable: true,
            auto_delete,
            ..ExchangeDeclareOptions::default()
        }
    }

    /// Declares one exchange as [`Layout`] built it.
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
    /// let t = agent_client::Topology::new("am");
    /// t.declare_exchange(&channel, &t.layout().wait_exchange(1_000)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn declare_exchange(
        &self,
        channel: &Channel,
        exchange: &Exchange,
    ) -> Result<(), lapin::Error> {
        let kind = match exchange.kind {
            ExchangeType::Direct => ExchangeKind::Direct,
            ExchangeType::Fanout => ExchangeKind::Fanout,
            ExchangeType::Headers => ExchangeKind::Headers,
        };
        channel
            .exchange_declare(
                exchange.name.as_str().into(),
                kind,
                self.exchange_options(false),
                field_table(&exchange.args),
            )
            .await
    }

    /// Deletes an exchange (and with it every binding from it).
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
    /// agent_client::Topology::new("am").delete_exchange(&channel, "billing.events").await?;
    /// # Ok(()) }
    /// ```
    pub async fn delete_exchange(&self, channel: &Channel, name: &str) -> Result<(), lapin::Error> {
        channel
            .exchange_delete(name.into(), ExchangeDeleteOptions::default())
            .await
    }

    /// Declares one durable queue as [`Layout`] built it.
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
    /// let t = agent_client::Topology::new("am");
    /// t.declare_queue(&channel, &t.layout().wait_queue(1_000)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn declare_queue(
        &self,
        channel: &Channel,
        queue: &Queue,
    ) -> Result<(), lapin::Error> {
        self.durable_queue(channel, &queue.name, field_table(&queue.args))
            .await
    }

    async fn durable_queue(
        &self,
        channel: &Channel,
        name: &str,
        args: FieldTable,
    ) -> Result<(), lapin::Error> {
        channel
            .queue_declare(
                name.into(),
                QueueDeclareOptions {
                    durable: true,
                    ..QueueDeclareOptions::default()
                },
                args,
            )
            .await
            .map(|_| ())
    }

    /// Binds a queue to an exchange with the binding's arguments.
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
    /// let t = agent_client::Topology::new("am");
    /// let b = t.layout().filter_binding("am.ls.x.1", "events", &Default::default());
    /// t.bind(&channel, &b).await?;
    /// # Ok(()) }
    /// ```
    pub async fn bind(&self, channel: &Channel, binding: &Binding) -> Result<(), lapin::Error> {
        channel
            .queue_bind(
                binding.queue.as_str().into(),
                binding.exchange.as_str().into(),
                "".into(),
                QueueBindOptions::default(),
                field_table(&binding.args),
            )
            .await
    }

    /// Removes a binding.
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
    /// let t = agent_client::Topology::new("am");
    /// let b = t.layout().filter_binding("am.ls.x.1", "events", &Default::default());
    /// t.unbind(&channel, &b).await?;
    /// # Ok(()) }
    /// ```
    pub async fn unbind(&self, channel: &Channel, binding: &Binding) -> Result<(), lapin::Error> {
        channel
            .queue_unbind(
                binding.queue.as_str().into(),
                binding.exchange.as_str().into(),
                "".into(),
                field_table(&binding.args),
            )
            .await
    }

    /// Declares every object of `objects`: exchanges (alternates first), queues, bindings.
    /// What the manager's reconciler does for a whole catalog; tests and demos without a
    /// manager use it for the objects of one launch ([`Layout::launch_objects`]).
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel, sub: agent_client::domain::wire::Subscription) -> Result<(), lapin::Error> {
    /// let t = agent_client::Topology::new("am");
    /// let objects = t.layout().launch_objects("app.reader.1", &sub, &Default::default(), &Default::default());
    /// t.declare_objects(&channel, &objects).await?;
    /// # Ok(()) }
    /// ```
    pub async fn declare_objects(
        &self,
        channel: &Channel,
        objects: &BrokerObjects,
    ) -> Result<(), lapin::Error> {
        let mut exchanges: Vec<&Exchange> = objects.exchanges.values().collect();
        exchanges.sort_by_key(|e| e.kind);
        for e in exchanges {
            self.declare_exchange(channel, e).await?;
        }
        for q in objects.queues.values() {
            self.declare_queue(channel, q).await?;
        }
        for b in &objects.bindings {
            self.bind(channel, b).await?;
        }
        Ok(())
    }

    /// The control exchange, the reports queue, the quarantine and the dead-letter queue.
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
    /// agent_client::Topology::new("am").declare_manager_side(&channel).await?;
    /// # Ok(()) }
    /// ```
    pub async fn declare_manager_side(&self, channel: &Channel) -> Result<(), lapin::Error> {
        channel
            .exchange_declare(
                self.names().control_exchange().as_str().into(),
                ExchangeKind::Direct,
                self.exchange_options(self.layout.expires().is_some()),
                FieldTable::default(),
            )
            .await?;
        for queue in self.layout.system_queues() {
            self.declare_queue(channel, &queue).await?;
        }
        Ok(())
    }

    /// Everything a node needs before it listens: the manager side plus its own control queue,
    /// bound to the control exchange under the node's routing key. The control queue is a
    /// quorum queue like every other: on a cluster it outlives the member it was declared on (a
    /// classic queue is unreachable while its home member is down, and the node cannot listen).
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
    /// agent_client::Topology::new("am").declare_node(&channel, "billing", "host-a").await?;
    /// # Ok(()) }
    /// ```
    pub async fn declare_node(
        &self,
        channel: &Channel,
        application: &str,
        host: &str,
    ) -> Result<(), lapin::Error> {
        self.declare_manager_side(channel).await?;
        let names = self.names();
        let queue = names.node_queue(application, host);
        let mut args = FieldTable::default();
        args.insert(
            "x-queue-type".into(),
            AMQPValue::LongString("quorum".into()),
        );
        if let Some(expires) = self.layout.expires() {
            args.insert("x-expires".into(), AMQPValue::LongLongInt(millis(expires)));
        }
        self.durable_queue(channel, &queue, args).await?;
        channel
            .queue_bind(
                queue.as_str().into(),
                names.control_exchange().as_str().into(),
                names.node_routing_key(application, host).as_str().into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
    }

    /// Checks that a queue exists without creating it (a passive declare); returns its ready
    /// messages. A missing queue fails with NOT_FOUND and closes the channel.
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
    /// let ready = agent_client::Topology::new("am").check_queue(&channel, "am.ls.x.1").await?;
    /// # Ok(()) }
    /// ```
    pub async fn check_queue(&self, channel: &Channel, name: &str) -> Result<u32, lapin::Error> {
        channel
            .queue_declare(
                name.into(),
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .map(|q| q.message_count())
    }
}

/// Broker arguments as lapin takes them.
fn field_table(args: &Args) -> FieldTable {
    let mut table = FieldTable::default();
    for (k, v) in args {
        let value = match v {
            Arg::Int(i) => AMQPValue::LongLongInt(*i),
            Arg::Str(s) => AMQPValue::LongString(LongString::from(s.as_str())),
        };
        table.insert(k.as_str().into(), value);
    }
    table
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
