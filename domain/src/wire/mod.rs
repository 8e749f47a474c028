//! The RabbitMQ protocol between the manager and the nodes: versioned JSON messages, the header
//! names both sides read, and the broker names of the topology ([`names`]). docs/protocol.md is
//! its normative text and `protocol/` holds its JSON Schemas and golden files, generated from
//! these types and checked against them by this crate's tests.
//!
//! Every message travels in an [`Envelope`] `{"v": 1, "type": "...", ...}`. A receiver decodes
//! with [`decode`], which tells a message of a version too old, an unknown type and plain
//! garbage apart so the receiver can refuse it with a precise reason instead of crashing. A
//! message of a newer version is read as far as this side knows it: fields it does not know
//! are ignored at every depth ([`lenient`] for the catalog objects a message carries).
//!
//! ```
//! use am_domain::wire::{self, ToNode, Stop};
//! let bytes = wire::encode_command(&ToNode::Stop(Stop {
//!     launch_setting: "billing.export.1".into(),
//!     reason: "disabled by operator".into(),
//! }));
//! let back: ToNode = wire::decode(&bytes).unwrap();
//! assert!(matches!(back, ToNode::Stop(s) if s.launch_setting == "billing.export.1"));
//! ```

mod head;
mod headers;
mod lenient;
pub mod names;
pub mod replay;
#[cfg(feature = "schema")]
pub mod schema;
#[cfg(test)]
mod tests;

pub use head::LaunchHead;
pub use headers::*;

use crate::{
    HumanDuration,
    catalog::{
        ClassifierValue, Concurrency, DataQueueKind, DeadLetterSettings, InputKind, LaunchKind,
        MessageFilter, OverlapPolicy, RetryPolicy,
    },
    params::ParamSpec,
    policy::RetryStep,
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use std::{fmt, time::Duration};

/// The protocol version this crate speaks, announced in a node's [`Publication::protocol`].
/// Version 2 added the id of a failure report and the version in a publication; version 3
/// made readers tolerant (a newer version is read as far as it is known, unknown fields are
/// ignored at every depth, a launch that cannot be understood is answered `skipped`) and added
/// a launch's [`Launch::retry_steps`].
pub const PROTOCOL_VERSION: u32 = 3;
/// The oldest version this crate still reads: a node of version 1 keeps working with a newer
/// manager (its failure reports carry no id, so a redelivered one may be stored again).
pub const MIN_PROTOCOL_VERSION: u32 = 1;
/// The version commands to nodes are written in: nothing a node must know to act on a command
/// came after version 1, and nodes of versions 1 and 2 refuse any newer `v`.
pub const COMMAND_VERSION: u32 = 1;
/// The version reports are written in: version 2 is the newest whose readers need to know of
/// it (a failure report's id), and managers of version 2 refuse any newer `v`.
pub const REPORT_VERSION: u32 = 2;

/// Identifies one activation (a UUID chosen by the manager), kept as text so this crate stays
/// free of random-number dependencies in the browser build.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct ActivationId(pub String);

impl fmt::Display for ActivationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ActivationId {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

impl From<String> for ActivationId {
    fn from(s: String) -> Self {
        Self(s)
    }
}

/// A message with its protocol version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope<M> {
    pub v: u32,
    #[serde(flatten)]
    pub message: M,
}

/// Why bytes could not be read as a protocol message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("not a JSON object with a numeric `v`: {0}")]
    Malformed(String),
    #[error(
        "protocol version {found} is no longer supported (this side reads version \
         {MIN_PROTOCOL_VERSION} and newer)"
    )]
    UnsupportedVersion { found: u64 },
    #[error("invalid message: {0}")]
    Invalid(String),
}

/// Encodes a report to the manager, in the version every supported manager reads
/// ([`REPORT_VERSION`]).
pub fn encode_report(report: &ToManager) -> Vec<u8> {
    encode_as(report, REPORT_VERSION)
}

/// Encodes a command to a node, in the version every supported node reads
/// ([`COMMAND_VERSION`]).
pub fn encode_command(command: &ToNode) -> Vec<u8> {
    encode_as(command, COMMAND_VERSION)
}

/// Encodes a message as this crate's own version ([`PROTOCOL_VERSION`]): for peers known to
/// read it, and for tests of a newer sender.
pub fn encode<M: Serialize>(message: &M) -> Vec<u8> {
    encode_as(message, PROTOCOL_VERSION)
}

fn encode_as<M: Serialize>(message: &M, version: u32) -> Vec<u8> {
    #[derive(Serialize)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    struct Out<'a, M> {
        v: u32,
        #[serde(flatten)]
        message: &'a M,
    }
    // Our message types contain only maps with string keys, so serialization cannot fail;
    // an empty body would be quarantined by the receiver rather than crash anyone.
    serde_json::to_vec(&Out {
        v: version,
        message,
    })
    .unwrap_or_default()
}

/// Decodes a message, checking the version before the shape so that a sender too old gets a
/// precise reason. A newer version is read as far as this side knows it.
pub fn decode<M: DeserializeOwned>(bytes: &[u8]) -> Result<M, WireError> {
    let mut value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| WireError::Malformed(e.to_string()))?;
    let obj = value
        .as_object_mut()
        .ok_or_else(|| WireError::Malformed("not an object".into()))?;
    let v = obj
        .remove("v")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| WireError::Malformed("missing `v`".into()))?;
    if v < u64::from(MIN_PROTOCOL_VERSION) {
        return Err(WireError::UnsupportedVersion { found: v });
    }
    serde_json::from_value(value).map_err(|e| WireError::Invalid(e.to_string()))
}

// ---------------------------------------------------------------- manager → node

/// Commands the manager sends to one node's control queue.
// `allow`, not `expect`: whether the size difference crosses clippy's threshold depends on the
// target's pointer width, and the crate is linted for both the host and wasm32.
#[allow(
    clippy::large_enum_variant,
    reason = "a few commands per activation; boxing would only make matching clumsier"
)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToNode {
    Launch(Launch),
    /// Stop every activation of a launch setting on this node (disabled, breaker elsewhere).
    Stop(Stop),
    /// Interrupt one activation.
    Interrupt(Interrupt),
}

/// Run a launch setting's agent once (one activation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Launch {
    pub activation_id: ActivationId,
    pub launch_setting: String,
    pub agent: String,
    pub kind: LaunchKind,
    /// Effective parameter values (defaults applied by the manager; the node applies the
    /// published schema's defaults again for values still missing).
    #[serde(default)]
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// Grows with every dispatch of the activation; reports carry it back so the manager can
    /// ignore a late answer of a node it gave up on.
    pub fencing_token: u64,
    #[serde(default = "default_overlap")]
    pub overlap: OverlapPolicy,
    #[serde(default, deserialize_with = "lenient::object")]
    pub retry: RetryPolicy,
    /// The retry policy's ladder as the manager computed it (since version 3): which wait
    /// queue each retry goes to, so no node computes a delay the broker has no queue for.
    /// Absent from older managers: the node computes [`crate::policy::retry_delay`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry_steps: Vec<RetryStep>,
    /// How long a message may keep answering "temporarily unavailable" before it is
    /// dead-lettered (such answers use no attempt).
    #[serde(default = "crate::catalog::default_unavailable_for")]
    pub unavailable_for: HumanDuration,
    #[serde(default, deserialize_with = "lenient::object")]
    pub dead_letter: DeadLetterSettings,
    /// Breaker threshold `M`.
    #[serde(default = "default_threshold")]
    pub failure_threshold: u32,
    /// Messages agents only: where their messages come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription: Option<Subscription>,
    /// Scheduled messages agents: finish when no message came for this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<HumanDuration>,
    /// The node interrupts the run after this long (the manager's watchdog does too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_run_time: Option<HumanDuration>,
}

impl Launch {
    /// The wait before retry number `attempt` (1 = the first retry; also the `n`-th answer
    /// "temporarily unavailable"): the manager's [`Launch::retry_steps`] when it sent them,
    /// else computed from the policy as older managers expect.
    pub fn retry_delay(&self, attempt: u32) -> Duration {
        crate::policy::step_delay(&self.retry_steps, attempt)
            .unwrap_or_else(|| crate::policy::retry_delay(&self.retry, attempt))
    }
}

fn default_overlap() -> OverlapPolicy {
    OverlapPolicy::Allow
}

fn default_threshold() -> u32 {
    crate::catalog::DEFAULT_FAILURE_THRESHOLD
}

/// The data source of a messages launch setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Subscription {
    pub data_queue: String,
    /// The data queue's exchange (its address).
    pub address: String,
    pub kind: DataQueueKind,
    #[serde(default, deserialize_with = "lenient::object")]
    pub filter: MessageFilter,
    /// Delayed launch settings: messages reach the subscription after this delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<HumanDuration>,
}

impl Subscription {
    /// The subscription of launch setting `ls` of `agent`, if the agent takes messages from
    /// `data_queue`: the one rule the manager launches by and declares the broker by.
    pub fn of(
        ls: &crate::catalog::LaunchSetting,
        agent: &crate::catalog::Agent,
        data_queue: &crate::catalog::DataQueue,
    ) -> Option<Self> {
        use crate::catalog::{InputKind, LaunchKind, StreamMode};
        if agent.input != InputKind::Messages
            || agent.data_queue.as_deref() != Some(data_queue.id.as_str())
        {
            return None;
        }
        let delayed = ls.kind == LaunchKind::Stream && ls.stream_mode == Some(StreamMode::Delayed);
        Some(Self {
            data_queue: data_queue.id.clone(),
            address: data_queue.effective_address().to_owned(),
            kind: data_queue.kind,
            filter: ls.filter.clone().unwrap_or_default(),
            delay: data_queue
                .delay
                .filter(|d| delayed && !d.is_zero() && data_queue.kind == DataQueueKind::Topic),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Stop {
    pub launch_setting: String,
    #[serde(default)]
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Interrupt {
    pub activation_id: ActivationId,
    #[serde(default)]
    pub reason: String,
    /// Only a run of the activation launched with this fencing token or an older one: an
    /// interrupt for a stale copy must not reach a later launch of the same activation on the
    /// same node (the command and the launch may cross). Absent: whatever run it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_to_token: Option<u64>,
}

// ---------------------------------------------------------------- node → manager

/// Reports a node sends to the manager's reports queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToManager {
    Publication(Publication),
    Heartbeat(Heartbeat),
    Activation(ActivationReport),
    Failure(FailureReport),
    BreakerTripped(BreakerTripped),
    /// Since version 2: a replayed dead letter was processed.
    ReplayProcessed(replay::ReplayProcessed),
}

impl ToManager {
    /// The activation the report concerns, if any.
    pub fn activation_id(&self) -> Option<&ActivationId> {
        match self {
            ToManager::Publication(_) | ToManager::Heartbeat(_) => None,
            ToManager::Activation(r) => Some(&r.activation_id),
            ToManager::Failure(r) => Some(&r.activation_id),
            ToManager::BreakerTripped(r) => Some(&r.activation_id),
            ToManager::ReplayProcessed(r) => Some(&r.activation_id),
        }
    }
}

/// What a node offers, sent at start-up and after every reconnect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Publication {
    pub application: String,
    pub host: String,
    /// Version of the application (free text).
    pub version: String,
    /// How many activations the node runs at once.
    pub capacity: u32,
    pub agents: Vec<PublishedAgent>,
    pub classifiers: Vec<PublishedClassifier>,
    /// The newest protocol version the node speaks; nodes of version 1 do not say, so 1.
    #[serde(default = "version_one")]
    pub protocol: u32,
}

fn version_one() -> u32 {
    1
}

/// An agent as its code describes it. The suggestions only seed a new catalog entry;
/// operators own those fields afterwards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PublishedAgent {
    pub id: String,
    pub title: String,
    pub input: InputKind,
    #[serde(deserialize_with = "lenient::objects")]
    pub parameters: Vec<ParamSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_data_queue: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_concurrency: Option<Concurrency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_overlap: Option<OverlapPolicy>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PublishedClassifier {
    pub name: String,
    pub title: String,
    #[serde(deserialize_with = "lenient::objects")]
    pub values: Vec<ClassifierValue>,
}

/// Message counters: a launch setting's on a node since it started, or one activation's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Counters {
    pub processed: u64,
    pub failed: u64,
    pub retried: u64,
    pub dead_lettered: u64,
}

/// One launch setting running on the node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunningLaunchSetting {
    pub launch_setting: String,
    pub activations: Vec<ActivationId>,
    /// Since the node started, over every activation of the launch setting on it.
    pub counters: Counters,
    /// Each running activation's own counters since its start (nodes before this field send
    /// none; the manager then falls back to `counters`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_activation: Vec<ActivationCounters>,
}

/// The counters of one activation since its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ActivationCounters {
    pub activation_id: ActivationId,
    pub counters: Counters,
}

/// Periodic liveness of a node and of its running activations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Heartbeat {
    pub application: String,
    pub host: String,
    pub capacity: u32,
    pub running: Vec<RunningLaunchSetting>,
    /// One-minute load average of the host, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// Reports dropped because the outbox was full while the broker was away.
    #[serde(default)]
    pub dropped_reports: u64,
    /// Control messages rejected to the quarantine queue.
    #[serde(default)]
    pub quarantined: u64,
    pub at: DateTime<Utc>,
}

/// Lifecycle of one activation on one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ActivationReport {
    pub application: String,
    pub host: String,
    pub activation_id: ActivationId,
    pub launch_setting: String,
    pub fencing_token: u64,
    pub event: ActivationEvent,
    pub at: DateTime<Utc>,
}

/// What happened to an activation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum ActivationEvent {
    /// The node took the launch.
    Accepted,
    /// The node refused the launch (overlap policy `skip`, an agent it does not offer, a launch
    /// of a later release it cannot read). A node whose slots are all busy does not refuse: it
    /// accepts and starts when a slot frees.
    Skipped {
        reason: String,
    },
    Started,
    Progress {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        done: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<u64>,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        message: String,
    },
    Finished {
        result: ActivationResult,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// What the activation did on this node, final (nodes before this field send none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        counters: Option<Counters>,
    },
}

/// Result of a finished activation (`running` is never a result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ActivationResult {
    Succeeded,
    Failed,
    Interrupted,
}

/// One error a node caught.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FailureReport {
    pub application: String,
    pub host: String,
    pub activation_id: ActivationId,
    pub launch_setting: String,
    pub agent: String,
    pub error_type: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub details: String,
    /// The AMQP message id of the data message, if the failure concerns one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_message_id: Option<String>,
    /// Delivery attempt of the data message (1 for standalone runs).
    pub attempt: u32,
    /// The agent said the condition is temporary; the breaker ignores it.
    #[serde(default)]
    pub temporary: bool,
    /// What became of the data message: `retry`, `park` or `dead-letter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disposition: Option<String>,
    pub at: DateTime<Utc>,
    /// Unique per report, kept when the node publishes it again (version 2; absent from
    /// version-1 nodes): the manager stores a report once however often it arrives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_id: Option<String>,
    /// The data message is a replayed dead letter: which replay (its [`replay::REPLAY_HEADER`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<replay::ReplayToken>,
}

/// What a node did with a data message whose processing failed ([`FailureReport::disposition`]).
pub mod disposition {
    /// Sent to wait and be delivered again.
    pub const RETRY: &str = "retry";
    /// Set aside for the park cooldown before a last round of deliveries.
    pub const PARK: &str = "park";
    /// Given up on: sent to the dead-letter queue.
    pub const DEAD_LETTER: &str = "dead-letter";
}

/// An error type and message, as the breaker remembers them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorSummary {
    pub error_type: String,
    pub message: String,
}

/// The node stopped an activation because it failed too often in a row (docs/concepts.md,
/// Breaker).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BreakerTripped {
    pub application: String,
    pub host: String,
    pub activation_id: ActivationId,
    pub launch_setting: String,
    pub consecutive_failures: u32,
    /// Length of the run of the same error type that ended the streak.
    pub same_type_failures: u32,
    pub last_errors: Vec<ErrorSummary>,
    pub at: DateTime<Utc>,
}
