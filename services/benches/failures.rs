//! P4: server time of each level of the failure-log drill-down with 1,000,000 failure rows.
//!
//! Loads `BENCH_LS` launch settings × `BENCH_ACTIVATIONS` activations × `BENCH_HOSTS` hosts ×
//! `BENCH_PER_HOST` failures (default 100 × 100 × 4 × 25 = 1,000,000) with `BENCH_ERROR_TYPES`
//! (20) error types into a fresh database, in time order with launch settings and hosts
//! interleaved as concurrent runs write them (multi-row inserts, one transaction), then calls
//! the service functions of every level `BENCH_ITERATIONS` (200) times each with varied keys
//! and filters and prints p50/p95/p99/max.
//!
//! ```sh
//! source scripts/leptos-env.sh
//! cargo bench -p am-services --bench failures               # SQLite and PostgreSQL
//! BENCH_BACKENDS=sqlite BENCH_EXPLAIN=1 cargo bench -p am-services --bench failures
//! ```
//!
//! PostgreSQL: `AM_TEST_PG_URL` as for the tests; after the load the table is `VACUUM
//! ANALYZE`d, as autovacuum would do after a million inserts. SQLite gets no `ANALYZE` (the
//! manager runs none).

// A benchmark reads as one scenario, set-up to last figure: the one-sitting bound of
// production functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

use am_domain::read::failures::FailureFilter;
use am_domain::roles::Role;
use am_services::{
    AuthMethod, Principal, catalog, failures,
    testing::{Backend, TestDb},
};
use chrono::{DateTime, Duration, TimeZone, Utc};
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
    launch_settings: u64,
    activations: u64,
    hosts: u64,
    per_host: u64,
    error_types: u64,
}

impl Shape {
    fn rows(&self) -> u64 {
        self.launch_settings * self.activations * self.hosts * self.per_host
    }
    fn ls(&self, l: u64) -> String {
        format!("bench.agent-{:03}.ls-{l:03}", l % 17)
    }
    fn host(&self, h: u64) -> String {
        format!("node-{h:02}.bench.example")
    }
    fn error_type(&self, e: u64) -> String {
        format!("com.example.Error{e:02}")
    }
    /// Deterministic activation ids (v7-like: time-ordered by round).
    fn activation(&self, l: u64, a: u64) -> Uuid {
        Uuid::from_u64_pair(0x0190_0000_0000_7000 | a, 0x8000_0000_0000_0000 | l)
    }
    fn base(&self) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
            .single()
            .unwrap_or_default()
    }
    /// Activation rounds start 7.2 h apart (100 rounds over 30 days); failures of a round
    /// spread over its first two hours.
    fn at(&self, a: u64, i: u64, l: u64, h: u64) -> DateTime<Utc> {
        let seconds = a * 25_920 + i * 280 + (l * self.hosts + h) % 280;
        self.base() + Duration::seconds(i64::try_from(seconds).unwrap_or(0))
    }
}

/// xorshift64*: varied keys without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
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
        launch_settings: env("BENCH_LS", 100),
        activations: env("BENCH_ACTIVATIONS", 100),
        hosts: env("BENCH_HOSTS", 4),
        per_host: env("BENCH_PER_HOST", 25),
        error_types: env("BENCH_ERROR_TYPES", 20),
    };
    let iterations = env("BENCH_ITERATIONS", 200);
    let explain = std::env::var("BENCH_EXPLAIN").is_ok_and(|v| v == "1");
    let backends = std::env::var("BENCH_BACKENDS").unwrap_or_else(|_| "sqlite,postgres".into());
    for name in backends.split(',').map(str::trim) {
        let backend = match name {
            "sqlite" => Backend::Sqlite,
            "postgres" => Backend::Postgres,
            other => return Err(format!("unknown backend {other}").into()),
        };
        let t = TestDb::new(backend).await;
        println!("\n== {name}: {} failure rows ==", shape.rows());
        load(&t.db, &shape).await?;
        measure(&t.db, &shape, iterations, explain).await?;
    }
    Ok(())
}

fn catalog_doc(shape: &Shape) -> serde_json::Value {
    let ls: Vec<serde_json::Value> = (0..shape.launch_settings)
        .map(|l| {
            serde_json::json!({"id": shape.ls(l), "application": "bench", "agent": "work",
                "kind": "scheduled"})
        })
        .collect();
    let members: Vec<String> = (0..shape.launch_settings).map(|l| shape.ls(l)).collect();
    serde_json::json!({
        "version": 1,
        "applications": [{"id": "bench", "title": "Bench", "default_pool": "bench-pool"}],
        "pools": [{"id": "bench-pool", "title": "Bench",
            "hosts": (0..shape.hosts).map(|h| shape.host(h)).collect::<Vec<_>>()}],
        "agents": [{"application": "bench", "id": "work", "title": "Work", "input": "standalone",
            "concurrency": "MANY", "overlap": "allow"}],
        "launch_settings": ls,
        "schedule_groups": [{"id": "bench.all", "application": "bench", "cron": "0 0 1 1 *",
            "time_zone": "UTC", "members": members}],
    })
}

/// Multi-row `INSERT`s of `rows` (each `columns.len()` values), `per` rows per statement.
async fn insert(
    db: &impl ConnectionTrait,
    table: &str,
    columns: &[&str],
    rows: Vec<Vec<Value>>,
    per: usize,
) -> BenchResult<()> {
    let backend = db.get_database_backend();
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

async fn load(db: &DatabaseConnection, shape: &Shape) -> BenchResult<()> {
    let admin = Principal {
        user_id: 0,
        name: "bench".into(),
        role: Role::Admin,
        via: AuthMethod::Token,
        address: None,
    };
    let doc = serde_json::from_value(catalog_doc(shape))?;
    catalog::import(db, &admin, doc).await?;

    let started = Instant::now();
    let per = match db.get_database_backend() {
        DbBackend::Postgres => 5_000,
        _ => 2_500,
    };
    let txn = db.begin().await?;
    // The activations and their dispatch to every host.
    let mut activations = Vec::new();
    let mut hosts = Vec::new();
    for a in 0..shape.activations {
        for l in 0..shape.launch_settings {
            let id = shape.activation(l, a);
            let at = shape.at(a, 0, 0, 0);
            activations.push(vec![
                Value::from(id),
                Value::from(shape.ls(l)),
                Value::from("schedule"),
                Value::from(if a + 1 == shape.activations {
                    "running"
                } else {
                    "failed"
                }),
                Value::from(at),
                Value::from("bench"),
                Value::from(1i64),
            ]);
            for h in 0..shape.hosts {
                hosts.push(vec![
                    Value::from(id),
                    Value::from(shape.host(h)),
                    Value::from("bench"),
                    Value::from(1i64),
                    Value::from("failed"),
                    Value::from(1i32),
                    Value::from(at),
                    Value::from(0i64),
                    Value::from(0i64),
                    Value::from(0i64),
                    Value::from(0i64),
                ]);
            }
        }
    }
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
        activations,
        per,
    )
    .await?;
    insert(
        &txn,
        "activation_hosts",
        &[
            "activation_id",
            "host",
            "application_id",
            "fencing_token",
            "status",
            "attempt",
            "dispatched_at",
            "processed",
            "failed",
            "retried",
            "dead_lettered",
        ],
        hosts,
        per,
    )
    .await?;

    // The failures, in time order: concurrent runs of every launch setting and host interleave.
    let columns = [
        "launch_setting_id",
        "activation_id",
        "host",
        "application_id",
        "agent_id",
        "error_type",
        "message",
        "details",
        "data_message_id",
        "attempt",
        "occurred_at",
    ];
    let mut batch = Vec::with_capacity(per);
    for a in 0..shape.activations {
        for i in 0..shape.per_host {
            for l in 0..shape.launch_settings {
                for h in 0..shape.hosts {
                    let e = (l * 7 + a * 3 + h + i) % shape.error_types;
                    let error_type = shape.error_type(e);
                    batch.push(vec![
                        Value::from(shape.ls(l)),
                        Value::from(shape.activation(l, a)),
                        Value::from(shape.host(h)),
                        Value::from("bench"),
                        Value::from("work"),
                        Value::from(error_type.clone()),
                        Value::from(format!("{error_type}: could not process record {i} of batch {a}")),
                        Value::from(format!(
                            "{error_type}: could not process record {i}\n  at com.example.Work.process(Work.java:{})\n  at com.example.Runner.run(Runner.java:88)\n  at java.base/java.lang.Thread.run(Thread.java:1583)",
                            40 + e
                        )),
                        Value::from((i % 2 == 0).then(|| format!("msg-{l}-{a}-{h}-{i}"))),
                        Value::from(i32::try_from(i % 10 + 1).unwrap_or(1)),
                        Value::from(shape.at(a, i, l, h)),
                    ]);
                    if batch.len() == per {
                        insert(
                            &txn,
                            "failure_logs",
                            &columns,
                            std::mem::take(&mut batch),
                            per,
                        )
                        .await?;
                    }
                }
            }
        }
    }
    insert(&txn, "failure_logs", &columns, batch, per).await?;
    txn.commit().await?;
    println!("loaded in {:.1} s", started.elapsed().as_secs_f64());
    if db.get_database_backend() == DbBackend::Postgres {
        let started = Instant::now();
        db.execute_unprepared("VACUUM ANALYZE failure_logs").await?;
        db.execute_unprepared("VACUUM ANALYZE activations").await?;
        db.execute_unprepared("VACUUM ANALYZE activation_hosts")
            .await?;
        println!("VACUUM ANALYZE in {:.1} s", started.elapsed().as_secs_f64());
    }
    Ok(())
}

struct Stats {
    name: &'static str,
    ms: Vec<f64>,
}

impl Stats {
    fn pct(&self, p: f64) -> f64 {
        let mut v = self.ms.clone();
        v.sort_by(f64::total_cmp);
        let i = ((v.len() as f64 - 1.0) * p).round() as usize;
        v.get(i).copied().unwrap_or(0.0)
    }
}

async fn measure(
    db: &DatabaseConnection,
    shape: &Shape,
    iterations: u64,
    explain: bool,
) -> BenchResult<()> {
    let viewer = &Principal {
        user_id: 0,
        name: "bench".into(),
        role: Role::Viewer,
        via: AuthMethod::Token,
        address: None,
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let day = |rng: &mut Rng| {
        let d = rng.below(29);
        let from = shape.base() + Duration::days(i64::try_from(d).unwrap_or(0));
        (
            Some(from.to_rfc3339()),
            Some((from + Duration::days(1)).to_rfc3339()),
        )
    };
    if explain {
        let ls = shape.ls(42);
        let a = shape.activation(42, 7);
        let filters = [
            ("no filter", FailureFilter::default()),
            (
                "error type",
                FailureFilter {
                    error_type: Some(shape.error_type(3)),
                    ..Default::default()
                },
            ),
            ("one day", {
                let (from, to) = day(&mut rng);
                FailureFilter {
                    from,
                    to,
                    ..Default::default()
                }
            }),
            (
                "launch setting, activation, host",
                FailureFilter {
                    launch_setting: Some(ls.clone()),
                    activation: Some(a.to_string()),
                    host: Some(shape.host(1)),
                    ..Default::default()
                },
            ),
        ];
        for (name, f) in filters {
            println!("\n-- plans, filter: {name}");
            for (statement, plan) in failures::explain(db, &f, &ls, a).await? {
                println!("{statement}\n  {}", plan.replace('\n', "\n  "));
            }
        }
    }

    let mut all: Vec<Stats> = Vec::new();
    macro_rules! level {
        ($name:literal, |$rng:ident| $call:expr) => {{
            let mut ms = Vec::with_capacity(iterations as usize);
            // Warm-up: the first calls fill the caches and the connection pool.
            for _ in 0..3 {
                let $rng = &mut rng;
                $call.await?;
            }
            for _ in 0..iterations {
                let $rng = &mut rng;
                let t = Instant::now();
                $call.await?;
                ms.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            all.push(Stats { name: $name, ms });
        }};
    }
    let ls_at = |rng: &mut Rng| shape.ls(rng.below(shape.launch_settings));

    level!(
        "1. launch settings, a page of 20 after a random cursor",
        |r| {
            let after = (r.below(4) > 0).then(|| shape.ls(r.below(shape.launch_settings)));
            let f = FailureFilter::default();
            async move { failures::launch_settings(db, viewer, &f, after.as_deref(), None).await }
        }
    );
    level!("1. launch settings, by error type", |r| {
        let f = FailureFilter {
            error_type: Some(shape.error_type(r.below(shape.error_types))),
            ..Default::default()
        };
        async move { failures::launch_settings(db, viewer, &f, None, None).await }
    });
    level!("1. launch settings, one day", |r| {
        let (from, to) = day(r);
        let f = FailureFilter {
            from,
            to,
            ..Default::default()
        };
        async move { failures::launch_settings(db, viewer, &f, None, None).await }
    });
    level!("2. activations of a launch setting, page 1-5", |r| {
        let ls = ls_at(r);
        let page = r.below(5) + 1;
        async move {
            failures::activations(db, viewer, &ls, &FailureFilter::default(), Some(page), None)
                .await
        }
    });
    level!("2. activations of a launch setting, by error type", |r| {
        let ls = ls_at(r);
        let f = FailureFilter {
            error_type: Some(shape.error_type(r.below(shape.error_types))),
            ..Default::default()
        };
        async move { failures::activations(db, viewer, &ls, &f, None, None).await }
    });
    level!("3. hosts of an activation", |r| {
        let (l, a) = (r.below(shape.launch_settings), r.below(shape.activations));
        let f = FailureFilter {
            launch_setting: Some(shape.ls(l)),
            ..Default::default()
        };
        let id = shape.activation(l, a).to_string();
        async move { failures::hosts(db, viewer, &id, &f).await }
    });
    level!("4. failures of a host of an activation (page of 50)", |r| {
        let (l, a, h) = (
            r.below(shape.launch_settings),
            r.below(shape.activations),
            r.below(shape.hosts),
        );
        let f = FailureFilter {
            launch_setting: Some(shape.ls(l)),
            activation: Some(shape.activation(l, a).to_string()),
            host: Some(shape.host(h)),
            ..Default::default()
        };
        async move { failures::list(db, viewer, &f, None, None).await }
    });
    level!(
        "4. failures of a launch setting by error type, pages 1-2",
        |r| {
            let f = FailureFilter {
                launch_setting: Some(ls_at(r)),
                error_type: Some(shape.error_type(r.below(shape.error_types))),
                ..Default::default()
            };
            let second = r.below(2) == 1;
            async move {
                let first = failures::list(db, viewer, &f, None, None).await?;
                match (second, first.next) {
                    (true, Some(next)) => failures::list(db, viewer, &f, Some(next), None).await,
                    _ => Ok(first),
                }
            }
        }
    );
    level!("4. failures of a launch setting, one day", |r| {
        let (from, to) = day(r);
        let f = FailureFilter {
            launch_setting: Some(ls_at(r)),
            from,
            to,
            ..Default::default()
        };
        async move { failures::list(db, viewer, &f, None, None).await }
    });
    // Not a drill-down level and not bounded: counts by error type over the whole table.
    level!("(unscoped) failures of everything, by an error type", |r| {
        let f = FailureFilter {
            error_type: Some(shape.error_type(r.below(shape.error_types))),
            ..Default::default()
        };
        async move { failures::list(db, viewer, &f, None, None).await }
    });
    let everything = FailureFilter::default();
    level!("(unscoped) failures of everything", |_r| {
        failures::list(db, viewer, &everything, None, None)
    });

    println!(
        "\n{:<58} {:>8} {:>8} {:>8} {:>8}",
        "level (ms, server time)", "p50", "p95", "p99", "max"
    );
    for s in &all {
        println!(
            "{:<58} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
            s.name,
            s.pct(0.5),
            s.pct(0.95),
            s.pct(0.99),
            s.pct(1.0)
        );
    }
    Ok(())
}
