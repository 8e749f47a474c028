//! A stand-in for the manager: sends commands to nodes, reads their reports, publishes data
//! messages and inspects queues. Every broker object it or its nodes declare lives under a
//! unique prefix (queues also expire when unused) and is deleted by [`Harness::cleanup`].

use agent_client::{
    NodeBuilder, Topology,
    domain::{
        HumanDuration,
        catalog::{
            DataQueueKind, DeadLetterSettings, LaunchKind, MessageFilter, OverlapPolicy,
            RetryPolicy,
        },
        policy::retry_ladder,
        wire::{
            self, ActivationEvent, ActivationId, ActivationResult, Launch, Subscription, ToManager,
            ToNode,
        },
    },
};
use futures_util::StreamExt;
use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties,
    message::BasicGetMessage,
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicGetOptions, BasicPublishOptions,
        ConfirmSelectOptions, ExchangeDeleteOptions, QueueDeclareOptions, QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable, LongString},
};
use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex},
    time::Duration,
};

pub fn amqp_url() -> String {
    std::env::var("AM_TEST_AMQP_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned())
}

pub const APP: &str = "app";

/// A report and the `traceparent` it came with.
pub type Traced = (ToManager, Option<String>);

pub struct Harness {
    pub topology: Topology,
    conn: Connection,
    channel: Channel,
    /// Every report, with the `traceparent` header it came with.
    reports: Arc<Mutex<Vec<Traced>>>,
    created: Mutex<Created>,
}

#[derive(Default)]
struct Created {
    hosts: BTreeSet<String>,
    queues: BTreeSet<String>,
    exchanges: BTreeSet<String>,
}

impl Harness {
    pub async fn new() -> Harness {
        Self::on(&amqp_url()).await
    }

    /// A harness whose own connection goes to `url` (one member of a cluster).
    pub async fn on(url: &str) -> Harness {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_default_env()
                    .unwrap_or_else(|_| "warn".into()),
            )
            .with_test_writer()
            .try_init();
        let id = uuid::Uuid::new_v4().simple().to_string();
        let topology = Topology::new(format!("t-{}", &id[..12])).ephemeral(Duration::from_secs(60));
        let conn = Connection::connect(url, ConnectionProperties::default())
            .await
            .expect("the test broker is reachable");
        let channel = conn.create_channel().await.expect("channel");
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .expect("confirms");
        topology
            .declare_manager_side(&channel)
            .await
            .expect("manager topology");
        let reports = Arc::new(Mutex::new(Vec::new()));
        let reader = conn.create_channel().await.expect("channel");
        let mut consumer = reader
            .basic_consume(
                topology.names().reports_queue().as_str().into(),
                "".into(),
                BasicConsumeOptions {
                    no_ack: true,
                    ..BasicConsumeOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .expect("consume reports");
        let sink = Arc::clone(&reports);
        tokio::spawn(async move {
            while let Some(Ok(d)) = consumer.next().await {
                let report: ToManager = wire::decode(&d.data).expect("nodes send valid reports");
                let traceparent = d
                    .properties
                    .headers()
                    .as_ref()
                    .and_then(|h| h.inner().get("traceparent"))
                    .and_then(|v| match v {
                        AMQPValue::LongString(s) => {
                            Some(String::from_utf8_lossy(s.as_bytes()).into_owned())
                        }
                        AMQPValue::ShortString(s) => Some(s.as_str().to_owned()),
                        _ => None,
                    });
                sink.lock().expect("lock").push((report, traceparent));
            }
        });
        Harness {
            topology,
            conn,
            channel,
            reports,
            created: Mutex::new(Created::default()),
        }
    }

    pub fn prefix(&self) -> &str {
        self.topology.names().prefix()
    }

    /// A node builder wired to this harness, with short timings.
    pub fn node(&self, host: &str) -> NodeBuilder {
        self.created
            .lock()
            .expect("lock")
            .hosts
            .insert(host.to_owned());
        NodeBuilder::new(APP, host)
            .amqp_url(amqp_url())
            .topology(self.topology.clone())
            .heartbeat_every(Duration::from_millis(200))
            .interrupt_grace(Duration::from_secs(2))
            .shutdown_timeout(Duration::from_secs(5))
            .default_idle_timeout(Duration::from_millis(500))
    }

    /// A unique data exchange name for this test.
    pub fn address(&self, name: &str) -> String {
        let a = format!("{}.data.{name}", self.prefix());
        self.created
            .lock()
            .expect("lock")
            .exchanges
            .insert(a.clone());
        a
    }

    /// A launch of a standalone agent.
    pub fn launch(&self, launch_setting: &str, agent: &str) -> Launch {
        Launch {
            activation_id: ActivationId(uuid::Uuid::new_v4().to_string()),
            launch_setting: launch_setting.to_owned(),
            agent: agent.to_owned(),
            kind: LaunchKind::Scheduled,
            parameters: serde_json::Map::new(),
            fencing_token: 1,
            overlap: OverlapPolicy::Allow,
            retry: fast_retry(3),
            retry_steps: retry_ladder(&fast_retry(3)),
            unavailable_for: agent_client::domain::catalog::default_unavailable_for(),
            dead_letter: DeadLetterSettings::default(),
            failure_threshold: 10,
            subscription: None,
            idle_timeout: None,
            max_run_time: None,
        }
    }

    /// A stream launch of a messages agent on `address` (the exchange of `topic` data queue
    /// `dq`), with fast retries. [`Harness::subscribe`] declares its queues.
    pub async fn stream(&self, launch_setting: &str, agent: &str, address: &str) -> Launch {
        let mut l = self.launch(launch_setting, agent);
        l.kind = LaunchKind::Stream;
        l.subscription = Some(Subscription {
            data_queue: "dq".into(),
            address: address.to_owned(),
            kind: DataQueueKind::Topic,
            filter: MessageFilter::default(),
            delay: None,
        });
        l
    }

    /// Declares what the manager would for this launch's launch setting (its queue, bindings
    /// and wait queues), as the manager's reconciler does from the catalog.
    pub async fn subscribe(&self, launch: &Launch) {
        let sub = launch.subscription.as_ref().expect("a messages launch");
        let objects = self.topology.layout().launch_objects(
            &launch.launch_setting,
            sub,
            &launch.retry,
            &launch.dead_letter,
        );
        {
            let mut created = self.created.lock().expect("lock");
            created.queues.extend(objects.queues.keys().cloned());
            created.exchanges.extend(objects.exchanges.keys().cloned());
        }
        self.topology
            .declare_objects(&self.channel, &objects)
            .await
            .expect("launch topology");
    }

    pub async fn send(&self, host: &str, cmd: &ToNode) {
        self.send_raw(host, &wire::encode_command(cmd)).await;
    }

    pub async fn send_raw(&self, host: &str, bytes: &[u8]) {
        self.send_raw_with(host, bytes, FieldTable::default()).await;
    }

    /// A command published under the trace context `traceparent`, as the manager's relay does.
    pub async fn send_traced(&self, host: &str, cmd: &ToNode, traceparent: &str) {
        let mut headers = FieldTable::default();
        headers.insert(
            "traceparent".into(),
            AMQPValue::LongString(LongString::from(traceparent)),
        );
        self.send_raw_with(host, &wire::encode_command(cmd), headers)
            .await;
    }

    async fn send_raw_with(&self, host: &str, bytes: &[u8], headers: FieldTable) {
        let names = self.topology.names();
        let confirm = self
            .channel
            .basic_publish(
                names.control_exchange().as_str().into(),
                names.node_routing_key(APP, host).as_str().into(),
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                bytes,
                BasicProperties::default()
                    .with_delivery_mode(2)
                    .with_headers(headers),
            )
            .await
            .expect("publish")
            .await
            .expect("confirm");
        assert!(
            confirm.take_message().is_none(),
            "the node's control queue exists"
        );
    }

    pub async fn publish(&self, address: &str, body: &[u8], headers: &[(&str, &str)]) {
        let mut table = FieldTable::default();
        for (k, v) in headers {
            table.insert((*k).into(), AMQPValue::LongString(LongString::from(*v)));
        }
        self.channel
            .basic_publish(
                address.into(),
                "".into(),
                BasicPublishOptions::default(),
                body,
                BasicProperties::default()
                    .with_delivery_mode(2)
                    .with_message_id(format!("m-{}", String::from_utf8_lossy(body)).into())
                    .with_headers(table),
            )
            .await
            .expect("publish")
            .await
            .expect("confirm");
    }

    pub fn reports(&self) -> Vec<ToManager> {
        self.traced_reports().into_iter().map(|(r, _)| r).collect()
    }

    /// Every report so far with the `traceparent` it carried.
    pub fn traced_reports(&self) -> Vec<Traced> {
        self.reports.lock().expect("lock").clone()
    }

    /// Waits for a report matching `pred`.
    pub async fn wait_for(
        &self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&ToManager) -> bool,
    ) -> ToManager {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(r) = self.reports().into_iter().find(|r| pred(r)) {
                return r;
            }
            if tokio::time::Instant::now() > deadline {
                panic!(
                    "no report {what} within {timeout:?}; got {:#?}",
                    self.reports()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn wait_event(
        &self,
        activation: &ActivationId,
        timeout: Duration,
        pred: impl Fn(&ActivationEvent) -> bool,
    ) -> ActivationEvent {
        match self
            .wait_for(&format!("for {activation}"), timeout, |r| {
                matches!(r, ToManager::Activation(a) if &a.activation_id == activation && pred(&a.event))
            })
            .await
        {
            ToManager::Activation(a) => a.event,
            _ => unreachable!(),
        }
    }

    pub async fn finished(
        &self,
        activation: &ActivationId,
        timeout: Duration,
    ) -> (ActivationResult, Option<String>) {
        match self
            .wait_event(activation, timeout, |e| {
                matches!(e, ActivationEvent::Finished { .. })
            })
            .await
        {
            ActivationEvent::Finished { result, error, .. } => (result, error),
            _ => unreachable!(),
        }
    }

    pub async fn started(&self, activation: &ActivationId) {
        self.wait_event(activation, Duration::from_secs(10), |e| {
            matches!(e, ActivationEvent::Started)
        })
        .await;
    }

    /// Takes up to `n` messages from a queue, waiting up to `timeout` for them.
    pub async fn take(&self, queue: &str, n: usize, timeout: Duration) -> Vec<BasicGetMessage> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut out = Vec::new();
        while out.len() < n && tokio::time::Instant::now() < deadline {
            match self
                .channel
                .basic_get(queue.into(), BasicGetOptions::default())
                .await
                .expect("basic.get")
            {
                Some(m) => {
                    m.delivery
                        .acker
                        .ack(BasicAckOptions::default())
                        .await
                        .expect("ack");
                    out.push(m);
                }
                None => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
        out
    }

    /// Messages ready in a queue.
    pub async fn depth(&self, queue: &str) -> u32 {
        self.inspect(queue).await.message_count()
    }

    /// Consumers of a queue.
    pub async fn consumers(&self, queue: &str) -> u32 {
        self.inspect(queue).await.consumer_count()
    }

    async fn inspect(&self, queue: &str) -> lapin::Queue {
        let ch = self.conn.create_channel().await.expect("channel");
        let q = ch
            .queue_declare(
                queue.into(),
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .expect("queue exists");
        let _ = ch.close(200, "".into()).await;
        q
    }

    /// Deletes everything this test declared.
    pub async fn cleanup(self) {
        let names = self.topology.names().clone();
        let created = std::mem::take(&mut *self.created.lock().expect("lock"));
        let mut queues = vec![
            names.reports_queue(),
            names.quarantine_queue(),
            names.dead_letter_queue(),
        ];
        for host in &created.hosts {
            queues.push(names.node_queue(APP, host));
        }
        queues.extend(created.queues);
        let mut exchanges: Vec<String> = created.exchanges.into_iter().collect();
        exchanges.push(names.control_exchange());
        // A delete of something absent may close the channel: one channel per delete.
        for q in queues {
            if let Ok(ch) = self.conn.create_channel().await {
                let _ = ch
                    .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                    .await;
                let _ = ch.close(200, "".into()).await;
            }
        }
        for e in exchanges {
            if let Ok(ch) = self.conn.create_channel().await {
                let _ = ch
                    .exchange_delete(e.as_str().into(), ExchangeDeleteOptions::default())
                    .await;
                let _ = ch.close(200, "".into()).await;
            }
        }
        agent_client::close(&self.conn, 200, "test done").await;
    }
}

pub fn fast_retry(max_deliveries: u32) -> RetryPolicy {
    RetryPolicy {
        initial_delay: HumanDuration::from_millis(100),
        multiplier: 2.0,
        max_delay: HumanDuration::from_millis(400),
        max_deliveries,
    }
}

/// Runs `rabbitmqctl` (as root, or through passwordless sudo as `scripts/test.sh` sets up).
pub async fn rabbitmqctl(args: &[&str]) -> std::process::Output {
    let direct = tokio::process::Command::new("rabbitmqctl")
        .args(args)
        .output()
        .await;
    match direct {
        Ok(out) if out.status.success() => out,
        _ => tokio::process::Command::new("sudo")
            .arg("-n")
            .arg("rabbitmqctl")
            .args(args)
            .output()
            .await
            .expect("rabbitmqctl runs (the tests need it to cut connections)"),
    }
}

/// Closes a node's broker connection from the broker side, as a network cut would.
pub async fn close_connection_of(prefix: &str, host: &str) {
    let name = format!("am-node {APP}@{host} ({prefix})");
    let out = rabbitmqctl(&["-q", "list_connections", "pid", "client_properties"]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    let pid = text
        .lines()
        .find(|l| l.contains(&name))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("connection `{name}` not found in {text}"))
        .to_owned();
    let out = rabbitmqctl(&["-q", "close_connection", &pid, "test cuts the connection"]).await;
    assert!(out.status.success(), "close_connection failed: {out:?}");
}

/// `command` as a manager of a later release may write it: a newer `v`, and a field nobody
/// knows yet in every object (the free-form maps aside: any key is data there).
pub fn from_a_later_release(command: &ToNode) -> Vec<u8> {
    fn add(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    if !["parameters", "headers"].contains(&key.as_str()) {
                        add(child);
                    }
                }
                map.insert(
                    "x_later".into(),
                    serde_json::json!({"nested": {"deeper": [1]}}),
                );
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(add),
            _ => {}
        }
    }
    let mut value: serde_json::Value =
        serde_json::from_slice(&wire::encode_command(command)).expect("JSON");
    add(&mut value);
    value["v"] = serde_json::json!(wire::PROTOCOL_VERSION + 5);
    value.to_string().into_bytes()
}
