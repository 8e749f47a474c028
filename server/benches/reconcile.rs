//! Broker reconciliation at catalog scale (issue 12), on the embedded default (SQLite file,
//! local RabbitMQ): a catalog of 2,000 launch settings on 200 data queues reconciled from
//! nothing, then again with nothing to change (incremental, and a full repair pass that
//! declares everything again), then how long a catalog write takes to reach the broker while
//! the reconciler task runs (from the write's commit until the broker has applied it).
//!
//! ```sh
//! source scripts/leptos-env.sh
//! cargo bench -p server --bench reconcile
//! ```
//!
//! Env: `BENCH_DATA_QUEUES` (200), `BENCH_LAUNCH_SETTINGS` (2000), `BENCH_WRITES` (20),
//! `AM_TEST_AMQP_URL`. Everything declared lives under a unique prefix and is deleted at the
//! end; the run checks that every subscription exists and is bound (a message published to
//! each data queue reaches each of its launch settings).

// A benchmark reads as one scenario, set-up to last figure: the one-sitting bound of
// production functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

use agent_client::Topology;
use am_domain::catalog::Catalog;
use am_services::{Principal, topology as rules};
use anyhow::{Context, Result, ensure};
use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    options::{
        BasicPublishOptions, ConfirmSelectOptions, ExchangeDeleteOptions, QueueDeclareOptions,
        QueueDeleteOptions,
    },
    types::FieldTable,
};
use serde_json::json;
use server::runtime::topology::pass;
use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
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

/// A temporary database directory, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `queues` topic data queues, one messages agent on each, `settings` stream launch settings
/// spread over the agents, every third with a header filter.
fn catalog(prefix: &str, queues: usize, settings: usize) -> Result<Catalog> {
    let data_queues: Vec<_> = (0..queues)
        .map(|q| json!({ "id": format!("dq{q}"), "kind": "topic", "address": format!("{prefix}.dq{q}") }))
        .collect();
    let agents: Vec<_> = (0..queues)
        .map(|q| {
            json!({ "application": "bench", "id": format!("agent{q}"), "input": "messages",
                    "data_queue": format!("dq{q}"), "concurrency": "ANY", "overlap": "allow" })
        })
        .collect();
    let launch_settings: Vec<_> = (0..settings).map(|i| ls(i, queues)).collect();
    Ok(serde_json::from_value(json!({
        "applications": [{ "id": "bench", "default_pool": "pool" }],
        "pools": [{ "id": "pool", "hosts": ["h1"] }],
        "data_queues": data_queues,
        "agents": agents,
        "launch_settings": launch_settings,
        "schedule_groups": [],
    }))?)
}

fn ls(i: usize, queues: usize) -> serde_json::Value {
    let mut ls = json!({ "id": format!("bench.ls{i}"), "application": "bench",
                         "agent": format!("agent{}", i % queues), "kind": "stream" });
    if i.is_multiple_of(3) {
        ls["filter"] = json!({ "headers": { "tenant": "acme" } });
    }
    ls
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
    rt.block_on(run())
}

async fn run() -> Result<()> {
    let queues: usize = env_or("BENCH_DATA_QUEUES", 200).max(1);
    let settings: usize = env_or("BENCH_LAUNCH_SETTINGS", 2000).max(1);
    let writes: usize = env_or("BENCH_WRITES", 20).max(1);
    let unique = uuid::Uuid::new_v4().simple().to_string();
    let dir = TempDir(std::env::temp_dir().join(format!("am-bench-reconcile-{unique}")));
    std::fs::create_dir_all(&dir.0)?;
    let url = format!("sqlite://{}/bench.sqlite?mode=rwc", dir.0.display());
    let prefix = format!("bench-{}", &unique[..12]);
    let topology = Topology::new(prefix.clone()).ephemeral(Duration::from_secs(900));
    let db = am_services::db::connect(&url).await?;
    am_services::db::migrate(&db).await?;
    am_services::catalog::import(&db, &Principal::cli(), catalog(&prefix, queues, settings)?)
        .await?;
    let conn = agent_client::connect(&amqp_url(), ConnectionProperties::default()).await?;
    // The reconciler task's own connection, opened now as the manager's is at start-up: while
    // the broker starts thousands of quorum queues at once it may leave a new connection's
    // handshake unanswered (seen on RabbitMQ 3.10 with 2,000 of them: the bench waited forever
    // before connects had a time limit).
    let task_conn = agent_client::connect(&amqp_url(), ConnectionProperties::default()).await?;

    let scale = Scale {
        queues,
        settings,
        writes,
    };
    let result = measure(&db, &conn, task_conn, &topology, &prefix, scale).await;
    cleanup(&db, &conn).await;
    let _ = conn.close(200, "bench done".into()).await;
    result
}

/// The catalog's size and how many writes are timed.
struct Scale {
    queues: usize,
    settings: usize,
    writes: usize,
}

async fn measure(
    db: &sea_orm::DatabaseConnection,
    conn: &Connection,
    task_conn: Connection,
    topology: &Topology,
    prefix: &str,
    scale: Scale,
) -> Result<()> {
    let Scale {
        queues,
        settings,
        writes,
    } = scale;
    let timed = |label: &'static str, full: bool| async move {
        let started = Instant::now();
        let report = pass(db, conn, topology, "bench", full)
            .await?
            .context("the lease is free")?;
        let secs = started.elapsed().as_secs_f64();
        ensure!(report.errors.is_empty(), "{label}: {:?}", report.errors);
        println!("{label}: {secs:.2} s (changed: {})", report.changed);
        Ok::<f64, anyhow::Error>(secs)
    };
    println!("catalog: {settings} launch settings on {queues} data queues");
    timed("from nothing", false).await?;
    timed("nothing to change", false).await?;
    timed("nothing to change, full repair pass", true).await?;

    // Every launch setting is bound: one message to each data queue reaches every launch
    // setting of it (two thirds of them unfiltered, the rest filter on tenant=acme).
    let channel = conn.create_channel().await?;
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await?;
    let mut headers = FieldTable::default();
    headers.insert(
        "tenant".into(),
        lapin::types::AMQPValue::LongString("acme".into()),
    );
    for q in 0..queues {
        channel
            .basic_publish(
                format!("{prefix}.dq{q}").as_str().into(),
                "".into(),
                BasicPublishOptions::default(),
                b"check",
                BasicProperties::default().with_headers(headers.clone()),
            )
            .await?
            .await?;
    }
    let names = topology.names();
    for i in 0..settings {
        let q = channel
            .queue_declare(
                names.subscription(&format!("bench.ls{i}")).as_str().into(),
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await?;
        ensure!(
            q.message_count() == 1,
            "bench.ls{i} holds {} messages",
            q.message_count()
        );
    }
    println!("checked: each of the {settings} subscriptions got its message");

    // Catalog writes while the reconciler task runs.
    let stop = CancellationToken::new();
    let (tx, link) = server::broker::link();
    tx.send(Some(Arc::new(task_conn)))?;
    let task = tokio::spawn(server::runtime::topology::run(
        db.clone(),
        topology.clone(),
        link,
        stop.clone(),
    ));
    // Let its start-up (full) pass finish first.
    wait_applied(db, Duration::from_secs(60)).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut lags = Vec::new();
    for w in 0..writes {
        let setting: am_domain::catalog::LaunchSetting =
            serde_json::from_value(ls(settings + w, queues))?;
        am_services::catalog::save_launch_setting(db, &Principal::cli(), setting, None, true)
            .await?;
        let written = Instant::now();
        wait_applied(db, Duration::from_secs(30)).await?;
        lags.push(written.elapsed().as_secs_f64());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    stop.cancel();
    let _ = task.await;
    drop(tx);
    lags.sort_by(f64::total_cmp);
    let p = |q: f64| lags[((lags.len() as f64 * q).ceil() as usize).clamp(1, lags.len()) - 1];
    println!(
        "catalog write → broker applied, {writes} writes: p50 {:.2} s, p95 {:.2} s, max {:.2} s (target p95 < 2 s)",
        p(0.5),
        p(0.95),
        p(1.0)
    );
    Ok(())
}

async fn wait_applied(db: &sea_orm::DatabaseConnection, timeout: Duration) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        if rules::revisions(db).await?.in_sync() {
            return Ok(());
        }
        ensure!(Instant::now() < deadline, "not applied within {timeout:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Deletes every queue and exchange the reconciler applied.
async fn cleanup(db: &sea_orm::DatabaseConnection, conn: &Connection) {
    let Ok((applied, _)) = rules::applied(db).await else {
        return;
    };
    let Ok(ch) = conn.create_channel().await else {
        return;
    };
    for q in applied.objects.queues.keys().chain(applied.leaving.keys()) {
        let _ = ch
            .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
            .await;
    }
    for e in applied.objects.exchanges.keys() {
        let _ = ch
            .exchange_delete(e.as_str().into(), ExchangeDeleteOptions::default())
            .await;
    }
}
