//! Agents the tests drive: a message probe whose behaviour each test sets, and a sleeper.

use agent_client::domain::params::{ParamSpec, ParamType};
use agent_client::{AgentError, AgentSpec, Context, Message, MessageAgent, StandaloneAgent};
use std::{
    sync::{Arc, Mutex},
    time::Duration,
};
use tokio::time::Instant;

#[derive(Debug, Clone)]
pub struct Seen {
    pub host: String,
    pub body: String,
    pub attempt: u32,
    /// Its answers "temporarily unavailable" before this delivery.
    pub unavailable: u32,
    pub redelivered: bool,
    pub at: Instant,
}

pub type Log = Arc<Mutex<Vec<Seen>>>;
type Behaviour = Arc<dyn Fn(&Message) -> Result<(), AgentError> + Send + Sync>;

/// Records every message, optionally holds it, then behaves as told.
#[derive(Clone)]
pub struct Probe {
    pub host: String,
    pub log: Log,
    behave: Behaviour,
    hold: Duration,
}

impl Probe {
    pub fn new(
        host: &str,
        log: &Log,
        behave: impl Fn(&Message) -> Result<(), AgentError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            host: host.to_owned(),
            log: Arc::clone(log),
            behave: Arc::new(behave),
            hold: Duration::ZERO,
        }
    }

    pub fn ok(host: &str, log: &Log) -> Self {
        Self::new(host, log, |_| Ok(()))
    }

    /// Holds every message this long, deaf to cancellation (a stuck agent).
    pub fn holding(mut self, hold: Duration) -> Self {
        self.hold = hold;
        self
    }
}

pub fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

pub fn seen(log: &Log) -> Vec<Seen> {
    log.lock().expect("lock").clone()
}

impl MessageAgent for Probe {
    type Params = serde_json::Value;

    async fn handle(&self, _ctx: &Context<Self::Params>, msg: &Message) -> Result<(), AgentError> {
        self.log.lock().expect("lock").push(Seen {
            host: self.host.clone(),
            body: msg.body_str()?.to_owned(),
            attempt: msg.attempt(),
            unavailable: msg.unavailable(),
            redelivered: msg.redelivered(),
            at: Instant::now(),
        });
        if !self.hold.is_zero() {
            tokio::time::sleep(self.hold).await;
        }
        (self.behave)(msg)
    }
}

pub fn probe_spec() -> AgentSpec {
    AgentSpec::new("probe").title("Probe").prefetch(5)
}

#[derive(Debug, serde::Deserialize)]
pub struct SleepParams {
    pub duration: agent_client::domain::HumanDuration,
    #[serde(default)]
    pub fail: Option<String>,
}

/// Sleeps for `duration`, honouring interruption; fails with error type `fail` if given.
pub struct Sleeper {
    pub runs: Arc<Mutex<Vec<String>>>,
}

impl StandaloneAgent for Sleeper {
    type Params = SleepParams;

    async fn run(&self, ctx: Context<SleepParams>) -> Result<(), AgentError> {
        self.runs
            .lock()
            .expect("lock")
            .push(ctx.activation_id().to_string());
        ctx.progress(Some(0), Some(1), "sleeping");
        tokio::select! {
            () = tokio::time::sleep(ctx.params().duration.0) => {}
            () = ctx.cancelled() => return Err(AgentError::interrupted()),
        }
        match &ctx.params().fail {
            Some(ty) => Err(AgentError::failed(ty.clone(), "asked to fail").with_details("stack")),
            None => Ok(()),
        }
    }
}

pub fn sleeper_spec() -> AgentSpec {
    let mut duration = ParamSpec::new("duration", ParamType::Duration);
    duration.default = Some(serde_json::json!("50ms"));
    AgentSpec::new("sleep")
        .title("Sleep")
        .param(duration)
        .param(ParamSpec::new("fail", ParamType::String))
}
