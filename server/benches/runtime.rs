//! The manager runtime under load, on the embedded default (SQLite file, local RabbitMQ),
//! measured in the manager process itself (issue 5, item 9):
//!
//! - **P2** — `BENCH_GROUPS` enabled schedule groups (one scheduled launch setting each) due in
//!   the same second on a pool of `BENCH_HOSTS` live nodes whose control queues exist on the
//!   broker: lag from the fire time until each fire is recorded, time until the broker has
//!   confirmed every launch command, peak RSS.
//! - **P3** — `BENCH_REPORTS` wire `failure` reports (~100 B message, ~1 KiB stack) waiting in
//!   the reports queue before the consumer starts (`p3`), or published while it consumes
//!   (`p3-live`): time until `failure_logs` holds exactly that many rows.
//!
//! ```sh
//! source scripts/leptos-env.sh
//! cargo bench -p server --bench runtime
//! ```
//!
//! Env: `BENCH_SCENARIOS` (`p2,p3,p3-live`), `BENCH_ROUNDS` (3), `BENCH_GROUPS` (10000),
//! `BENCH_HOSTS` (4), `BENCH_LEAD_SECS` (30: from the runtime's start to the fire time),
//! `BENCH_REPORTS` (50000), `AM_TEST_AMQP_URL`. Every round runs in a fresh child process (so
//! its peak RSS is its own) with its own temporary SQLite file and broker prefix, and deletes
//! both at the end. `BENCH_TRACE=1` prints what the P2 sampler sees and, with
//! `RUST_LOG=server::runtime=info`, how long each fire batch and relay round took.

use agent_client::Topology;
use am_domain::{
    catalog::Catalog,
    validate::validate_catalog,
    wire::{self, ActivationId, FailureReport, Heartbeat, ToManager},
};
use am_services::{
    Principal, Services, Settings, catalog, db,
    entity::{activations, outbox},
    health::BrokerStatus,
    registry,
    runtime::RuntimeConfig,
};
use anyhow::{Context, Result, bail};
use chrono::{DateTime, Duration as ChronoDuration, Timelike, Utc};
use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties,
    options::{
        BasicPublishOptions, ConfirmSelectOptions, ExchangeDeleteOptions, QueueDeclareOptions,
        QueueDeleteOptions,
    },
    types::FieldTable,
};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect,
    Statement,
};
use serde_json::{Value, json};
use std::{
    path::PathBuf,
    process::Command,
    time::{Duration, Instant},
};
use tokio_util::sync::CancellationToken;

const APP: &str = "bench";

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
    // `cargo bench` passes `--bench`; nothing else is read from the command line.
    if let Ok(scenario) = std::env::var("BENCH_CHILD") {
        tracing_subscriber::fmt()
            .with_span_events(if std::env::var_os("BENCH_TRACE").is_some() {
                tracing_subscriber::fmt::format::FmtSpan::CLOSE
            } else {
                tracing_subscriber::fmt::format::FmtSpan::NONE
            })
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_default_env()
                    .unwrap_or_else(|_| "warn".into()),
            )
            .with_writer(std::io::stderr)
            .init();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let result = rt.block_on(child(&scenario))?;
        println!("RESULT {result}");
        return Ok(());
    }
    orchestrate()
}

// ------------------------------------------------------------------ the parent: rounds, medians

fn orchestrate() -> Result<()> {
    let scenarios = std::env::var("BENCH_SCENARIOS").unwrap_or_else(|_| "p2,p3,p3-live".into());
    let rounds: usize = env_or("BENCH_ROUNDS", 3);
    let exe = std::env::current_exe()?;
    println!(
        "load average at start: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    for scenario in scenarios
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let mut results: Vec<Value> = Vec::new();
        for round in 1..=rounds {
            let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
            let out = Command::new(&exe)
                .env("BENCH_CHILD", scenario)
                .stderr(std::process::Stdio::inherit())
                .output()
                .with_context(|| format!("running round {round} of {scenario}"))?;
            let stdout = String::from_utf8_lossy(&out.stdout);
            let Some(line) = stdout.lines().find_map(|l| l.strip_prefix("RESULT ")) else {
                bail!(
                    "{scenario} round {round} failed ({}):\n{stdout}",
                    out.status
                );
            };
            let mut v: Value = serde_json::from_str(line)?;
            v["load_before"] = json!(load.split_whitespace().next().unwrap_or("?"));
            println!("{scenario} round {round}: {v}");
            results.push(v);
        }
        summarize(scenario, &results);
    }
    println!(
        "load average at end: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    Ok(())
}

fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn summarize(scenario: &str, results: &[Value]) {
    let Some(first) = results.first().and_then(Value::as_object) else {
        return;
    };
    println!("{scenario}: median of {} rounds", results.len());
    for (key, value) in first {
        if !value.is_number() {
            continue;
        }
        let xs: Vec<f64> = results
            .iter()
            .filter_map(|r| r.get(key).and_then(Value::as_f64))
            .collect();
        let all: Vec<String> = xs.iter().map(|x| format!("{x}")).collect();
        println!(
            "  {key:<28} {:>12.1}   [{}]",
            median(xs.clone()),
            all.join(", ")
        );
    }
}

// ------------------------------------------------------------------ one round, in a child process

/// A temporary SQLite database and broker prefix, removed on drop (and by [`Round::cleanup`]
/// on the broker).
struct Round {
    dir: PathBuf,
    url: String,
    prefix: String,
    topology: Topology,
}

impl Round {
    fn new() -> Result<Self> {
        let unique = uuid::Uuid::new_v4().simple().to_string();
        let dir = std::env::temp_dir().join(format!("am-bench-{unique}"));
        std::fs::create_dir_all(&dir)?;
        let url = format!("sqlite://{}/bench.sqlite?mode=rwc", dir.display());
        let prefix = format!("bench-{}", &unique[..12]);
        // The expiry only catches what a crashed round leaves behind; a round deletes its own.
        let topology = Topology::new(prefix.clone()).ephemeral(Duration::from_secs(600));
        Ok(Self {
            dir,
            url,
            prefix,
            topology,
        })
    }

    async fn cleanup(&self, conn: &Connection, hosts: &[String]) {
        let Ok(channel) = conn.create_channel().await else {
            return;
        };
        let names = self.topology.names();
        let mut queues = vec![
            names.reports_queue(),
            names.quarantine_queue(),
            names.dead_letter_queue(),
        ];
        queues.extend(hosts.iter().map(|h| names.node_queue(APP, h)));
        for q in queues {
            let _ = channel
                .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                .await;
        }
        let _ = channel
            .exchange_delete(
                names.control_exchange().as_str().into(),
                ExchangeDeleteOptions::default(),
            )
            .await;
        let _ = channel.close(200, "bench done".into()).await;
    }
}

impl Drop for Round {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn child(scenario: &str) -> Result<Value> {
    match scenario {
        "p2" => p2().await,
        "p3" => p3(false).await,
        "p3-live" => p3(true).await,
        other => bail!("unknown scenario {other} (p2, p3, p3-live)"),
    }
}

/// `VmRSS` and `VmHWM` of this process, in MB.
fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Resets the peak RSS (`VmHWM`) to the current RSS, so set-up does not count.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

async fn count(db: &DatabaseConnection, sql: &str) -> Result<i64> {
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await?
        .context("count returned no row")?;
    Ok(row.try_get_by_index::<i64>(0)?)
}

fn ms(d: ChronoDuration) -> f64 {
    d.num_microseconds()
        .map_or(f64::NAN, |us| us as f64 / 1000.0)
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn hosts(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("h{i}")).collect()
}

/// Starts the manager's broker connection and runtime, as `serve` does.
fn start_manager(
    round: &Round,
    db: &DatabaseConnection,
    stop: &CancellationToken,
) -> (tokio::task::JoinHandle<()>, tokio::task::JoinSet<()>) {
    let status = BrokerStatus::default();
    let services = Services::new(db.clone(), status.clone(), Settings::default())
        .with_runtime(RuntimeConfig::new(&round.prefix));
    let (link_tx, link) = server::broker::link();
    let broker = tokio::spawn(server::broker::supervise(
        amqp_url(),
        round.topology.clone(),
        status,
        link_tx,
        stop.clone(),
    ));
    let tasks = server::runtime::spawn(&services, link, stop.clone());
    (broker, tasks)
}

async fn stop_manager(
    stop: &CancellationToken,
    broker: tokio::task::JoinHandle<()>,
    mut tasks: tokio::task::JoinSet<()>,
) {
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while tasks.join_next().await.is_some() {}
        let _ = broker.await;
    })
    .await;
}

async fn publisher(url: &str) -> Result<(Connection, Channel)> {
    let conn = Connection::connect(url, ConnectionProperties::default()).await?;
    let channel = conn.create_channel().await?;
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await?;
    Ok((conn, channel))
}

/// Publishes `n` bodies made by `body` to a queue through the default exchange, at most 1,000
/// unconfirmed at a time, as the client library's report outbox does; fails on any refusal.
/// Bodies are made as they go, so the publisher's memory does not count as the manager's.
async fn publish_all(
    channel: &Channel,
    queue: &str,
    n: usize,
    body: impl Fn(usize) -> Vec<u8>,
) -> Result<()> {
    let mut next = 0;
    while next < n {
        let end = (next + 1000).min(n);
        let mut confirms = Vec::with_capacity(end - next);
        for i in next..end {
            confirms.push(
                channel
                    .basic_publish(
                        "".into(),
                        queue.into(),
                        BasicPublishOptions {
                            mandatory: true,
                            ..BasicPublishOptions::default()
                        },
                        &body(i),
                        BasicProperties::default()
                            .with_delivery_mode(2)
                            .with_content_type("application/json".into()),
                    )
                    .await?,
            );
        }
        for c in confirms {
            let c = c.await?;
            if !c.is_ack() || c.take_message().is_some() {
                bail!("the broker refused or returned a publication to {queue}");
            }
        }
        next = end;
    }
    Ok(())
}

async fn queue_depth(channel: &Channel, queue: &str) -> Result<u32> {
    let q = channel
        .queue_declare(
            queue.into(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
    Ok(q.message_count())
}

// ------------------------------------------------------------------ P2: 10,000 groups, one second

fn p2_catalog(groups: usize, hosts: &[String]) -> Result<Catalog> {
    let settings: Vec<Value> = (0..groups)
        .map(|i| {
            json!({
                "id": format!("{APP}.job.{i}"), "application": APP, "agent": "job",
                "kind": "scheduled", "parameters": { "n": i }
            })
        })
        .collect();
    // A yearly placeholder: the real fire time is set once everything else is ready.
    let schedule_groups: Vec<Value> = (0..groups)
        .map(|i| {
            json!({
                "id": format!("{APP}.g{i}"), "application": APP, "cron": "0 0 0 1 1 *",
                "time_zone": "UTC", "members": [format!("{APP}.job.{i}")]
            })
        })
        .collect();
    Ok(serde_json::from_value(json!({
        "version": 1,
        "applications": [{ "id": APP, "title": "Benchmark", "default_pool": "bench-pool" }],
        "pools": [{ "id": "bench-pool", "title": "Benchmark hosts", "hosts": hosts }],
        "agents": [{
            "application": APP, "id": "job", "title": "Job", "input": "standalone",
            "concurrency": "ANY", "overlap": "allow",
            "parameters": [{ "name": "n", "title": "N", "type": "integer" }]
        }],
        "launch_settings": settings,
        "schedule_groups": schedule_groups,
    }))?)
}

fn heartbeat(host: &str) -> Heartbeat {
    Heartbeat {
        application: APP.into(),
        host: host.into(),
        capacity: 1000,
        running: Vec::new(),
        load: Some(0.1),
        dropped_reports: 0,
        quarantined: 0,
        at: Utc::now(),
    }
}

/// What the sampler saw, every few milliseconds, on its own connection.
#[derive(Default)]
struct Timeline {
    /// Commit time (first sample that saw it) of each fire, in order of appearance.
    committed: Vec<DateTime<Utc>>,
    first_sent: Option<DateTime<Utc>>,
    all_sent: Option<DateTime<Utc>>,
}

/// The manager's database, as `db::connect` opens it; with `BENCH_SQL_LOG` set, every
/// statement is logged with its duration (`RUST_LOG=sqlx::query=info`).
async fn manager_db(url: &str) -> Result<DatabaseConnection> {
    if std::env::var_os("BENCH_SQL_LOG").is_none() {
        return Ok(db::connect(url).await?);
    }
    let mut opts = sea_orm::ConnectOptions::new(url.to_owned());
    opts.max_connections(4)
        .min_connections(1)
        .sqlx_logging(true)
        .sqlx_logging_level(tracing::log::LevelFilter::Info);
    opts.map_sqlx_sqlite_opts(|o| {
        o.foreign_keys(true)
            .busy_timeout(Duration::from_secs(10))
            .journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
    });
    Ok(sea_orm::Database::connect(opts).await?)
}

async fn p2() -> Result<Value> {
    let groups: usize = env_or("BENCH_GROUPS", 10_000);
    let lead: i64 = env_or("BENCH_LEAD_SECS", 30);
    let hosts = hosts(env_or("BENCH_HOSTS", 4));
    let round = Round::new()?;
    let conn = manager_db(&round.url).await?;
    db::migrate(&conn).await?;
    let (rss_empty_mb, _) = memory();

    // The catalog, through the import path operators use.
    let doc = p2_catalog(groups, &hosts)?;
    let t = Instant::now();
    validate_catalog(&doc).map_err(|e| anyhow::anyhow!("invalid catalog: {e:?}"))?;
    let validate_ms = t.elapsed().as_secs_f64() * 1000.0;
    let t = Instant::now();
    catalog::import(&conn, &Principal::cli(), doc)
        .await
        .map_err(|e| anyhow::anyhow!("import: {e}"))?;
    let import_ms = t.elapsed().as_secs_f64() * 1000.0;

    // Live nodes with their control queues, so launches are really stored by the broker.
    for h in &hosts {
        registry::record_heartbeat(&conn, &heartbeat(h), Utc::now()).await?;
    }
    let (node_conn, node_channel) = publisher(&amqp_url()).await?;
    for h in &hosts {
        round.topology.declare_node(&node_channel, APP, h).await?;
    }
    let (_, setup_peak_mb) = memory();

    // The fire time: `lead` seconds from now, on a whole second.
    let now = Utc::now();
    let fire_at = (now + ChronoDuration::seconds(lead + 1))
        .with_nanosecond(0)
        .context("whole second")?;
    let cron = format!(
        "{} {} {} * * *",
        fire_at.second(),
        fire_at.minute(),
        fire_at.hour()
    );
    conn.execute_unprepared(&format!(
        "UPDATE schedule_groups SET cron = '{cron}', next_fire_at = NULL"
    ))
    .await?;

    reset_peak();
    let (rss_start_mb, _) = memory();
    let stop = CancellationToken::new();
    let started = Instant::now();
    let (broker, tasks) = start_manager(&round, &conn, &stop);

    // Nodes keep heartbeating through the reports queue, as real ones do.
    let beat_stop = stop.child_token();
    let beat_channel = node_channel.clone();
    let reports_queue = round.topology.names().reports_queue();
    let beat_hosts = hosts.clone();
    let beats = tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            tokio::select! {
                _ = every.tick() => {}
                () = beat_stop.cancelled() => return,
            }
            let beat = |i: usize| wire::encode(&ToManager::Heartbeat(heartbeat(&beat_hosts[i])));
            if let Err(e) = publish_all(&beat_channel, &reports_queue, beat_hosts.len(), beat).await
            {
                tracing::warn!(error = %e, "heartbeat not published");
            }
        }
    });

    // Sample on a connection of its own, so the runtime's pool is not shared.
    let probe = db::connect(&round.url).await?;
    let mut armed_ms = f64::NAN;
    loop {
        let armed = count(
            &probe,
            "SELECT count(*) FROM schedule_groups WHERE next_fire_at IS NOT NULL",
        )
        .await?;
        if armed as usize >= groups {
            armed_ms = started.elapsed().as_secs_f64() * 1000.0;
            break;
        }
        if Utc::now() >= fire_at {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let slack_ms = ms(fire_at - Utc::now());

    let mut timeline = Timeline::default();
    let deadline = fire_at + ChronoDuration::seconds(120);
    let expected = groups as i64;
    let mut peak_rss = 0.0_f64;
    let trace = std::env::var_os("BENCH_TRACE").is_some();
    let mut last = (0, 0);
    loop {
        let fired = count(
            &probe,
            "SELECT count(*) FROM activations WHERE fire_key IS NOT NULL",
        )
        .await?;
        let sent = count(
            &probe,
            "SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL",
        )
        .await?;
        let seen = Utc::now();
        let rss = memory().0;
        peak_rss = peak_rss.max(rss);
        if trace && (fired, sent) != last {
            last = (fired, sent);
            eprintln!(
                "t={:>6.0} ms fired={fired:>6} confirmed={sent:>6} rss={rss:.0} MB",
                ms(seen - fire_at)
            );
        }
        while (timeline.committed.len() as i64) < fired {
            timeline.committed.push(seen);
        }
        if sent > 0 && timeline.first_sent.is_none() {
            timeline.first_sent = Some(seen);
        }
        if fired >= expected && sent >= expected {
            timeline.all_sent = Some(seen);
            break;
        }
        if seen > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(if seen < fire_at { 50 } else { 10 })).await;
    }
    let (_, peak_mb) = memory();

    // Lags from the database: when each fire was recorded, when each command was confirmed.
    let created: Vec<DateTime<Utc>> = activations::Entity::find()
        .select_only()
        .column(activations::Column::CreatedAt)
        .filter(activations::Column::FireKey.is_not_null())
        .into_tuple()
        .all(&probe)
        .await?;
    let sent_at: Vec<Option<DateTime<Utc>>> = outbox::Entity::find()
        .select_only()
        .column(outbox::Column::SentAt)
        .into_tuple()
        .all(&probe)
        .await?;
    let mut created_lag: Vec<f64> = created.iter().map(|c| ms(*c - fire_at)).collect();
    created_lag.sort_by(f64::total_cmp);
    let mut committed_lag: Vec<f64> = timeline
        .committed
        .iter()
        .map(|c| ms(*c - fire_at))
        .collect();
    committed_lag.sort_by(f64::total_cmp);
    let confirmed: Vec<DateTime<Utc>> = sent_at.iter().flatten().copied().collect();
    let last_confirmed = confirmed.iter().max().map(|t| ms(*t - fire_at));
    let unsent = sent_at.len() - confirmed.len();
    let mut stored = 0;
    for h in &hosts {
        stored += queue_depth(&node_channel, &round.topology.names().node_queue(APP, h)).await?;
    }

    beats.abort();
    stop_manager(&stop, broker, tasks).await;
    round.cleanup(&node_conn, &hosts).await;
    let _ = node_conn.close(200, "bench done".into()).await;

    Ok(json!({
        "groups": groups,
        "validate_ms": validate_ms.round(),
        "import_ms": import_ms.round(),
        "setup_peak_mb": setup_peak_mb.round(),
        "armed_ms": armed_ms.round(),
        "slack_before_fire_ms": slack_ms.round(),
        "fired": created.len(),
        "recorded_p50_ms": percentile(&created_lag, 50.0).round(),
        "recorded_p99_ms": percentile(&created_lag, 99.0).round(),
        "recorded_max_ms": percentile(&created_lag, 100.0).round(),
        "committed_p50_ms": percentile(&committed_lag, 50.0).round(),
        "committed_p99_ms": percentile(&committed_lag, 99.0).round(),
        "committed_max_ms": percentile(&committed_lag, 100.0).round(),
        "first_confirmed_ms": timeline.first_sent.map_or(f64::NAN, |t| ms(t - fire_at)).round(),
        "all_confirmed_ms": last_confirmed.unwrap_or(f64::NAN).round(),
        "all_confirmed_seen_ms": timeline.all_sent.map_or(f64::NAN, |t| ms(t - fire_at)).round(),
        "commands": sent_at.len(),
        "unsent": unsent,
        "stored_in_node_queues": stored,
        "rss_empty_db_mb": rss_empty_mb.round(),
        "rss_start_mb": rss_start_mb.round(),
        "rss_peak_mb": peak_mb.max(peak_rss).round(),
    }))
}

// ------------------------------------------------------------------ P3: failure reports

fn failure_report(i: usize, hosts: &[String]) -> Vec<u8> {
    // Fifty reports per activation, as a busy message agent failing on many messages.
    let activation = uuid::Uuid::from_u128(0xbe9c_0000_0000_0000 + (i / 50) as u128);
    let mut details =
        String::from("java.lang.IllegalStateException: invoice total does not match its lines\n");
    for frame in 0..14 {
        details.push_str(&format!(
            "\tat com.example.billing.export.InvoiceExporter.step{frame}(InvoiceExporter.java:{})\n",
            100 + frame
        ));
    }
    wire::encode(&ToManager::Failure(FailureReport {
        application: APP.into(),
        host: hosts[i % hosts.len()].clone(),
        activation_id: ActivationId(activation.to_string()),
        launch_setting: format!("{APP}.invoice-export.{}", i % 20),
        agent: "invoice-export".into(),
        error_type: "java.lang.IllegalStateException".into(),
        message: format!(
            "invoice {i:08} of customer 4711: total 1520.00 does not match the sum of its lines 1519.99"
        ),
        details,
        data_message_id: Some(format!("msg-{i:08}")),
        attempt: 1 + (i % 3) as u32,
        temporary: false,
        disposition: Some("retry".into()),
        at: Utc::now(),
    }))
}

async fn p3(live: bool) -> Result<Value> {
    let n: usize = env_or("BENCH_REPORTS", 50_000);
    let hosts = hosts(4);
    let round = Round::new()?;
    let conn = db::connect(&round.url).await?;
    db::migrate(&conn).await?;
    let probe = db::connect(&round.url).await?;
    let (pub_conn, channel) = publisher(&amqp_url()).await?;
    round.topology.declare_manager_side(&channel).await?;
    let queue = round.topology.names().reports_queue();
    let report_bytes = failure_report(0, &hosts).len();

    reset_peak();
    let stop = CancellationToken::new();
    let mut publish_ms = f64::NAN;
    let (started, broker, tasks, publishing) = if live {
        let (broker, tasks) = start_manager(&round, &conn, &stop);
        // Wait for the consumer before the clock starts.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let q = channel
                .queue_declare(
                    queue.as_str().into(),
                    QueueDeclareOptions {
                        passive: true,
                        ..QueueDeclareOptions::default()
                    },
                    FieldTable::default(),
                )
                .await?;
            if q.consumer_count() > 0 {
                break;
            }
            if Instant::now() > deadline {
                bail!("the report consumer did not start");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let started = Instant::now();
        let ch = channel.clone();
        let q = queue.clone();
        let publishing = tokio::spawn(async move {
            let t = Instant::now();
            publish_all(&ch, &q, n, |i| failure_report(i, &hosts))
                .await
                .map(|()| t.elapsed())
        });
        (started, broker, tasks, Some(publishing))
    } else {
        let t = Instant::now();
        publish_all(&channel, &queue, n, |i| failure_report(i, &hosts)).await?;
        publish_ms = t.elapsed().as_secs_f64() * 1000.0;
        let started = Instant::now();
        let (broker, tasks) = start_manager(&round, &conn, &stop);
        (started, broker, tasks, None)
    };

    let deadline = Instant::now() + Duration::from_secs(600);
    let mut first_row = None;
    let mut done = None;
    loop {
        let stored = count(&probe, "SELECT count(*) FROM failure_logs").await?;
        if stored > 0 && first_row.is_none() {
            first_row = Some(started.elapsed());
        }
        if stored as usize >= n {
            done = Some(started.elapsed());
            break;
        }
        if Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if let Some(p) = publishing {
        publish_ms = p.await??.as_secs_f64() * 1000.0;
    }
    // Anything doubled would arrive within the next batches: give them time, then check.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, peak_mb) = memory();
    let stored = count(&probe, "SELECT count(*) FROM failure_logs").await?;
    let distinct = count(
        &probe,
        "SELECT count(DISTINCT data_message_id) FROM failure_logs",
    )
    .await?;
    let left = queue_depth(&channel, &queue).await?;
    stop_manager(&stop, broker, tasks).await;
    round.cleanup(&pub_conn, &[]).await;
    let _ = pub_conn.close(200, "bench done".into()).await;

    let secs = done.map_or(f64::NAN, |d| d.as_secs_f64());
    let from_first = match (done, first_row) {
        (Some(d), Some(f)) => (d - f).as_secs_f64(),
        _ => f64::NAN,
    };
    Ok(json!({
        "reports": n,
        "report_bytes": report_bytes,
        "publish_ms": publish_ms.round(),
        "publish_per_s": (n as f64 / (publish_ms / 1000.0)).round(),
        "stored_ms": (secs * 1000.0).round(),
        "stored_per_s": (n as f64 / secs).round(),
        "first_row_ms": first_row.map_or(f64::NAN, |f| f.as_secs_f64() * 1000.0).round(),
        "stored_per_s_from_first_row": (n as f64 / from_first).round(),
        "stored": stored,
        "distinct": distinct,
        "lost": n as i64 - distinct,
        "doubled": stored - distinct,
        "left_in_queue": left,
        "rss_peak_mb": peak_mb.round(),
    }))
}
