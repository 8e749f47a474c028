//! Catalog writes at scale: how long an import, and one entity's edit, hold the write lock.
//!
//! Builds a catalog of `BENCH_LS` launch settings (default 2,000) on `BENCH_LS / 10` data
//! queues and agents, 10 applications and pools of 10 hosts each, a schedule group per 10
//! scheduled launch settings (half the launch settings are scheduled) and one classifier of
//! `BENCH_VALUES` values (50,000), then on each backend times:
//!
//! - validation alone (pure, no database);
//! - the import into an empty catalog (the write transaction, lock included);
//! - an import of the same document again (nothing changes);
//! - `BENCH_EDITS` (20) single launch-setting edits through `catalog::update`, p50/p95/max;
//! - an import at the documented limits (10,000 launch settings, data queues, agents and
//!   pools), when `BENCH_AT_LIMITS=1`.
//!
//! Meanwhile another writer (an audit entry every 20 ms, as the runtime writes all the time)
//! records how long it waited at most in each phase: on SQLite that is how long a catalog
//! write held the database's write lock.
//!
//! ```sh
//! source scripts/leptos-env.sh
//! cargo bench -p am-services --bench catalog
//! BENCH_AT_LIMITS=1 BENCH_BACKENDS=sqlite cargo bench -p am-services --bench catalog
//! ```

// A benchmark reads as one scenario, set-up to last figure: the one-sitting bound of
// production functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

mod common;

use am_domain::{
    catalog::{Catalog, LaunchSetting},
    usage::EntityRef,
    validate::{limits::MAX_ENTITIES_PER_KIND, validate_catalog},
};
use am_services::{
    Principal,
    audit::{self, AuditEntry},
    catalog,
    testing::{Backend, TestDb},
};
use common::{env, percentile};
use serde_json::json;
use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Instant,
};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

/// A catalog of `settings` launch settings, `queues` data queues (one agent each), `pools`
/// pools and `values` classifier values.
fn build(settings: usize, queues: usize, pools: usize, values: usize) -> BenchResult<Catalog> {
    let apps = 10;
    let applications: Vec<_> = (0..apps)
        .map(|a| {
            json!({ "id": format!("app{a}"), "title": format!("Application {a}"),
                         "default_pool": format!("pool{}", a % pools) })
        })
        .collect();
    let pool_list: Vec<_> = (0..pools)
        .map(|p| {
            let hosts: Vec<String> = (0..10).map(|h| format!("host-{p}-{h}")).collect();
            json!({ "id": format!("pool{p}"), "title": format!("Pool {p}"), "hosts": hosts })
        })
        .collect();
    let data_queues: Vec<_> = (0..queues)
        .map(|q| json!({ "id": format!("dq{q}"), "kind": "topic" }))
        .collect();
    let agents: Vec<_> = (0..queues)
        .map(|q| {
            json!({ "application": format!("app{}", q % apps), "id": format!("agent{q}"),
                    "input": "messages", "data_queue": format!("dq{q}"),
                    "concurrency": "ANY", "overlap": "allow",
                    "parameters": [{ "name": "org", "type": "classifier(orgs)", "array": true }] })
        })
        .collect();
    let launch_settings: Vec<_> = (0..settings)
        .map(|i| {
            let q = i % queues;
            let kind = if i % 2 == 0 { "stream" } else { "scheduled" };
            json!({ "id": format!("ls{i}"), "title": format!("Launch setting {i}"),
                    "application": format!("app{}", q % apps), "agent": format!("agent{q}"),
                    "kind": kind, "parameters": { "org": [format!("org{}", i % values.max(1))] },
                    "filter": { "headers": { "tenant": format!("t{}", i % 7) } } })
        })
        .collect();
    let scheduled: Vec<String> = (0..settings)
        .filter(|i| i % 2 == 1)
        .map(|i| format!("ls{i}"))
        .collect();
    let groups: Vec<_> = scheduled
        .chunks(10)
        .enumerate()
        .map(|(g, members)| {
            let app = members
                .first()
                .and_then(|m| m.strip_prefix("ls"))
                .and_then(|i| i.parse::<usize>().ok())
                .map_or(0, |i| (i % queues) % apps);
            json!({ "id": format!("group{g}"), "application": format!("app{app}"),
                    "cron": "0 0 * * * *", "time_zone": "UTC", "members": members })
        })
        .collect();
    let mut catalog: Catalog = serde_json::from_value(json!({
        "applications": applications,
        "pools": pool_list,
        "data_queues": data_queues,
        "agents": agents,
        "launch_settings": launch_settings,
        "schedule_groups": groups,
        "classifiers": (0..apps).map(|a| json!({
            "application": format!("app{a}"), "name": "orgs",
            "values": (0..values / apps).map(|v| json!({ "code": format!("org{}", v * apps + a),
                                                         "label": format!("Organisation {v}") }))
                                        .collect::<Vec<_>>()
        })).collect::<Vec<_>>(),
    }))?;
    fix_up(&mut catalog);
    Ok(catalog)
}

/// Makes the generated document valid: a group only lists launch settings of its own
/// application, and each parameter value is a code of that application's classifier.
fn fix_up(catalog: &mut Catalog) {
    let app_of: std::collections::HashMap<String, String> = catalog
        .launch_settings
        .iter()
        .map(|l| (l.id.clone(), l.application.clone()))
        .collect();
    for g in &mut catalog.schedule_groups {
        let app = g.application.clone();
        g.members
            .retain(|m| app_of.get(m).is_some_and(|a| *a == app));
    }
    let grouped: std::collections::HashSet<String> = catalog
        .schedule_groups
        .iter()
        .flat_map(|g| g.members.iter().cloned())
        .collect();
    for l in &mut catalog.launch_settings {
        if grouped.contains(&l.id) {
            l.filter = None;
        } else {
            l.kind = am_domain::catalog::LaunchKind::Stream;
        }
        let app: usize = l.application.trim_start_matches("app").parse().unwrap_or(0);
        let code = catalog
            .classifiers
            .iter()
            .find(|c| c.application == l.application)
            .and_then(|c| c.values.get(app % c.values.len().max(1)))
            .map(|v| v.code.clone());
        match code {
            Some(code) => l.parameters.insert("org".into(), json!([code])),
            None => l.parameters.remove("org"),
        };
    }
    catalog.schedule_groups.retain(|g| !g.members.is_empty());
}

/// Another writer, writing every 20 ms until stopped; `longest` holds its longest write so
/// far in microseconds (each phase takes it and starts again from 0).
struct OtherWriter {
    stop: Arc<AtomicBool>,
    longest: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<Result<(), String>>,
}

impl OtherWriter {
    fn start(db: sea_orm::DatabaseConnection) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let longest = Arc::new(AtomicU64::new(0));
        let (stopped, seen) = (stop.clone(), longest.clone());
        let task = tokio::spawn(async move {
            let cli = Principal::cli();
            while !stopped.load(Ordering::Relaxed) {
                let started = Instant::now();
                audit::record(&db, AuditEntry::new(&cli, "probe", "bench", "writer"))
                    .await
                    .map_err(|e| e.to_string())?;
                let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                seen.fetch_max(micros, Ordering::Relaxed);
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Ok(())
        });
        Self {
            stop,
            longest,
            task,
        }
    }

    /// The longest wait since the last call, in ms; first lets a write that waited for the
    /// phase's last catalog write finish, so that it counts in this phase.
    async fn phase(&self) -> f64 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        self.longest.swap(0, Ordering::Relaxed) as f64 / 1000.0
    }

    async fn stop(self) -> BenchResult<()> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await??;
        Ok(())
    }
}

async fn measure(backend: Backend, doc: &Catalog, edits: usize) -> BenchResult<()> {
    let t = TestDb::new(backend).await;
    let cli = Principal::cli();
    let writer = OtherWriter::start(t.db.clone());

    let started = Instant::now();
    catalog::import(&t.db, &cli, doc.clone()).await?;
    println!(
        "  import into an empty catalog: {:.2} s (another writer waited at most {:.0} ms)",
        started.elapsed().as_secs_f64(),
        writer.phase().await
    );

    let started = Instant::now();
    let summary = catalog::import(&t.db, &cli, doc.clone()).await?;
    println!(
        "  the same import again: {:.2} s ({} changes; another writer waited at most {:.0} ms)",
        started.elapsed().as_secs_f64(),
        summary.created.len() + summary.updated.len() + summary.deleted.len(),
        writer.phase().await
    );

    let mut times = Vec::with_capacity(edits);
    for e in 0..edits {
        let mut ls: LaunchSetting = doc.launch_settings[e * 7 % doc.launch_settings.len()].clone();
        ls.title = format!("edited {e}");
        let key = EntityRef::LaunchSetting(ls.id.clone());
        let started = Instant::now();
        catalog::update(&t.db, &cli, &key, ls).await?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "  one launch setting edited ({edits}×): p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms \
         (another writer waited at most {:.0} ms)",
        percentile(&times, 0.5),
        percentile(&times, 0.95),
        times.last().copied().unwrap_or(0.0),
        writer.phase().await
    );
    writer.stop().await
}

fn main() -> BenchResult<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(run())
}

async fn run() -> BenchResult<()> {
    let settings = env("BENCH_LS", 2_000).max(10);
    let values = env("BENCH_VALUES", 50_000).max(10);
    let edits = env("BENCH_EDITS", 20).max(1);
    let mut shapes = vec![("catalog", build(settings, settings / 10, 10, values)?)];
    if env("BENCH_AT_LIMITS", 0) == 1 {
        let n = MAX_ENTITIES_PER_KIND;
        shapes.push(("catalog at the limits", build(n, n, n, values)?));
    }
    let backends = std::env::var("BENCH_BACKENDS").unwrap_or_else(|_| "sqlite,postgres".into());
    for (label, doc) in &shapes {
        println!(
            "\n== {label}: {} launch settings, {} data queues and agents, {} pools, {} groups, {} classifier values, {} MB as JSON ==",
            doc.launch_settings.len(),
            doc.data_queues.len(),
            doc.pools.len(),
            doc.schedule_groups.len(),
            doc.classifiers
                .iter()
                .map(|c| c.values.len())
                .sum::<usize>(),
            serde_json::to_vec(doc)?.len() / 1_000_000
        );
        let started = Instant::now();
        validate_catalog(doc).map_err(|e| {
            let first: Vec<_> = e.0.iter().take(5).collect();
            format!(
                "the generated catalog is invalid ({} errors): {first:?}",
                e.0.len()
            )
        })?;
        println!(
            "validation alone: {:.0} ms",
            started.elapsed().as_secs_f64() * 1000.0
        );
        for name in backends.split(',').map(str::trim) {
            let backend = match name {
                "sqlite" => Backend::Sqlite,
                "postgres" => Backend::Postgres,
                other => return Err(format!("unknown backend {other}").into()),
            };
            println!("{name}:");
            measure(backend, doc, edits).await?;
        }
    }
    Ok(())
}
