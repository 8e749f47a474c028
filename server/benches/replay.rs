//! **P5** (issue 6): dead-letter replay at ≥ 5,000 messages/s, through the real path on the
//! embedded default (SQLite file, local RabbitMQ): a bulk replay operation
//! (`am_services::operations::run`, the runner the manager's job worker calls) with the
//! manager's broker publisher (`server::jobs::BrokerPublisher`): batches of dead letters read
//! by `next_batch`, published to their launch settings' subscription queues with publisher
//! confirms by `publish_batch`, marked by `mark_replayed`, progress written after each batch.
//!
//! ```sh
//! source scripts/leptos-env.sh
//! cargo bench -p server --bench replay
//! ```
//!
//! Env: `BENCH_DEAD_LETTERS` (50000), `BENCH_LAUNCH_SETTINGS` (4: subscription queues the
//! dead letters are spread over), `BENCH_BODY_BYTES` (1024), `BENCH_ROUNDS` (3),
//! `AM_TEST_AMQP_URL`. Each round has its own temporary SQLite file and broker prefix and
//! deletes both; it checks that the operation replayed every dead letter without error, that
//! every row is marked replayed and that the subscription queues hold exactly that many
//! messages.

// A benchmark reads as one scenario, set-up to last figure: the one-sitting bound of
// production functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

use agent_client::Topology;
use am_domain::{
    catalog::{DataQueueKind, MessageFilter},
    read::{dead_letters::Selection, operations::OperationRequest},
    wire::{Subscription, names::Names},
};
use am_services::{
    Principal, Services, Settings,
    dead_letters::{self, IncomingDeadLetter},
    entity::dead_letters as entity,
    health::BrokerStatus,
    operations::{self, ReplayBroker, RunEnd, UnroutedBatch},
    runtime::RuntimeConfig,
};
use anyhow::{Context, Result, bail, ensure};
use lapin::{
    Channel, Connection, ConnectionProperties,
    options::{ExchangeDeleteOptions, QueueDeclareOptions, QueueDeleteOptions},
    types::FieldTable,
};
use serde_json::{Map, Value, json};
use std::{
    path::PathBuf,
    sync::atomic::{AtomicU64, Ordering},
    time::Instant,
};
use tokio_util::sync::CancellationToken;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn amqp_url() -> String {
    std::env::var("AM_TEST_AMQP_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let rounds: usize = env_or("BENCH_ROUNDS", 3);
    let load = || {
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .next()
            .unwrap_or("?")
            .to_owned()
    };
    let mut rates = Vec::new();
    for round in 1..=rounds {
        let before = load();
        let r = rt.block_on(run_round())?;
        println!(
            "round {round} (load {before}): seeded {} in {:.2} s ({:.0}/s); replayed in {:.2} s: {:.0} msgs/s ({:.2} s publishing and confirming); queues hold {}",
            r.n,
            r.seed_secs,
            r.n as f64 / r.seed_secs,
            r.replay_secs,
            r.n as f64 / r.replay_secs,
            r.broker_secs,
            r.in_queues,
        );
        rates.push(r.n as f64 / r.replay_secs);
    }
    rates.sort_by(f64::total_cmp);
    if let (Some(min), Some(max)) = (rates.first(), rates.last()) {
        println!(
            "P5 replay: min {min:.0} / median {:.0} / max {max:.0} msgs/s over {rounds} rounds (target 5,000)",
            rates[rates.len() / 2]
        );
    }
    Ok(())
}

struct RoundResult {
    n: usize,
    seed_secs: f64,
    replay_secs: f64,
    /// Of `replay_secs`, the time spent publishing and waiting for confirms (the rest is the
    /// database: reading batches, marking them, writing progress).
    broker_secs: f64,
    in_queues: u64,
}

/// The manager's publisher, timed.
struct Timed<P> {
    inner: P,
    micros: AtomicU64,
}

impl<P: ReplayBroker> ReplayBroker for Timed<P> {
    async fn publish(
        &self,
        rows: &[entity::Model],
        replayed_by: &str,
    ) -> Vec<Result<(), operations::ReplayError>> {
        let started = Instant::now();
        let out = self.inner.publish(rows, replayed_by).await;
        let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.micros.fetch_add(us, Ordering::Relaxed);
        out
    }

    async fn replay_unrouted(
        &self,
        data_queue: &str,
        address: &str,
        max: u64,
        replayed_by: &str,
    ) -> UnroutedBatch {
        self.inner
            .replay_unrouted(data_queue, address, max, replayed_by)
            .await
    }
}

/// A temporary database directory, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn launch_setting(i: usize) -> String {
    format!("bench.replay.{i}")
}

/// Dead letter `i` as a node writes it: a JSON body of about `body_bytes`, the dead-letter
/// headers, a message id.
fn letter(i: usize, launch_settings: usize, body_bytes: usize) -> IncomingDeadLetter {
    let ls = launch_setting(i % launch_settings);
    let pad = "x".repeat(body_bytes.saturating_sub(80));
    let body = json!({"n": i, "customer": format!("c-{}", i % 977), "pad": pad});
    let headers: Map<String, Value> = match json!({
        "site": "par",
        "x-am-attempt": 5,
        "x-am-launch-setting": ls,
        "x-am-data-queue": "bench.in",
        "x-am-last-error-type": "BenchFailure",
        "x-am-last-error-message": "the benchmark says no",
        "x-am-attempts": 5,
        "x-am-first-failure": "2030-01-01T00:00:00Z",
        "x-am-last-failure": "2030-01-01T00:00:09Z",
        "x-am-host": "bench-node",
    }) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    IncomingDeadLetter {
        exchange: String::new(),
        routing_key: "dead-letters".into(),
        message_id: Some(format!("m-{i}")),
        content_type: Some("application/json".into()),
        properties: Map::new(),
        headers,
        body: body.to_string().into_bytes(),
    }
}

async fn queue_depth(channel: &Channel, queue: &str) -> Result<u64> {
    let q = channel
        .queue_declare(
            queue.into(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .with_context(|| format!("queue {queue}"))?;
    Ok(u64::from(q.message_count()))
}

async fn run_round() -> Result<RoundResult> {
    let n: usize = env_or("BENCH_DEAD_LETTERS", 50_000);
    let launch_settings: usize = env_or("BENCH_LAUNCH_SETTINGS", 4).max(1);
    let body_bytes: usize = env_or("BENCH_BODY_BYTES", 1024);
    let unique = uuid::Uuid::new_v4().simple().to_string();
    let dir = TempDir(std::env::temp_dir().join(format!("am-bench-replay-{unique}")));
    std::fs::create_dir_all(&dir.0)?;
    let url = format!("sqlite://{}/bench.sqlite?mode=rwc", dir.0.display());
    let prefix = format!("bench-{}", &unique[..12]);
    let names = Names::new(prefix.clone());
    let topology = Topology::new(prefix.clone()).ephemeral(std::time::Duration::from_secs(600));

    let db = am_services::db::connect(&url).await?;
    am_services::db::migrate(&db).await?;
    let seeding = Instant::now();
    let batch: Vec<IncomingDeadLetter> = (0..n)
        .map(|i| letter(i, launch_settings, body_bytes))
        .collect();
    for chunk in batch.chunks(500) {
        dead_letters::store(&db, &names, chunk, chrono::Utc::now()).await?;
    }
    let seed_secs = seeding.elapsed().as_secs_f64();
    drop(batch);

    // The subscriptions, as nodes declare them.
    let conn = Connection::connect(&amqp_url(), ConnectionProperties::default()).await?;
    let channel = conn.create_channel().await?;
    topology.declare_manager_side(&channel).await?;
    let address = format!("{prefix}.in");
    for i in 0..launch_settings {
        let sub = Subscription {
            data_queue: "bench.in".into(),
            address: address.clone(),
            kind: DataQueueKind::Topic,
            filter: MessageFilter::default(),
            delay: None,
        };
        let objects = topology.layout().launch_objects(
            &launch_setting(i),
            &sub,
            &Default::default(),
            &Default::default(),
        );
        topology.declare_objects(&channel, &objects).await?;
    }

    let stop = CancellationToken::new();
    let (link_tx, link) = server::broker::link();
    let supervisor = tokio::spawn(server::broker::supervise(
        agent_client::BrokerAddresses::parse(&amqp_url()).expect("the bench broker's address"),
        topology.clone(),
        BrokerStatus::default(),
        link_tx,
        Default::default(),
        stop.clone(),
    ));
    let services = Services::new(db.clone(), BrokerStatus::default(), Settings::default())
        .with_runtime(RuntimeConfig::new(&prefix));
    let who = Principal::cli();
    let op = operations::start(
        &services,
        &who,
        OperationRequest::ReplayDeadLetters {
            selection: Selection::default(),
            canary: None,
            rate_per_second: None,
        },
    )
    .await?;
    let publisher = Timed {
        inner: server::jobs::BrokerPublisher::new(link, names.clone(), stop.clone()),
        micros: AtomicU64::new(0),
    };

    let replaying = Instant::now();
    let end = operations::run(&db, &services.runtime, op.id, &publisher).await?;
    let replay_secs = replaying.elapsed().as_secs_f64();
    let broker_secs = publisher.micros.load(Ordering::Relaxed) as f64 / 1e6;

    let outcome: Result<u64> = async {
        if !matches!(end, RunEnd::Finished("succeeded")) {
            bail!("the operation ended {end:?}");
        }
        let op = operations::get(&db, &who, op.id).await?;
        ensure!(
            op.done == i64::try_from(n)? && op.failed == 0,
            "operation done {} failed {} of {n}",
            op.done,
            op.failed
        );
        ensure!(
            dead_letters::count(&db, &Selection::default()).await? == 0,
            "dead letters left"
        );
        let mut in_queues = 0;
        for i in 0..launch_settings {
            in_queues += queue_depth(&channel, &names.subscription(&launch_setting(i))).await?;
        }
        ensure!(
            in_queues == n as u64,
            "the subscriptions hold {in_queues} messages, not {n}"
        );
        Ok(in_queues)
    }
    .await;

    for i in 0..launch_settings {
        let _ = channel
            .queue_delete(
                names.subscription(&launch_setting(i)).as_str().into(),
                QueueDeleteOptions::default(),
            )
            .await;
    }
    for q in [
        names.dead_letter_queue(),
        names.reports_queue(),
        names.quarantine_queue(),
    ] {
        let _ = channel
            .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
            .await;
    }
    for x in [address, names.control_exchange()] {
        let _ = channel
            .exchange_delete(x.as_str().into(), ExchangeDeleteOptions::default())
            .await;
    }
    let _ = conn.close(200, "bench done".into()).await;
    stop.cancel();
    let _ = supervisor.await;
    db.close().await?;
    Ok(RoundResult {
        n,
        seed_secs,
        replay_secs,
        broker_secs,
        in_queues: outcome?,
    })
}
