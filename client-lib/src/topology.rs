//! The broker objects of the protocol, declared idempotently by whoever needs them (nodes at
//! every (re)connect, the manager, tests). Every declaration of one object uses the same
//! arguments, or the broker refuses it; that is why everything that varies per launch setting
//! lives in queue *names* (delay levels) rather than in arguments.

use am_domain::wire::{Subscription, names::Names};
use lapin::{
    Channel, ExchangeKind,
    options::{ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions},
    types::{AMQPValue, FieldTable, LongString},
};
use std::time::Duration;

/// Broker-side delivery limit of subscription queues. Our own attempt header drives retries
/// (each retry is a fresh message); this limit only stops a message that keeps killing nodes
/// (a crash counts as a delivery). RabbitMQ 3.10 has no default, so it is always explicit.
pub const SUBSCRIPTION_DELIVERY_LIMIT: i64 = 20;

/// Names and shared arguments of the protocol's broker objects.
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
    names: Names,
    queue_expires: Option<Duration>,
}

impl Topology {
    fn exchange_options(&self) -> ExchangeDeclareOptions {
        ExchangeDeclareOptions {
            durable: true,
            auto_delete: self.queue_expires.is_some(),
            ..ExchangeDeclareOptions::default()
        }
    }
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
            names: Names::new(prefix),
            queue_expires: None,
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
        self.queue_expires = Some(expires);
        self
    }

    /// The names of the broker objects.
    ///
    /// ```
    /// let t = agent_client::Topology::new("am");
    /// assert_eq!(t.names().subscription("x.1"), "am.ls.x.1");
    /// ```
    pub fn names(&self) -> &Names {
        &self.names
    }

    fn queue_args(&self, quorum: bool) -> FieldTable {
        let mut args = FieldTable::default();
        if quorum {
            args.insert("x-queue-type".into(), long_string("quorum"));
        }
        if let Some(expires) = self.queue_expires {
            args.insert("x-expires".into(), AMQPValue::LongLongInt(millis(expires)));
        }
        args
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
                self.names.control_exchange().as_str().into(),
                ExchangeKind::Direct,
                self.exchange_options(),
                FieldTable::default(),
            )
            .await?;
        for queue in [
            self.names.reports_queue(),
            self.names.quarantine_queue(),
            self.names.dead_letter_queue(),
        ] {
            self.durable_queue(channel, &queue, self.queue_args(true))
                .await?;
        }
        Ok(())
    }

    /// Everything a node needs before it listens: the manager side plus its own control queue,
    /// bound to the control exchange under the node's routing key. The control queue is a
    /// classic queue: it only holds commands for one node, and the manager re-dispatches what a
    /// dead node never accepted.
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
        let queue = self.names.node_queue(application, host);
        self.durable_queue(channel, &queue, self.queue_args(false))
            .await?;
        channel
            .queue_bind(
                queue.as_str().into(),
                self.names.control_exchange().as_str().into(),
                self.names
                    .node_routing_key(application, host)
                    .as_str()
                    .into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
    }

    /// The data exchange (a headers exchange named by the data queue's address) and the launch
    /// setting's shared subscription queue, bound with its filter. For a Delayed launch setting
    /// the binding goes to a delay queue whose messages expire into the subscription.
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel, sub: agent_client::domain::wire::Subscription) -> Result<(), lapin::Error> {
    /// agent_client::Topology::new("am").declare_subscription(&channel, "billing.export.1", &sub).await?;
    /// # Ok(()) }
    /// ```
    pub async fn declare_subscription(
        &self,
        channel: &Channel,
        launch_setting: &str,
        subscription: &Subscription,
    ) -> Result<(), lapin::Error> {
        channel
            .exchange_declare(
                subscription.address.as_str().into(),
                ExchangeKind::Headers,
                self.exchange_options(),
                FieldTable::default(),
            )
            .await?;
        let queue = self.names.subscription(launch_setting);
        let mut args = self.queue_args(true);
        args.insert(
            "x-delivery-limit".into(),
            AMQPValue::LongLongInt(SUBSCRIPTION_DELIVERY_LIMIT),
        );
        args.insert("x-dead-letter-exchange".into(), long_string(""));
        args.insert(
            "x-dead-letter-routing-key".into(),
            long_string(&self.names.dead_letter_queue()),
        );
        self.durable_queue(channel, &queue, args).await?;

        let mut binding = FieldTable::default();
        binding.insert("x-match".into(), long_string("all"));
        for (k, v) in &subscription.filter.headers {
            binding.insert(k.as_str().into(), long_string(v));
        }
        let bound = match subscription.delay.filter(|d| !d.is_zero()) {
            Some(delay) => {
                let delay_queue = self.names.delay_queue(launch_setting);
                let mut args = self.queue_args(true);
                args.insert(
                    "x-message-ttl".into(),
                    AMQPValue::LongLongInt(millis(delay.0)),
                );
                args.insert("x-dead-letter-exchange".into(), long_string(""));
                args.insert("x-dead-letter-routing-key".into(), long_string(&queue));
                self.durable_queue(channel, &delay_queue, args).await?;
                delay_queue
            }
            None => queue,
        };
        channel
            .queue_bind(
                bound.as_str().into(),
                subscription.address.as_str().into(),
                "".into(),
                QueueBindOptions::default(),
                binding,
            )
            .await
    }

    /// The wait queue of one retry delay of a launch setting: messages expire after `delay`
    /// back into the subscription. Returns its name.
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
    /// let q = agent_client::Topology::new("am")
    ///     .declare_retry_queue(&channel, "billing.export.1", std::time::Duration::from_secs(2)).await?;
    /// assert_eq!(q, "am.ls.billing.export.1.retry.2000ms");
    /// # Ok(()) }
    /// ```
    pub async fn declare_retry_queue(
        &self,
        channel: &Channel,
        launch_setting: &str,
        delay: Duration,
    ) -> Result<String, lapin::Error> {
        let name = self.names.retry_queue(launch_setting, delay);
        self.declare_wait_queue(channel, launch_setting, &name, delay)
            .await?;
        Ok(name)
    }

    /// The sump of a launch setting with dead-letter policy `park`: messages expire after the
    /// cool-down back into the subscription. Returns its name.
    ///
    /// ```no_run
    /// # async fn f(channel: lapin::Channel) -> Result<(), lapin::Error> {
    /// let q = agent_client::Topology::new("am")
    ///     .declare_park_queue(&channel, "billing.export.1", std::time::Duration::from_secs(600)).await?;
    /// assert_eq!(q, "am.ls.billing.export.1.park.600000ms");
    /// # Ok(()) }
    /// ```
    pub async fn declare_park_queue(
        &self,
        channel: &Channel,
        launch_setting: &str,
        cooldown: Duration,
    ) -> Result<String, lapin::Error> {
        let name = self.names.park_queue(launch_setting, cooldown);
        self.declare_wait_queue(channel, launch_setting, &name, cooldown)
            .await?;
        Ok(name)
    }

    async fn declare_wait_queue(
        &self,
        channel: &Channel,
        launch_setting: &str,
        name: &str,
        delay: Duration,
    ) -> Result<(), lapin::Error> {
        let mut args = self.queue_args(true);
        args.insert(
            "x-message-ttl".into(),
            AMQPValue::LongLongInt(millis(delay)),
        );
        args.insert("x-dead-letter-exchange".into(), long_string(""));
        args.insert(
            "x-dead-letter-routing-key".into(),
            long_string(&self.names.subscription(launch_setting)),
        );
        self.durable_queue(channel, name, args).await
    }
}

fn long_string(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s))
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
