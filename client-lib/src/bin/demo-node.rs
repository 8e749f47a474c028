//! `demo-node`: a node with the demo agents of the specification, for trying the manager out
//! and for demos. Several can run on one machine with different `AM_HOST`s.
//!
//! Environment: `AM_AMQP_URL` (default the local RabbitMQ), `AM_APP` (default `demo`),
//! `AM_HOST` (default the host name), `AM_PREFIX` (broker names prefix, default `am`),
//! `AM_CAPACITY` (default 8), `AM_QUEUE_EXPIRY` (a throw-away topology, for tests).

use agent_client::{
    AgentError, AgentSpec, Classifier, Context, Message, MessageAgent, NodeBuilder,
    StandaloneAgent, Topology,
    domain::{
        HumanDuration,
        catalog::{ClassifierValue, Concurrency, OverlapPolicy},
        params::{ParamSpec, ParamType},
    },
};
use anyhow::Context as _;
use std::{
    hash::{BuildHasher, RandomState},
    time::Duration,
};

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

/// Fails on messages whose body contains `poison`.
struct Poison;
impl MessageAgent for Poison {
    type Params = serde_json::Value;
    async fn handle(&self, _ctx: &Context<Self::Params>, msg: &Message) -> Result<(), AgentError> {
        if String::from_utf8_lossy(msg.body()).contains("poison") {
            return Err(AgentError::failed(
                "Poisoned",
                "the message contains poison",
            ));
        }
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

fn param(name: &str, title: &str, ty: ParamType, default: Option<serde_json::Value>) -> ParamSpec {
    let mut p = ParamSpec::new(name, ty);
    p.title = title.to_owned();
    p.default = default;
    p
}

fn organisations() -> Vec<ClassifierValue> {
    (1..=1000)
        .map(|i| ClassifierValue {
            code: format!("org-{i:04}"),
            label: format!("Organisation {i}"),
        })
        .collect()
}

async fn host_name() -> String {
    if let Ok(h) = std::env::var("AM_HOST") {
        return h;
    }
    let raw = tokio::fs::read_to_string("/proc/sys/kernel/hostname")
        .await
        .unwrap_or_else(|_| "localhost".to_owned());
    raw.trim().to_lowercase()
}

/// `AM_PREFIX` names the broker objects; `AM_QUEUE_EXPIRY` (e.g. `60s`, for tests and
/// throw-away demos) makes them disappear once unused.
fn topology() -> anyhow::Result<Topology> {
    let topology = Topology::new(std::env::var("AM_PREFIX").unwrap_or_else(|_| "am".to_owned()));
    Ok(match std::env::var("AM_QUEUE_EXPIRY") {
        Ok(v) => {
            let d: HumanDuration = v
                .parse()
                .map_err(|e| anyhow::anyhow!("AM_QUEUE_EXPIRY: {e}"))?;
            topology.ephemeral(d.0)
        }
        Err(_) => topology,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let capacity = match std::env::var("AM_CAPACITY") {
        Ok(v) => v
            .parse()
            .with_context(|| format!("AM_CAPACITY: `{v}` is not a number"))?,
        Err(_) => 8,
    };
    let rate_param = |name: &str, title: &str| {
        let mut p = param(name, title, ParamType::Decimal, Some(serde_json::json!(0)));
        p.min = Some(serde_json::json!(0));
        p.max = Some(serde_json::json!(1));
        p
    };
    let node = NodeBuilder::new(
        std::env::var("AM_APP").unwrap_or_else(|_| "demo".to_owned()),
        host_name().await,
    )
    .amqp_url(
        std::env::var("AM_AMQP_URL").unwrap_or_else(|_| agent_client::DEFAULT_AMQP_URL.to_owned()),
    )
    .topology(topology()?)
    .version(env!("CARGO_PKG_VERSION"))
    .capacity(capacity)
    .messages(
        AgentSpec::new("echo")
            .title("Echo")
            .suggest_data_queue("demo-events")
            .param(param(
                "site",
                "Site",
                ParamType::Classifier("sites".into()),
                None,
            ))
            .param(param(
                "organisations",
                "Organisations",
                ParamType::Classifier("organisations".into()),
                None,
            )),
        Echo,
    )
    .messages(
        AgentSpec::new("flaky")
            .title("Flaky")
            .suggest_data_queue("demo-events")
            .param(rate_param("temporary_rate", "Share of temporary failures"))
            .param(rate_param("failure_rate", "Share of failures")),
        Flaky,
    )
    .messages(
        AgentSpec::new("poison")
            .title("Poison")
            .suggest_data_queue("demo-events"),
        Poison,
    )
    .standalone(
        AgentSpec::new("sleep")
            .title("Sleep")
            .suggest_overlap(OverlapPolicy::Skip)
            .param(param(
                "duration",
                "Duration",
                ParamType::Duration,
                Some(serde_json::json!("10s")),
            )),
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
    ))
    .start()
    .await?;
    tracing::info!("demo node started; Ctrl-C or SIGTERM stops it gracefully");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    node.shutdown().await;
    Ok(())
}
