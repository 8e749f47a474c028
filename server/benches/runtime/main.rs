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

// A benchmark reads as one scenario, set-up to last figure: the one-sitting bound of
// production functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

mod p2;
mod p3;
mod support;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::process::Command;
use support::env_or;

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

async fn child(scenario: &str) -> Result<Value> {
    match scenario {
        "p2" => p2::run().await,
        "p3" => p3::run(false).await,
        "p3-live" => p3::run(true).await,
        other => bail!("unknown scenario {other} (p2, p3, p3-live)"),
    }
}
