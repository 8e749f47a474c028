//! Throughput of a no-op message agent on `BENCH_NODES` nodes (one by default) sharing one
//! subscription versus as many raw lapin consumers on the same queue, with the same prefetch and
//! the same acknowledgement mode (acks sent without blocking the consumer loop), 1 KiB
//! persistent messages, alternating rounds in one run.
//!
//! `cargo bench -p agent-client --bench throughput` (env: `AM_TEST_AMQP_URL`, a comma-separated
//! list for a cluster, `BENCH_MESSAGES`, `BENCH_ROUNDS`, `BENCH_PREFETCH`, `BENCH_NODES`). On a
//! cluster, node and raw consumer *i* both start at member *i*. Deletes what it declares.

// A benchmark reads as one scenario, set-up to last figure: the one-sitting bound of
// production functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

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

/// Each raw consumer gets its own connection, to the member its node side starts at, as each
/// node has its own.
async fn raw_round(urls: &[String], queue: &str, n: u64, prefetch: u16) -> Duration {
    let count = Arc::new(AtomicU64::new(0));
    let mut consumers = Vec::new();
    for url in urls {
        consumers.push(raw_consumer(url, queue, prefetch, Arc::clone(&count)).await);
    }
    let took = drained(&count, n).await;
    // Let the last acknowledgements out before closing.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for (conn, channel, task) in consumers {
        let _ = channel.close(200, "round done".into()).await;
        task.abort();
        let _ = conn.close(200, "round done".into()).await;
    }
    took
}

async fn raw_consumer(
    url: &str,
    queue: &str,
    prefetch: u16,
    count: Arc<AtomicU64>,
) -> (Connection, Channel, tokio::task::JoinHandle<()>) {
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
    let c = count;
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
    (conn, channel, task)
}

fn host(i: usize) -> String {
    format!("bench-host-{i}")
}

async fn command(channel: &Channel, names: &Names, host: &str, cmd: &ToNode) {
    channel
        .basic_publish(
            names.control_exchange().as_str().into(),
            names.node_routing_key("bench", host).as_str().into(),
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
    let members: Vec<String> = url.split(',').map(|u| u.trim().to_owned()).collect();
    let n: u64 = env_or("BENCH_MESSAGES", 20_000);
    let rounds: u32 = env_or("BENCH_ROUNDS", 5);
    let prefetch: u16 = env_or("BENCH_PREFETCH", 100);
    let nodes: usize = env_or("BENCH_NODES", 1usize).max(1);
    // Consumer i starts at member i, on both sides.
    let starts: Vec<String> = (0..nodes)
        .map(|i| members[i % members.len()].clone())
        .collect();
    let prefix = format!("bench-{}", std::process::id());
    let topology = Topology::new(prefix.clone()).ephemeral(Duration::from_secs(120));
    let names = topology.names().clone();
    let conn = Connection::connect(&members[0], ConnectionProperties::default())
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
    let mut running = Vec::new();
    for (i, start) in starts.iter().enumerate() {
        // Only its own member: the side by side is about throughput, not failover.
        let node = NodeBuilder::new("bench", host(i))
            .amqp_url(start.clone())
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
        running.push(node);
    }

    println!(
        "{n} messages of 1 KiB, persistent, quorum subscription queue, prefetch {prefetch}, acks not awaited inline, {nodes} consumer(s) a side over {} member(s)",
        members.len()
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
                let raw = raw_round(&starts, &queue, n, prefetch).await;
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
                retry_steps: Vec::new(),
                unavailable_for: agent_client::domain::catalog::default_unavailable_for(),
                dead_letter: DeadLetterSettings::default(),
                failure_threshold: 10,
                subscription: Some(subscription.clone()),
                idle_timeout: None,
                max_run_time: None,
            };
            for i in 0..nodes {
                command(&channel, &names, &host(i), &ToNode::Launch(launch.clone())).await;
            }
            let took = drained(&count, n).await;
            node_rate = n as f64 / took.as_secs_f64();
            let stop = wire::Stop {
                launch_setting: ls.into(),
                reason: "round done".into(),
            };
            for i in 0..nodes {
                command(&channel, &names, &host(i), &ToNode::Stop(stop.clone())).await;
            }
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

    for node in running {
        node.shutdown().await;
    }
    let mut queues = vec![
        queue,
        names.reports_queue(),
        names.quarantine_queue(),
        names.dead_letter_queue(),
    ];
    queues.extend((0..nodes).map(|i| names.node_queue("bench", &host(i))));
    for q in queues {
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
