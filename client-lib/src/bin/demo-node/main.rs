//! `demo-node`: a node with the demo agents of the specification, for trying the manager out
//! and for demos. Several can run on one machine with different `AM_HOST`s; `scripts/run.sh`
//! starts two (`demo-a`, `demo-b`) for the catalog in `demo/catalog.json`.
//!
//! Environment: `AM_AMQP_URL` (default the local RabbitMQ), `AM_APP` (default `demo`),
//! `AM_HOST` (default the host name), `AM_PREFIX` (broker names prefix, default `am`),
//! `AM_CAPACITY` (default 8), `AM_QUEUE_EXPIRY` (a throw-away topology, for tests),
//! `AM_HEARTBEAT` (heartbeat interval, e.g. `500ms`; default the library's 10 s; tests lower it
//! so the manager notices a dead node within seconds).
//!
//! Conformance: `AM_RECORD=<file>` also registers the scripted agents of the node conformance
//! suite (`script`, `script-messages`: docs/conformance.md), which append what they saw to that
//! file.
//!
//! Metrics: `AM_METRICS_LISTEN=<address>` (e.g. `127.0.0.1:9464`) serves the node's own
//! figures at `GET /metrics` ([`agent_client::NodeMetrics`]). Traces: the standard
//! `OTEL_EXPORTER_OTLP_ENDPOINT` and `OTEL_SERVICE_NAME`.
//!
//! Demo traffic: `AM_DEMO_PRODUCE=<milliseconds>` makes the node also publish a small JSON event
//! every that many milliseconds to each data exchange of `AM_DEMO_EXCHANGES` (comma-separated,
//! default `demo.events,demo.later`: the addresses of the demo catalog's data queues). Every
//! tenth event says `poison` in its body, for the `poison` agent to choke on. Events carry a
//! `site` header (`par`, `lyo` or `mrs`, codes of the `sites` classifier) for message filters.
//! The manager declares the exchanges from its catalog; until it has, the producer waits and
//! retries. Each event is published with publisher confirms, and the producer reconnects after
//! a failure. Unset or `0`: the node produces nothing. Run one
//! producer per installation.

use agent_client::{
    AgentError, AgentSpec, Classifier, Context, Message, MessageAgent, NodeBuilder,
    StandaloneAgent,
    domain::{
        HumanDuration,
        catalog::{ClassifierValue, Concurrency, OverlapPolicy},
        params::{ParamSpec, ParamType},
    },
};
use std::{
    hash::{BuildHasher, RandomState},
    time::Duration,
};
use tracing_subscriber::{Layer, layer::SubscriberExt, util::SubscriberInitExt};

mod producer;
mod script;

use producer::Producer;

/// Logs each message and succeeds.
struct Echo;
impl MessageAgent for Echo {
    type Params = serde_json::Value;
    async fn handle(&self, ctx: &Context<Self::Params>, msg: &Message) -> Result<(), AgentError> {
        tracing::info!(launch_setting = ctx.launch_setting(), attempt = msg.attempt(),
            body = %String::from_utf8_lossy(msg.body()), "echo");
        Ok(())
    }
}

#[derive(serde::Deserialize)]
struct FlakyParams {
    #[serde(default)]
    temporary_rate: serde_json::Value,
    #[serde(default)]
    failure_rate: serde_json::Value,
}

fn rate(v: &serde_json::Value) -> f64 {
    match v {
        serde_json::Value::Number(n) => n.as_f64().unwrap_or(0.0),
        serde_json::Value::String(s) => s.parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// A uniform number in [0, 1) from the process's random hasher seed and a counter.
fn chance() -> f64 {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let h = RandomState::new().hash_one(n);
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Fails temporarily or for good at the rates given by its parameters.
struct Flaky;
impl MessageAgent for Flaky {
    type Params = FlakyParams;
    async fn handle(&self, ctx: &Context<FlakyParams>, _msg: &Message) -> Result<(), AgentError> {
        let roll = chance();
        let temporary = rate(&ctx.params().temporary_rate);
        if roll < temporary {
            return Err(AgentError::temporarily_unavailable("the dice said: later"));
        }
        if roll < temporary + rate(&ctx.params().failure_rate) {
            return Err(AgentError::failed("FlakyFailure", "the dice said: no"));
        }
        Ok(())
    }
}

/// Fails on messages whose body contains `poison`; logs the others and succeeds.
struct Poison;
impl MessageAgent for Poison {
    type Params = serde_json::Value;
    async fn handle(&self, ctx: &Context<Self::Params>, msg: &Message) -> Result<(), AgentError> {
        let body = String::from_utf8_lossy(msg.body());
        if body.contains("poison") {
            return Err(AgentError::failed(
                "Poisoned",
                "the message contains poison",
            ));
        }
        tracing::info!(launch_setting = ctx.launch_setting(), attempt = msg.attempt(),
            body = %body, "passed");
        Ok(())
    }
}

#[derive(serde::Deserialize)]
struct SleepParams {
    duration: HumanDuration,
}

/// Sleeps for `duration`, reporting progress each second, and honours interruption.
struct Sleep;
impl StandaloneAgent for Sleep {
    type Params = SleepParams;
    async fn run(&self, ctx: Context<SleepParams>) -> Result<(), AgentError> {
        let total = ctx.params().duration.0;
        let started = tokio::time::Instant::now();
        while started.elapsed() < total {
            let step = (total - started.elapsed()).min(Duration::from_secs(1));
            tokio::select! {
                () = tokio::time::sleep(step) => {}
                () = ctx.cancelled() => return Err(AgentError::interrupted()),
            }
            let done = started.elapsed().as_secs();
            ctx.progress(Some(done), Some(total.as_secs()), format!("slept {done}s"));
        }
        Ok(())
    }
}

/// Always fails.
struct Fail;
impl StandaloneAgent for Fail {
    type Params = serde_json::Value;
    async fn run(&self, _ctx: Context<Self::Params>) -> Result<(), AgentError> {
        Err(
            AgentError::failed("DemoFailure", "the fail agent always fails")
                .with_details("by design"),
        )
    }
}

/// A thousand organisations, for pickers with search. The first three are the ones the demo
/// catalog declares (`demo/catalog.json`): a publication replaces the classifier whole and may
/// not drop a code that a launch setting uses.
fn organisations() -> Vec<ClassifierValue> {
    let named = [
        ("acme", "ACME Corporation"),
        ("globex", "Globex"),
        ("initech", "Initech"),
    ]
    .map(|(code, label)| ClassifierValue {
        code: code.to_owned(),
        label: label.to_owned(),
    });
    let numbered = (named.len() + 1..=1000).map(|i| ClassifierValue {
        code: format!("org-{i:04}"),
        label: format!("Organisation {i}"),
    });
    named.into_iter().chain(numbered).collect()
}

/// Serves `GET /metrics` at `addr` until aborted.
async fn serve_metrics(
    addr: &str,
    metrics: agent_client::NodeMetrics,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("AM_METRICS_LISTEN: cannot listen on {addr}: {e}"))?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let text = metrics.to_text();
            async move { ([("content-type", "text/plain; version=0.0.4")], text) }
        }),
    );
    tracing::info!(%addr, "serving the node's metrics at /metrics");
    Ok(tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!(error = %e, "the metrics endpoint stopped");
        }
    }))
}

/// `AM_HEARTBEAT` (e.g. `500ms`): how often the node heartbeats; the library's default when unset.
fn heartbeat_every() -> anyhow::Result<Option<Duration>> {
    match std::env::var("AM_HEARTBEAT") {
        Ok(v) => {
            let d: HumanDuration = v
                .parse()
                .map_err(|e| anyhow::anyhow!("AM_HEARTBEAT: {e}"))?;
            Ok(Some(d.0))
        }
        Err(_) => Ok(None),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md, Observe).
    let telemetry = agent_client::telemetry::Telemetry::from_env("demo-node")?;
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        ))
        .with(telemetry.as_ref().map(|t| t.layer()))
        .init();
    let result = run().await;
    if let Some(t) = telemetry {
        t.shutdown();
    }
    result
}

async fn run() -> anyhow::Result<()> {
    let rate_param = |name: &str, title: &str| {
        ParamSpec::new(name, ParamType::Decimal)
            .title(title)
            .default(0)
            .min(0)
            .max(1)
    };
    // The library's variables (AM_HOST, AM_AMQP_URL, AM_PREFIX, AM_CAPACITY), with the demo
    // application as the default of AM_APP.
    let builder = NodeBuilder::from_vars(|name| {
        std::env::var(name)
            .ok()
            .or_else(|| (name == "AM_APP").then(|| "demo".to_owned()))
    })?;
    let host = builder.host_name().to_owned();
    let amqp_url = builder.broker_url().to_owned();
    let producer = Producer::from_env(&amqp_url, &host)?;
    let builder = builder
        .version(env!("CARGO_PKG_VERSION"))
        .messages(
            AgentSpec::new("echo")
                .title("Echo")
                .suggest_data_queue("demo.events")
                .suggest_concurrency(Concurrency::Many)
                .param(
                    ParamSpec::classifier("organisations", "organisations")
                        .title("Organisations")
                        .array(),
                ),
            Echo,
        )
        .messages(
            AgentSpec::new("flaky")
                .title("Flaky")
                .suggest_data_queue("demo.later")
                .param(rate_param("temporary_rate", "Share of temporary failures"))
                .param(rate_param("failure_rate", "Share of failures")),
            Flaky,
        )
        .messages(
            AgentSpec::new("poison")
                .title("Poison")
                .suggest_data_queue("demo.events"),
            Poison,
        )
        .standalone(
            AgentSpec::new("sleep")
                .title("Sleep")
                .suggest_overlap(OverlapPolicy::Skip)
                .param(
                    ParamSpec::new("duration", ParamType::Duration)
                        .title("Duration")
                        .default("10s"),
                ),
            Sleep,
        )
        .standalone(
            AgentSpec::new("fail")
                .title("Fail")
                .suggest_concurrency(Concurrency::Any),
            Fail,
        )
        .classifier(
            Classifier::new("sites", "Sites")
                .value("par", "Paris")
                .value("lyo", "Lyon")
                .value("mrs", "Marseille"),
        )
        .classifier(Classifier::provider(
            "organisations",
            "Organisations",
            organisations,
        ));
    let builder = match std::env::var_os("AM_RECORD") {
        Some(path) => script::register(builder, std::path::Path::new(&path)).await?,
        None => builder,
    };
    let builder = match heartbeat_every()? {
        Some(every) => builder.heartbeat_every(every),
        None => builder,
    };
    let node = builder.start().await?;
    let serving = match std::env::var("AM_METRICS_LISTEN") {
        Ok(addr) if !addr.trim().is_empty() => {
            Some(serve_metrics(addr.trim(), node.metrics()).await?)
        }
        _ => None,
    };
    tracing::info!("demo node started; Ctrl-C or SIGTERM stops it gracefully");
    let producing = producer.map(|p| tokio::spawn(p.run()));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    if let Some(task) = producing {
        task.abort();
    }
    if let Some(task) = serving {
        task.abort();
    }
    node.shutdown().await;
    Ok(())
}
