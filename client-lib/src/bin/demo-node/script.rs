//! The node conformance suite's scripted agents (docs/conformance.md): they do what the suite
//! scripts, a standalone run by its parameters and a data message by its body, and append what
//! they saw to the file `AM_RECORD` names, one JSON object per line.

use agent_client::{
    AgentError, AgentSpec, Context, Message, MessageAgent, NodeBuilder, StandaloneAgent,
    domain::{
        HumanDuration,
        params::{ParamSpec, ParamType},
    },
};
use anyhow::Context as _;
use serde_json::{Value, json};
use std::{path::Path, sync::Arc};
use tokio::{fs::File, io::AsyncWriteExt, sync::Mutex};

/// Registers `script` and `script-messages`, recording to `path` (appended to, created if
/// missing).
pub(crate) async fn register(builder: NodeBuilder, path: &Path) -> anyhow::Result<NodeBuilder> {
    let file = tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .await
        .with_context(|| format!("AM_RECORD: cannot open `{}`", path.display()))?;
    let record = Arc::new(Record(Mutex::new(file)));
    Ok(builder
        .standalone(
            AgentSpec::new("script")
                .title("Script")
                .param(ParamSpec::new("sleep", ParamType::Duration).default("0s"))
                .param(ParamSpec::new("fail", ParamType::String))
                .param(ParamSpec::new("progress", ParamType::Boolean)),
            Script(Arc::clone(&record)),
        )
        .messages(
            AgentSpec::new("script-messages").title("Script messages"),
            ScriptMessages(record),
        ))
}

/// The record file; one writer at a time, each line written whole and flushed.
struct Record(Mutex<File>);

impl Record {
    async fn write(&self, line: Value) {
        let mut text = line.to_string();
        text.push('\n');
        let mut file = self.0.lock().await;
        let written = async {
            file.write_all(text.as_bytes()).await?;
            file.flush().await
        };
        if let Err(e) = written.await {
            tracing::error!(error = %e, "cannot append to the record file");
        }
    }
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct ScriptParams {
    #[serde(default)]
    sleep: HumanDuration,
    #[serde(default)]
    fail: Option<String>,
    #[serde(default)]
    progress: bool,
}

/// Sleeps (cancellably), reports progress, fails, as its parameters say.
struct Script(Arc<Record>);

impl StandaloneAgent for Script {
    type Params = ScriptParams;

    async fn run(&self, ctx: Context<ScriptParams>) -> Result<(), AgentError> {
        self.0
            .write(json!({
                "agent": "script",
                "event": "start",
                "activation": ctx.activation_id().to_string(),
                "launch_setting": ctx.launch_setting(),
                "params": ctx.params(),
            }))
            .await;
        let outcome = async {
            tokio::select! {
                () = tokio::time::sleep(ctx.params().sleep.0) => {}
                () = ctx.cancelled() => return Err(AgentError::interrupted()),
            }
            if ctx.params().progress {
                ctx.progress(Some(1), Some(1), "slept");
            }
            match &ctx.params().fail {
                Some(error_type) => Err(AgentError::failed(error_type, "scripted failure")),
                None => Ok(()),
            }
        }
        .await;
        let ended = match &outcome {
            Ok(()) => "succeeded",
            Err(e) if e.is_interrupted() => "interrupted",
            Err(_) => "failed",
        };
        self.0
            .write(json!({
                "agent": "script",
                "event": "end",
                "activation": ctx.activation_id().to_string(),
                "outcome": ended,
            }))
            .await;
        outcome
    }
}

fn default_error_type() -> String {
    "Scripted".to_owned()
}

/// What a data message asks of `script-messages`.
#[derive(Debug, serde::Deserialize)]
struct MessageScript {
    id: String,
    #[serde(default)]
    fail: u32,
    #[serde(default = "default_error_type")]
    error_type: String,
    #[serde(default)]
    unavailable: u32,
    #[serde(default)]
    hold: HumanDuration,
}

/// Records each delivery, then answers as the message's body scripts it.
struct ScriptMessages(Arc<Record>);

impl MessageAgent for ScriptMessages {
    type Params = Value;

    async fn handle(&self, ctx: &Context<Value>, msg: &Message) -> Result<(), AgentError> {
        let script = serde_json::from_slice::<MessageScript>(msg.body());
        self.0
            .write(json!({
                "agent": "script-messages",
                "activation": ctx.activation_id().to_string(),
                "launch_setting": ctx.launch_setting(),
                "id": script.as_ref().ok().map(|s| s.id.as_str()),
                "attempt": msg.attempt(),
                "unavailable": msg.unavailable(),
                "redelivered": msg.redelivered(),
            }))
            .await;
        let script = script.map_err(|e| AgentError::failed("Unreadable", e.to_string()))?;
        if msg.unavailable() < script.unavailable {
            return Err(AgentError::temporarily_unavailable(
                "scripted unavailability",
            ));
        }
        if msg.attempt() <= script.fail {
            return Err(AgentError::failed(script.error_type, "scripted failure"));
        }
        // Deaf to cancellation on purpose: a stuck handler.
        tokio::time::sleep(script.hold.0).await;
        Ok(())
    }
}
