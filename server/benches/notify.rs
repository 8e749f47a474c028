//! Notification delivery (issue 13): the notifier of one manager process on the embedded
//! default (a SQLite file), sending to a local HTTP receiver.
//!
//! - **all**: `BENCH_NOTIFICATIONS` (1,000) notifications raised at once (`node_lost` of
//!   distinct hosts, so none folds), spread over 10 endpoints of the receiver: time from the
//!   raise until the receiver got the last one, and the latency of each (received − raised).
//! - **hanging**: the same, plus 50 notifications to an endpoint that never answers (each try
//!   waits out the 10 s timeout, 8 at a time): the others' latency must not suffer.
//!
//! ```sh
//! source scripts/leptos-env.sh
//! cargo bench -p server --bench notify
//! ```
//!
//! Env: `BENCH_NOTIFICATIONS` (1000), `BENCH_ROUNDS` (3). The per-endpoint rate cap (60 a
//! minute by default) is lifted: it is what protects a chat service, not what is measured.

// A benchmark reads as one scenario, set-up to last figure: the one-sitting bound of
// production functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

use am_services::{
    Principal, catalog,
    notifications::{self, events},
    runtime::RuntimeConfig,
    testing::{Backend, TestDb},
};
use axum::{
    Router,
    extract::{Path, State},
    routing::post,
};
use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};
use tokio_util::sync::CancellationToken;

const ENDPOINTS: usize = 10;
const HANGING: usize = 50;

/// What the receiver got: the `host` of each body (which says which notification it is) and
/// when.
type Seen = Arc<Mutex<Vec<(String, Instant)>>>;

async fn receive(
    State(seen): State<Seen>,
    Path(path): Path<String>,
    body: axum::body::Bytes,
) -> &'static str {
    if path == "hang" {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    let at = Instant::now();
    let host = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["host"].as_str().map(str::to_owned))
        .unwrap_or_default();
    seen.lock().map(|mut s| s.push((host, at))).ok();
    "ok"
}

fn env_or(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// One round; returns (all delivered after, p50, p95, max latency).
async fn round(
    n: usize,
    hanging: bool,
) -> anyhow::Result<(Duration, Duration, Duration, Duration)> {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route("/{path}", post(receive))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let db = TestDb::new(Backend::Sqlite).await;
    // One application per endpoint, each with its webhook.
    let mut doc = serde_json::json!({
        "version": 1,
        "pools": [{ "id": "pool", "hosts": ["h"] }],
        "applications": [],
    });
    for e in 0..=ENDPOINTS {
        let path = if e == ENDPOINTS {
            "hang".to_owned()
        } else {
            format!("ep{e}")
        };
        doc["applications"]
            .as_array_mut()
            .ok_or_else(|| anyhow::anyhow!("applications"))?
            .push(serde_json::json!({
                "id": format!("app{e}"), "default_pool": "pool",
                "webhook_url": format!("{base}/{path}"),
            }));
    }
    catalog::import(&db.db, &Principal::cli(), serde_json::from_value(doc)?).await?;

    let mut cfg = RuntimeConfig::new("bench");
    cfg.notify.per_endpoint_per_minute = u32::MAX;
    let cfg = Arc::new(cfg);
    let stop = CancellationToken::new();
    let notifier = tokio::spawn(server::runtime::notifier::run(
        db.db.clone(),
        cfg.clone(),
        stop.clone(),
    ));

    let now = chrono::Utc::now();
    if hanging {
        for i in 0..HANGING {
            let notice = events::node(
                true,
                &format!("app{ENDPOINTS}"),
                &format!("stuck-{i}"),
                None,
                now,
            );
            notifications::raise(&db.db, notice, now).await?;
        }
    }
    let raised = Instant::now();
    let mut raised_at = std::collections::HashMap::with_capacity(n);
    for i in 0..n {
        let app = format!("app{}", i % ENDPOINTS);
        let host = format!("host-{i}");
        let notice = events::node(true, &app, &host, None, now);
        notifications::raise(&db.db, notice, now).await?;
        raised_at.insert(host, Instant::now());
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let got = seen.lock().map(|s| s.len()).unwrap_or(0);
        if got >= n || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let received = seen.lock().map(|s| s.clone()).unwrap_or_default();
    anyhow::ensure!(received.len() == n, "received {} of {n}", received.len());
    // Latency of each: from its commit (the raise returned) to the receiver's answer.
    let mut lat: Vec<Duration> = received
        .iter()
        .filter_map(|(host, t)| raised_at.get(host).map(|r| t.saturating_duration_since(*r)))
        .collect();
    anyhow::ensure!(lat.len() == n, "{} of {n} matched a raise", lat.len());
    lat.sort();
    let all = received
        .iter()
        .map(|(_, t)| *t)
        .max()
        .map(|t| t.duration_since(raised))
        .unwrap_or_default();
    stop.cancel();
    notifier.abort();
    server.abort();
    Ok((
        all,
        percentile(&lat, 0.5),
        percentile(&lat, 0.95),
        percentile(&lat, 1.0),
    ))
}

fn main() -> anyhow::Result<()> {
    let n = env_or("BENCH_NOTIFICATIONS", 1000);
    let rounds = env_or("BENCH_ROUNDS", 3);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    for hanging in [false, true] {
        for r in 1..=rounds {
            let (all, p50, p95, max) = rt.block_on(round(n, hanging))?;
            println!(
                "{} round {r}: {n} delivered {:.2} s after the first raise; latency (raised → received) p50 {} ms, p95 {} ms, max {} ms",
                if hanging { "hanging" } else { "all" },
                all.as_secs_f64(),
                p50.as_millis(),
                p95.as_millis(),
                max.as_millis()
            );
        }
    }
    Ok(())
}
