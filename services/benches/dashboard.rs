//! Server time of one dashboard snapshot (`am_services::dashboard::snapshot`) with 1,000,000
//! failure rows, as the live feed takes one every two seconds.
//!
//! Loads `BENCH_FAILURES` failure rows (default 1,000,000) with `BENCH_ERROR_TYPES` (20) error
//! types spread evenly over the last `BENCH_DAYS` days (default 30, so about 33,000 fall in the
//! chart's 24 hours; `BENCH_DAYS=1` puts all of them there, the worst case), `BENCH_ACTIVATIONS`
//! finished activations over the same days (100,000) plus 500 active ones, 10,000 dead letters
//! and 1,000 launch settings (a tenth disabled), then takes `BENCH_ITERATIONS` (20) snapshots,
//! as many as the live feed takes them (the chart's complete hours kept), and as many `/metrics`
//! gauge reads, and prints p50/p95/max of each.
//!
//! ```sh
//! source scripts/leptos-env.sh
//! cargo bench -p am-services --bench dashboard                 # SQLite and PostgreSQL
//! BENCH_DAYS=1 BENCH_BACKENDS=sqlite cargo bench -p am-services --bench dashboard
//! ```
//!
//! PostgreSQL: `AM_TEST_PG_URL` as for the tests; the tables are `VACUUM ANALYZE`d after the
//! load, as autovacuum would do. SQLite gets no `ANALYZE` (the manager runs none).

// A benchmark reads as one scenario, set-up to last figure: the one-sitting bound of
// production functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

use am_domain::roles::Role;
use am_services::{
    AuthMethod, Principal, catalog, dashboard,
    runtime::RuntimeConfig,
    testing::{Backend, TestDb},
};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement, TransactionTrait, Value};
use std::time::Instant;
use uuid::Uuid;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Shape {
    failures: u64,
    error_types: u64,
    days: u64,
    activations: u64,
    launch_settings: u64,
}

impl Shape {
    fn ls(&self, l: u64) -> String {
        format!("bench.ls-{:04}", l % self.launch_settings)
    }

    /// The `i`-th of `n` instants spread evenly over the window ending at `now`.
    fn at(&self, now: DateTime<Utc>, i: u64, n: u64) -> DateTime<Utc> {
        let span = i64::try_from(self.days * 86_400_000).unwrap_or(i64::MAX);
        let step = span / i64::try_from(n.max(1)).unwrap_or(1);
        now - Duration::milliseconds(span)
            + Duration::milliseconds(step * i64::try_from(i).unwrap_or(0))
    }
}

fn main() -> BenchResult<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(run())
}

async fn run() -> BenchResult<()> {
    let shape = Shape {
        failures: env("BENCH_FAILURES", 1_000_000),
        error_types: env("BENCH_ERROR_TYPES", 20),
        days: env("BENCH_DAYS", 30).max(1),
        activations: env("BENCH_ACTIVATIONS", 100_000),
        launch_settings: env("BENCH_LS", 1_000).max(1),
    };
    let iterations = env("BENCH_ITERATIONS", 20).max(1);
    let backends = std::env::var("BENCH_BACKENDS").unwrap_or_else(|_| "sqlite,postgres".into());
    for name in backends.split(',').map(str::trim) {
        let backend = match name {
            "sqlite" => Backend::Sqlite,
            "postgres" => Backend::Postgres,
            other => return Err(format!("unknown backend {other}").into()),
        };
        let t = TestDb::new(backend).await;
        println!(
            "\n== {name}: {} failure rows over {} days, {} activations ==",
            shape.failures, shape.days, shape.activations
        );
        let now = Utc::now();
        load(&t.db, &shape, now).await?;
        measure(&t.db, now, iterations).await?;
    }
    Ok(())
}

/// Multi-row `INSERT`s of `rows` (each `columns.len()` values), `per` rows per statement.
async fn insert(
    db: &impl ConnectionTrait,
    table: &str,
    columns: &[&str],
    rows: impl Iterator<Item = Vec<Value>>,
    per: usize,
) -> BenchResult<()> {
    let backend = db.get_database_backend();
    let rows: Vec<Vec<Value>> = rows.collect();
    for chunk in rows.chunks(per) {
        let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        let mut values = Vec::with_capacity(chunk.len() * columns.len());
        for (r, row) in chunk.iter().enumerate() {
            sql.push_str(if r == 0 { "(" } else { ", (" });
            for (c, v) in row.iter().enumerate() {
                if c > 0 {
                    sql.push_str(", ");
                }
                values.push(v.clone());
                match backend {
                    DbBackend::Postgres => sql.push_str(&format!("${}", values.len())),
                    _ => sql.push('?'),
                }
            }
            sql.push(')');
        }
        db.execute_raw(Statement::from_sql_and_values(backend, sql, values))
            .await?;
    }
    Ok(())
}

async fn load(db: &DatabaseConnection, shape: &Shape, now: DateTime<Utc>) -> BenchResult<()> {
    let admin = Principal {
        user_id: 0,
        name: "bench".into(),
        role: Role::Admin,
        via: AuthMethod::Token,
        address: None,
    };
    let ls: Vec<serde_json::Value> = (0..shape.launch_settings)
        .map(|l| {
            serde_json::json!({"id": shape.ls(l), "application": "bench", "agent": "work",
                "kind": "scheduled", "enabled": l % 10 != 0})
        })
        .collect();
    let members: Vec<String> = (0..shape.launch_settings).map(|l| shape.ls(l)).collect();
    let doc = serde_json::from_value(serde_json::json!({
        "version": 1,
        "applications": [{"id": "bench", "title": "Bench", "default_pool": "bench-pool"}],
        "pools": [{"id": "bench-pool", "title": "Bench", "hosts": ["node-a", "node-b"]}],
        "agents": [{"application": "bench", "id": "work", "title": "Work", "input": "standalone",
            "concurrency": "ANY", "overlap": "allow"}],
        "launch_settings": ls,
        "schedule_groups": [{"id": "bench.all", "application": "bench", "cron": "0 0 1 1 *",
            "time_zone": "UTC", "members": members}],
    }))?;
    catalog::import(db, &admin, doc).await?;

    let started = Instant::now();
    let per = match db.get_database_backend() {
        DbBackend::Postgres => 5_000,
        _ => 2_500,
    };
    let txn = db.begin().await?;
    let active = 500;
    let total = shape.activations + active;
    insert(
        &txn,
        "activations",
        &[
            "id",
            "launch_setting_id",
            "trigger",
            "status",
            "created_at",
            "application_id",
            "fencing_token",
        ],
        (0..total).map(|i| {
            let status = match i {
                i if i >= shape.activations => "running",
                i if i % 5 == 0 => "failed",
                _ => "succeeded",
            };
            let at = if i >= shape.activations {
                now - Duration::seconds(i64::try_from(total - i).unwrap_or(0))
            } else {
                shape.at(now, i, shape.activations)
            };
            vec![
                Value::from(Uuid::from_u64_pair(0x0190_0000_0000_7000, i)),
                Value::from(shape.ls(i)),
                Value::from("schedule"),
                Value::from(status),
                Value::from(at),
                Value::from("bench"),
                Value::from(1i64),
            ]
        }),
        per,
    )
    .await?;
    insert(
        &txn,
        "failure_logs",
        &[
            "launch_setting_id",
            "activation_id",
            "host",
            "application_id",
            "agent_id",
            "error_type",
            "message",
            "occurred_at",
        ],
        (0..shape.failures).map(|i| {
            vec![
                Value::from(shape.ls(i / 7)),
                Value::from(Uuid::from_u64_pair(0x0190_0000_0000_7000, i / 10)),
                Value::from(if i % 2 == 0 { "node-a" } else { "node-b" }),
                Value::from("bench"),
                Value::from("work"),
                Value::from(format!(
                    "com.example.Error{:02}",
                    (i * 7) % shape.error_types.max(1)
                )),
                Value::from("it failed"),
                Value::from(shape.at(now, i, shape.failures)),
            ]
        }),
        per,
    )
    .await?;
    insert(
        &txn,
        "dead_letters",
        &[
            "dedupe_key",
            "launch_setting_id",
            "headers",
            "body",
            "attempts",
            "received_at",
            "status",
            "replay_count",
        ],
        (0..10_000u64).map(|i| {
            vec![
                Value::from(format!("bench-{i}")),
                Value::from(shape.ls(i)),
                Value::from(serde_json::json!({})),
                Value::from(b"{}".to_vec()),
                Value::from(10i32),
                Value::from(shape.at(now, i, 10_000)),
                Value::from(if i % 4 == 0 { "replayed" } else { "dead" }),
                Value::from(0i32),
            ]
        }),
        per / 2,
    )
    .await?;
    txn.commit().await?;
    if db.get_database_backend() == DbBackend::Postgres {
        db.execute_unprepared("VACUUM ANALYZE").await?;
    }
    println!("loaded in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

async fn measure(db: &DatabaseConnection, now: DateTime<Utc>, iterations: u64) -> BenchResult<()> {
    let viewer = Principal::system("bench");
    let cfg = RuntimeConfig::new("bench");
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..iterations {
        let t = Instant::now();
        let d = dashboard::snapshot(db, &viewer, &cfg, now).await?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        last = Some(d);
    }
    // The live feed's steady state: the chart's complete hours kept, the current hour read.
    let cache = dashboard::ChartCache::default();
    dashboard::snapshot_cached(db, &viewer, &cfg, now, &cache).await?;
    let mut cached_times = Vec::new();
    for _ in 0..iterations {
        let t = Instant::now();
        dashboard::snapshot_cached(db, &viewer, &cfg, now, &cache).await?;
        cached_times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let mut gauge_times = Vec::new();
    for _ in 0..iterations {
        let t = Instant::now();
        dashboard::gauges(db, now).await?;
        gauge_times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    if let Some(d) = last {
        println!(
            "figures: {} failures charted, {} in the last hour, {} dead letters, {} active, {} disabled",
            d.failures_per_hour.total(),
            d.failures_last_hour,
            d.dead_letters,
            d.running_total,
            d.disabled_launch_settings_total
        );
    }
    for (what, mut t) in [
        ("snapshot", times),
        ("snapshot, complete hours kept (live feed)", cached_times),
        ("gauges (/metrics)", gauge_times),
    ] {
        t.sort_by(f64::total_cmp);
        let pick = |q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
        println!(
            "{what}: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms ({} runs)",
            pick(0.5),
            pick(0.95),
            pick(1.0),
            t.len()
        );
    }
    for (statement, plan) in dashboard::explain(db, now).await? {
        println!(
            "{}\n  {}",
            statement.split(':').next().unwrap_or(""),
            plan.replace('\n', "\n  ")
        );
    }
    Ok(())
}
