//! Throughput of a no-op message agent on one node versus a raw lapin consumer on the same
//! queue, with the same prefetch and the same acknowledgement mode (acks sent without blocking
//! the consumer loop), 1 KiB persistent messages, alternating rounds in one run.
//!
//! `cargo bench -p agent-client --bench throughput` (env: `AM_TEST_AMQP_URL`, `BENCH_MESSAGES`,
//! `BENCH_ROUNDS`, `BENCH_PREFETCH`). Needs the local RabbitMQ; deletes what it declares.

use agent_client::{
    AgentError, AgentSpec, Context, Message, MessageAgent, NodeBuilder, Topology,
    domain::{
        catalog::{
            DataQueueKind, DeadLetterSettings, LaunchKind, MessageFilter, OverlapPolicy,
            RetryPolicy,
        },
        wire::{self, ActivationId, Launch, Subscription, ToNode, names::Names},
    },
};
use futures_util::StreamExt;
use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties,
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
        ConfirmSelectOptions, ExchangeDeleteOptions, QueueDeleteOptions, QueuePurgeOptions,
    },
    types::FieldTable,
};
use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Noop {
    count: Arc<AtomicU64>,
}

impl MessageAgent for Noop {
    type Params = serde_json::Value;
    async fn handle(&self, _: &Context<Self::Params>, _: &Message) -> Result<(), AgentError> {
        self.count.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

async fn fill(channel: &Channel, queue: &str, n: u64) {
    let body = vec![b'x'; 1024];
    let mut pending = Vec::with_capacity(1000);
    for _ in 0..n {
        pending.push(
            channel
                .basic_publish(
                    "".into(),
                    queue.into(),
                    BasicPublishOptions::default(),
                    &body,
                    BasicProperties::default().with_delivery_mode(2),
                )
                .await
                .expect("publish"),
        );
        if pending.len() == 1000 {
            for c in pending.drain(..) {
                c.await.expect("confirm");
            }
        }
    }
    for c in pending {
        c.await.expect("confirm");
    }
}

/// Waits until `count` reaches `n`; returns the time from the first message to the last.
async fn drained(count: &AtomicU64, n: u64) -> Duration {
    while count.load(Ordering::Relaxed) == 0 {
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    let start = Instant::now();
    while count.load(Ordering::Relaxed) < n {
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    start.elapsed()
}

/// The raw consumer gets its own connection, as the node has its own.
async fn raw_round(url: &str, queue: &str, n: u64, prefetch: u16) -> Duration {
    let conn = Connection::connect(url, ConnectionProperties::default())
        .await
        .expect("broker");
    let channel = conn.create_channel().await.expect("channel");
    channel
        .basic_qos(prefetch, BasicQosOptions::default())
        .await
        .expect("qos");
    let mut consumer = channel
        .basic_consume(
            queue.into(),
            "".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .expect("consume");
    let count = Arc::new(AtomicU64::new(0));
    let c = Arc::clone(&count);
    let task = tokio::spawn(async move {
        // The same acknowledgement mode as the node: spawned on a JoinSet, reaped as we go.
        let mut acks = tokio::task::JoinSet::new();
        while let Some(Ok(d)) = consumer.next().await {
            c.fetch_add(1, Ordering::Relaxed);
            while acks.try_join_next().is_some() {}
            acks.spawn(async move {
                let _ = d.acker.ack(BasicAckOptions::default()).await;
            });
        }
    });
    let took = drained(&count, n).await;
    // Let the last acknowledgements out before closing.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = channel.close(200, "round done".into()).await;
    task.abort();
    let _ = conn.close(200, "round done".into()).await;
    took
}

async fn command(channel: &Channel, names: &Names, cmd: &ToNode) {
    channel
        .basic_publish(
            names.control_exchange().as_str().into(),
            names
                .node_routing_key("bench", "bench-host")
                .as_str()
                .into(),
            BasicPublishOptions::default(),
            &wire::encode(cmd),
            BasicProperties::default(),
        )
        .await
        .expect("command")
        .await
        .expect("confirm");
}

#[tokio::main]
async fn main() {
    let url = std::env::var("AM_TEST_AMQP_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned());
    let n: u64 = env_or("BENCH_MESSAGES", 20_000);
    let rounds: u32 = env_or("BENCH_ROUNDS", 5);
    let prefetch: u16 = env_or("BENCH_PREFETCH", 100);
    let prefix = format!("bench-{}", std::process::id());
    let topology = Topology::new(prefix.clone()).ephemeral(Duration::from_secs(120));
    let names = topology.names().clone();
    let conn = Connection::connect(&url, ConnectionProperties::default())
        .await
        .expect("broker");
    let channel = conn.create_channel().await.expect("channel");
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await
        .expect("confirms");
    topology
        .declare_manager_side(&channel)
        .await
        .expect("topology");
    let subscription = Subscription {
        data_queue: "bench".into(),
        address: format!("{prefix}.data"),
        kind: DataQueueKind::Topic,
        filter: MessageFilter::default(),
        delay: None,
    };
    let ls = "bench.noop.1";
    let objects = topology.layout().launch_objects(
        ls,
        &subscription,
        &Default::default(),
        &Default::default(),
    );
    topology
        .declare_objects(&channel, &objects)
        .await
        .expect("subscription");
    let queue = names.subscription(ls);

    let count = Arc::new(AtomicU64::new(0));
    let node = NodeBuilder::new("bench", "bench-host")
        .amqp_url(url.clone())
        .topology(topology.clone())
        .messages(
            AgentSpec::new("noop").prefetch(prefetch),
            Noop {
                count: Arc::clone(&count),
            },
        )
        .start()
        .await
        .expect("node");
    node.ready(Duration::from_secs(10)).await.expect("ready");

    println!(
        "{n} messages of 1 KiB, persistent, quorum subscription queue, prefetch {prefetch}, acks not awaited inline"
    );
    let (mut raw_rates, mut node_rates) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        // Alternate which side goes first so neither always meets a warmer broker.
        let mut raw_rate = 0.0;
        let mut node_rate = 0.0;
        let order = if round % 2 == 1 {
            [true, false]
        } else {
            [false, true]
        };
        for raw_side in order {
            channel
                .queue_purge(queue.as_str().into(), QueuePurgeOptions::default())
                .await
                .expect("purge");
            fill(&channel, &queue, n).await;
            if raw_side {
                let raw = raw_round(&url, &queue, n, prefetch).await;
                raw_rate = n as f64 / raw.as_secs_f64();
                continue;
            }
            count.store(0, Ordering::Relaxed);
            let launch = Launch {
                activation_id: ActivationId(format!("bench-{round}")),
                launch_setting: ls.into(),
                agent: "noop".into(),
                kind: LaunchKind::Stream,
                parameters: serde_json::Map::new(),
                fencing_token: 1,
                overlap: OverlapPolicy::Allow,
                retry: RetryPolicy::default(),
                unavailable_for: agent_client::domain::catalog::default_unavailable_for(),
                dead_letter: DeadLetterSettings::default(),
                failure_threshold: 10,
                subscription: Some(subscription.clone()),
                idle_timeout: None,
                max_run_time: None,
            };
            command(&channel, &names, &ToNode::Launch(launch)).await;
            let took = drained(&count, n).await;
            node_rate = n as f64 / took.as_secs_f64();
            let stop = wire::Stop {
                launch_setting: ls.into(),
                reason: "round done".into(),
            };
            command(&channel, &names, &ToNode::Stop(stop)).await;
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        println!(
            "round {round}: raw {raw_rate:>8.0} msg/s   node {node_rate:>8.0} msg/s   ratio {:.3}",
            node_rate / raw_rate
        );
        raw_rates.push(raw_rate);
        node_rates.push(node_rate);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut ratios: Vec<f64> = node_rates
        .iter()
        .zip(&raw_rates)
        .map(|(n, r)| n / r)
        .collect();
    let (raw_m, node_m) = (median(&mut raw_rates), median(&mut node_rates));
    println!(
        "median: raw {raw_m:.0} msg/s, node {node_m:.0} msg/s, ratio of medians {:.3}, median of per-round ratios {:.3}",
        node_m / raw_m,
        median(&mut ratios)
    );

    node.shutdown().await;
    for q in [
        queue,
        names.reports_queue(),
        names.quarantine_queue(),
        names.dead_letter_queue(),
        names.node_queue("bench", "bench-host"),
    ] {
        let ch = conn.create_channel().await.expect("channel");
        let _ = ch
            .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
            .await;
    }
    for e in [subscription.address.clone(), names.control_exchange()] {
        let ch = conn.create_channel().await.expect("channel");
        let _ = ch
            .exchange_delete(e.as_str().into(), ExchangeDeleteOptions::default())
            .await;
    }
    let _ = conn.close(200, "bench done".into()).await;
}
