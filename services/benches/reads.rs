//! Reads beside a classifier at its limit: a launch setting's page and an agent's read must
//! not grow with the classifier their parameters pick from (docs/benchmarks.md, Reads beside a
//! 100,000-value classifier).
//!
//! Imports a catalog whose agent has a classifier parameter over `BENCH_VALUES` values (the
//! documented maximum, 100,000, unless asked otherwise), then on each backend times
//! `BENCH_READS` (50) calls of what those pages and the API call:
//!
//! - the catalog a launch setting's page draws its form from (`catalog::overview`);
//! - the launch setting's summary above its form (`ls_overview::of`);
//! - `GET /api/v1/agents/{application}/{id}` and `GET /api/v1/launch-settings/{id}`
//!   (`catalog::get`);
//! - the parameter picker: its first page of values, a search, and the labels of the saved
//!   codes (`classifiers::search`, `classifiers::lookup`);
//!
//! first one call at a time, then with `BENCH_PARALLEL` (10) page loads at once (each the
//! catalog and the summary), as ten operators opening the page together.
//!
//! ```sh
//! source scripts/leptos-env.sh
//! cargo bench -p am-services --bench reads
//! ```

// A benchmark reads as one scenario, set-up to last figure: the one-sitting bound of
// production functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

mod common;

use am_domain::{
    catalog::{Agent, Catalog, LaunchSetting},
    usage::EntityRef,
    validate::limits::MAX_VALUES_PER_CLASSIFIER,
};
use am_services::{
    Principal, catalog, classifiers, ls_overview,
    testing::{Backend, TestDb},
};
use common::{env, percentile};
use sea_orm::DatabaseConnection;
use serde_json::json;
use std::time::Instant;

type BenchResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

const APP: &str = "bench";
const AGENT: &str = "export";
const LS: &str = "bench.export.1";
const CLASSIFIER: &str = "orgs";

/// One application, pool, data queue and agent with a classifier parameter over `values`
/// values, and ten launch settings picking codes from it.
fn build(values: usize) -> BenchResult<Catalog> {
    let codes: Vec<_> = (0..values)
        .map(|v| json!({ "code": format!("org{v}"), "label": format!("Organisation {v}") }))
        .collect();
    let launch_settings: Vec<_> = (1..=10)
        .map(|i| {
            json!({ "id": format!("bench.export.{i}"), "title": format!("Export {i}"),
                    "application": APP, "agent": AGENT, "kind": "stream",
                    "parameters": { "org": [format!("org{}", i * 997 % values)] } })
        })
        .collect();
    Ok(serde_json::from_value(json!({
        "applications": [{ "id": APP, "default_pool": "bench-pool" }],
        "pools": [{ "id": "bench-pool", "hosts": ["bench-a", "bench-b"] }],
        "data_queues": [{ "id": "bench.events", "kind": "topic" }],
        "agents": [{ "application": APP, "id": AGENT, "input": "messages",
                     "data_queue": "bench.events", "concurrency": "ANY", "overlap": "allow",
                     "parameters": [{ "name": "org", "type": format!("classifier({CLASSIFIER})"),
                                      "array": true }] }],
        "launch_settings": launch_settings,
        "classifiers": [{ "application": APP, "name": CLASSIFIER, "values": codes }],
    }))?)
}

fn report(what: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    println!(
        "  {what:<44} p50 {:>7.2} ms  p95 {:>7.2} ms  max {:>7.2} ms",
        percentile(&ms, 0.5),
        percentile(&ms, 0.95),
        ms.last().copied().unwrap_or(0.0)
    );
}

/// Milliseconds of each of `n` calls of `call`.
async fn timed<F, Fut, T>(n: usize, mut call: F) -> BenchResult<Vec<f64>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, am_services::ServiceError>>,
{
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        call().await?;
        out.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(out)
}

/// A launch setting's page as the UI loads it: the catalog for its form, then its summary.
async fn page_load(db: &DatabaseConnection, who: &Principal) -> BenchResult<f64> {
    let started = Instant::now();
    catalog::overview(db, who).await?;
    ls_overview::of(db, who, LS, chrono::Utc::now()).await?;
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

async fn measure(
    backend: Backend,
    doc: &Catalog,
    reads: usize,
    parallel: usize,
) -> BenchResult<()> {
    let t = TestDb::new(backend).await;
    let who = Principal::cli();
    let started = Instant::now();
    catalog::import(&t.db, &who, doc.clone()).await?;
    println!("  import: {:.2} s", started.elapsed().as_secs_f64());
    let db = &t.db;
    let who = &who;
    let agent = EntityRef::agent(APP, AGENT);
    let ls = EntityRef::LaunchSetting(LS.to_owned());
    let saved: Vec<String> = (0..10).map(|v| format!("org{}", v * 9_973)).collect();

    report(
        "launch-setting page: the catalog",
        timed(reads, || catalog::overview(db, who)).await?,
    );
    report(
        "launch-setting page: its summary",
        timed(reads, || ls_overview::of(db, who, LS, chrono::Utc::now())).await?,
    );
    report(
        "GET /api/v1/agents/{application}/{id}",
        timed(reads, || catalog::get::<Agent>(db, who, &agent)).await?,
    );
    report(
        "GET /api/v1/launch-settings/{id}",
        timed(reads, || catalog::get::<LaunchSetting>(db, who, &ls)).await?,
    );
    report(
        "picker: first page of values",
        timed(reads, || {
            classifiers::search(db, who, APP, CLASSIFIER, "", 50)
        })
        .await?,
    );
    report(
        "picker: a search (\"organisation 9999\")",
        timed(reads, || {
            classifiers::search(db, who, APP, CLASSIFIER, "organisation 9999", 50)
        })
        .await?,
    );
    report(
        "picker: labels of 10 saved codes",
        timed(reads, || {
            classifiers::lookup(db, who, APP, CLASSIFIER, &saved)
        })
        .await?,
    );

    // Ten operators open the page at once, each `reads / 5` times.
    let mut tasks = Vec::with_capacity(parallel);
    for _ in 0..parallel {
        let (db, who) = (t.db.clone(), Principal::cli());
        let n = (reads / 5).max(1);
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                out.push(page_load(&db, &who).await?);
            }
            BenchResult::Ok(out)
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await??);
    }
    report(
        &format!("launch-setting page, {parallel} loads at once"),
        all,
    );
    Ok(())
}

fn main() -> BenchResult<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(run())
}

async fn run() -> BenchResult<()> {
    let values = env("BENCH_VALUES", MAX_VALUES_PER_CLASSIFIER).max(10);
    let reads = env("BENCH_READS", 50).max(5);
    let parallel = env("BENCH_PARALLEL", 10).max(1);
    let doc = build(values)?;
    let backends = std::env::var("BENCH_BACKENDS").unwrap_or_else(|_| "sqlite,postgres".into());
    println!("== a classifier of {values} values; {reads} calls each ==");
    for name in backends.split(',').map(str::trim) {
        let backend = match name {
            "sqlite" => Backend::Sqlite,
            "postgres" => Backend::Postgres,
            other => return Err(format!("unknown backend {other}").into()),
        };
        println!("{name}:");
        measure(backend, &doc, reads, parallel).await?;
    }
    Ok(())
}
