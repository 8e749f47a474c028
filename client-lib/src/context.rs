//! What an agent sees of its activation ([`Context`]) and of a data message ([`Message`]).

use crate::{AgentError, outbox::Outbox};
use am_domain::wire::{ActivationEvent, ActivationId, ActivationReport, ToManager};
use lapin::types::{AMQPValue, FieldTable};
use std::{collections::BTreeMap, sync::Arc};
use tokio_util::sync::CancellationToken;

/// The facts of one activation, shared by the runtime and the agent's context.
#[derive(Debug)]
pub(crate) struct RunInfo {
    pub(crate) application: String,
    pub(crate) host: String,
    pub(crate) activation_id: ActivationId,
    pub(crate) launch_setting: String,
    pub(crate) agent: String,
    pub(crate) fencing_token: u64,
    pub(crate) cancel: CancellationToken,
    pub(crate) outbox: Arc<Outbox>,
    /// What this activation did so far (heartbeats and its `finished` report carry it).
    pub(crate) tally: Arc<crate::tally::Tally>,
}

impl RunInfo {
    pub(crate) fn report(&self, event: ActivationEvent) {
        self.outbox.push(&ToManager::Activation(ActivationReport {
            application: self.application.clone(),
            host: self.host.clone(),
            activation_id: self.activation_id.clone(),
            launch_setting: self.launch_setting.clone(),
            fencing_token: self.fencing_token,
            event,
            at: chrono::Utc::now(),
        }));
    }
}

/// An agent's view of its activation: typed parameters, ids, cancellation and progress.
///
/// ```
/// use agent_client::{AgentError, Context, StandaloneAgent};
/// use std::time::Duration;
///
/// struct Sleep;
/// impl StandaloneAgent for Sleep {
///     type Params = u64;
///     async fn run(&self, ctx: Context<u64>) -> Result<(), AgentError> {
///         tracing::info!(activation_id = %ctx.activation_id(), host = ctx.host(), "sleeping");
///         tokio::select! {
///             () = tokio::time::sleep(Duration::from_millis(*ctx.params())) => Ok(()),
///             () = ctx.cancelled() => Err(AgentError::interrupted()),
///         }
///     }
/// }
/// ```
#[derive(Debug)]
pub struct Context<P> {
    info: Arc<RunInfo>,
    params: Arc<P>,
}

impl<P> Clone for Context<P> {
    fn clone(&self) -> Self {
        Self {
            info: Arc::clone(&self.info),
            params: Arc::clone(&self.params),
        }
    }
}

impl<P: serde::de::DeserializeOwned> Context<P> {
    pub(crate) fn new(info: Arc<RunInfo>, params: serde_json::Value) -> Result<Self, AgentError> {
        let params = serde_json::from_value(params).map_err(|e| {
            AgentError::failed("InvalidParameters", format!("parameters do not fit: {e}"))
        })?;
        Ok(Self {
            info,
            params: Arc::new(params),
        })
    }
}

impl<P> Context<P> {
    /// The launch setting's parameters, deserialized into the agent's own type.
    ///
    /// ```no_run
    /// # fn f(ctx: agent_client::Context<serde_json::Value>) {
    /// let limit = ctx.params()["limit"].as_u64();
    /// # }
    /// ```
    pub fn params(&self) -> &P {
        &self.params
    }

    /// The activation's id (a UUID chosen by the manager).
    ///
    /// ```no_run
    /// # fn f(ctx: agent_client::Context<()>) {
    /// tracing::info!(activation_id = %ctx.activation_id(), "working");
    /// # }
    /// ```
    pub fn activation_id(&self) -> &ActivationId {
        &self.info.activation_id
    }

    /// The launch setting this activation runs.
    ///
    /// ```no_run
    /// # fn f(ctx: agent_client::Context<()>) {
    /// println!("{}", ctx.launch_setting());
    /// # }
    /// ```
    pub fn launch_setting(&self) -> &str {
        &self.info.launch_setting
    }

    /// This node's host name.
    ///
    /// ```no_run
    /// # fn f(ctx: agent_client::Context<()>) {
    /// println!("{}", ctx.host());
    /// # }
    /// ```
    pub fn host(&self) -> &str {
        &self.info.host
    }

    /// Whether the activation was asked to stop (stop, interrupt, breaker, shutdown).
    ///
    /// ```no_run
    /// # fn f(ctx: agent_client::Context<()>) -> Result<(), agent_client::AgentError> {
    /// for chunk in 0..100 {
    ///     if ctx.is_cancelled() { return Err(agent_client::AgentError::interrupted()); }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.info.cancel.is_cancelled()
    }

    /// Resolves when the activation is asked to stop; use it in `tokio::select!`.
    ///
    /// ```no_run
    /// # async fn f(ctx: agent_client::Context<()>) {
    /// ctx.cancelled().await;
    /// # }
    /// ```
    pub async fn cancelled(&self) {
        self.info.cancel.cancelled().await;
    }

    /// A clone of the cancellation token, for tasks the agent spawns.
    ///
    /// ```no_run
    /// # fn f(ctx: agent_client::Context<()>) {
    /// let token = ctx.cancellation_token();
    /// tokio::spawn(async move { token.cancelled().await });
    /// # }
    /// ```
    pub fn cancellation_token(&self) -> CancellationToken {
        self.info.cancel.clone()
    }

    /// Reports progress to the manager (shown on the activation's timeline).
    ///
    /// ```no_run
    /// # fn f(ctx: agent_client::Context<()>) {
    /// ctx.progress(Some(40), Some(100), "40 invoices exported");
    /// # }
    /// ```
    pub fn progress(&self, done: Option<u64>, total: Option<u64>, message: impl Into<String>) {
        self.info.report(ActivationEvent::Progress {
            done,
            total,
            message: message.into(),
        });
    }
}

/// One data message, as the agent sees it.
///
/// ```no_run
/// # fn f(msg: &agent_client::Message) -> Result<(), agent_client::AgentError> {
/// #[derive(serde::Deserialize)]
/// struct Invoice { id: u64 }
/// let invoice: Invoice = msg.json()?;
/// if msg.attempt() > 1 { tracing::warn!(attempt = msg.attempt(), "retrying invoice {}", invoice.id); }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Message {
    body: Vec<u8>,
    headers: BTreeMap<String, String>,
    message_id: Option<String>,
    attempt: u32,
    unavailable: u32,
    redelivered: bool,
}

/// Where a delivery stands: its attempt (failures so far + 1), the answers "temporarily
/// unavailable" it got, and whether it was delivered before.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeliveryCount {
    pub attempt: u32,
    pub unavailable: u32,
    pub redelivered: bool,
}

impl Message {
    pub(crate) fn from_delivery(
        body: Vec<u8>,
        headers: Option<&FieldTable>,
        message_id: Option<String>,
        count: DeliveryCount,
    ) -> Self {
        let DeliveryCount {
            attempt,
            unavailable,
            redelivered,
        } = count;
        let headers = headers
            .map(|t| {
                t.inner()
                    .iter()
                    .filter_map(|(k, v)| header_text(v).map(|v| (k.to_string(), v)))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            body,
            headers,
            message_id,
            attempt,
            unavailable,
            redelivered: redelivered || attempt > 1 || unavailable > 0,
        }
    }

    /// The raw body.
    ///
    /// ```no_run
    /// # fn f(msg: &agent_client::Message) { let n = msg.body().len(); }
    /// ```
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The body as UTF-8 text.
    ///
    /// ```no_run
    /// # fn f(msg: &agent_client::Message) -> Result<(), agent_client::AgentError> {
    /// let text = msg.body_str()?;
    /// # Ok(()) }
    /// ```
    pub fn body_str(&self) -> Result<&str, AgentError> {
        Ok(std::str::from_utf8(&self.body)?)
    }

    /// The body deserialized from JSON.
    ///
    /// ```no_run
    /// # fn f(msg: &agent_client::Message) -> Result<(), agent_client::AgentError> {
    /// let v: serde_json::Value = msg.json()?;
    /// # Ok(()) }
    /// ```
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, AgentError> {
        Ok(serde_json::from_slice(&self.body)?)
    }

    /// A header as text (strings, numbers and booleans; other types are left out).
    ///
    /// ```no_run
    /// # fn f(msg: &agent_client::Message) { let site = msg.header("site"); }
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// The AMQP `message-id` property, when the producer set one.
    ///
    /// ```no_run
    /// # fn f(msg: &agent_client::Message) { let id = msg.message_id(); }
    /// ```
    pub fn message_id(&self) -> Option<&str> {
        self.message_id.as_deref()
    }

    /// Delivery attempt: 1 until the agent first failed on the message, then one more per
    /// failure (our own counter, kept across retries). Answers "temporarily unavailable" are
    /// not attempts: see [`Message::unavailable`].
    ///
    /// ```no_run
    /// # fn f(msg: &agent_client::Message) { assert!(msg.attempt() >= 1); }
    /// ```
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// How many times the agent answered "temporarily unavailable" for this message before
    /// (see [`crate::AgentError::temporarily_unavailable`]).
    ///
    /// ```no_run
    /// # fn f(msg: &agent_client::Message) {
    /// if msg.unavailable() > 10 { tracing::warn!("the replica is far behind"); }
    /// # }
    /// ```
    pub fn unavailable(&self) -> u32 {
        self.unavailable
    }

    /// Every delivery of the message so far, this one included: its attempt plus its answers
    /// "temporarily unavailable".
    ///
    /// ```no_run
    /// # fn f(msg: &agent_client::Message) { assert!(msg.deliveries() >= msg.attempt()); }
    /// ```
    pub fn deliveries(&self) -> u32 {
        self.attempt.saturating_add(self.unavailable)
    }

    /// Whether the message was delivered before (a retry, or a redelivery after a node died).
    ///
    /// ```no_run
    /// # fn f(msg: &agent_client::Message) { if msg.redelivered() { /* check for duplicates */ } }
    /// ```
    pub fn redelivered(&self) -> bool {
        self.redelivered
    }
}

/// A header value as text, for the types producers commonly send.
pub(crate) fn header_text(v: &AMQPValue) -> Option<String> {
    Some(match v {
        AMQPValue::LongString(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        AMQPValue::ShortString(s) => s.to_string(),
        AMQPValue::Boolean(b) => b.to_string(),
        AMQPValue::ShortShortInt(i) => i.to_string(),
        AMQPValue::ShortShortUInt(i) => i.to_string(),
        AMQPValue::ShortInt(i) => i.to_string(),
        AMQPValue::ShortUInt(i) => i.to_string(),
        AMQPValue::LongInt(i) => i.to_string(),
        AMQPValue::LongUInt(i) => i.to_string(),
        AMQPValue::LongLongInt(i) => i.to_string(),
        AMQPValue::Timestamp(t) => t.to_string(),
        _ => return None,
    })
}

/// A header value as an integer, whatever integer type the sender chose.
pub(crate) fn header_u64(v: &AMQPValue) -> Option<u64> {
    match v {
        AMQPValue::ShortShortUInt(i) => Some(u64::from(*i)),
        AMQPValue::ShortUInt(i) => Some(u64::from(*i)),
        AMQPValue::LongUInt(i) => Some(u64::from(*i)),
        AMQPValue::ShortShortInt(i) => u64::try_from(*i).ok(),
        AMQPValue::ShortInt(i) => u64::try_from(*i).ok(),
        AMQPValue::LongInt(i) => u64::try_from(*i).ok(),
        AMQPValue::LongLongInt(i) => u64::try_from(*i).ok(),
        AMQPValue::LongString(s) => std::str::from_utf8(s.as_bytes()).ok()?.parse().ok(),
        AMQPValue::ShortString(s) => s.as_str().parse().ok(),
        _ => None,
    }
}
