//! What a launch setting does when things go wrong: message redelivery, dead-lettering and
//! recovery of lost or overdue runs. Part of the catalog (re-exported by it).

use crate::{HumanDuration, words::words};
use serde::{Deserialize, Serialize};

/// Redelivery of a failed message: `initial_delay × multiplier^(attempt-1)`, capped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    #[serde(default = "default_initial_delay")]
    pub initial_delay: HumanDuration,
    #[serde(default = "default_multiplier")]
    pub multiplier: f64,
    #[serde(default = "default_max_delay")]
    pub max_delay: HumanDuration,
    /// Attempts before a message is dead-lettered (ignored by `retry-forever`).
    #[serde(default = "default_max_deliveries")]
    pub max_deliveries: u32,
}

fn default_initial_delay() -> HumanDuration {
    HumanDuration::from_secs(1)
}
fn default_multiplier() -> f64 {
    2.0
}
fn default_max_delay() -> HumanDuration {
    HumanDuration::from_secs(300)
}
fn default_max_deliveries() -> u32 {
    10
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            initial_delay: default_initial_delay(),
            multiplier: default_multiplier(),
            max_delay: default_max_delay(),
            max_deliveries: default_max_deliveries(),
        }
    }
}

words! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum DeadLetterPolicy {
        /// To the system dead-letter queue.
        #[default]
        DeadLetter = "dead-letter",
        /// To the sump queue, replayed once automatically after the cool-down, then dead.
        Park = "park",
        /// No delivery limit; the breaker is what stops the waste.
        RetryForever = "retry-forever",
        /// As `dead-letter`, and the manager also publishes a copy to the exchange `forward_to`
        /// names (e.g. the application's own error queue).
        Forward = "forward",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DeadLetterSettings {
    #[serde(default)]
    pub policy: DeadLetterPolicy,
    /// Cool-down before a parked message is replayed (policy `park`).
    #[serde(default = "default_park_cooldown")]
    pub park_cooldown: HumanDuration,
    /// Notify when this many dead letters of the launch setting are waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify_threshold: Option<u32>,
    /// Policy `forward`: the exchange that gets a copy of every dead letter (created and
    /// bound by its owner, not by the manager).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward_to: Option<String>,
}

impl DeadLetterSettings {
    /// What a node acts on: forwarding is the manager's work, so to a node `forward` is
    /// `dead-letter` (and a node of an older release knows no `forward`).
    pub fn for_nodes(&self) -> DeadLetterSettings {
        let mut s = self.clone();
        if s.policy == DeadLetterPolicy::Forward {
            s.policy = DeadLetterPolicy::DeadLetter;
        }
        s.forward_to = None;
        s
    }
}

/// 24 hours: a replica lagging behind for a day is an incident, not a slow document.
pub fn default_unavailable_for() -> HumanDuration {
    HumanDuration::from_secs(24 * 3600)
}

fn default_park_cooldown() -> HumanDuration {
    HumanDuration::from_secs(600)
}

impl Default for DeadLetterSettings {
    fn default() -> Self {
        Self {
            policy: DeadLetterPolicy::default(),
            park_cooldown: default_park_cooldown(),
            notify_threshold: None,
            forward_to: None,
        }
    }
}

crate::words::words! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum LostPolicy {
        /// Dispatch the activation again.
        #[default]
        Restart = "restart",
        /// End the activation as failed.
        Fail = "fail",
    }
}

/// Watchdog deadlines of an activation (docs/concepts.md, Watchdog and recovery).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RecoveryPolicy {
    /// A node must accept a launch within this time, or another node gets it.
    #[serde(default = "default_start_timeout")]
    pub start_timeout: HumanDuration,
    /// A running activation must heartbeat within this time, or it is lost.
    #[serde(default = "default_work_timeout")]
    pub work_timeout: HumanDuration,
    /// Interrupts a run that lasts longer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_run_time: Option<HumanDuration>,
    #[serde(default)]
    pub on_lost: LostPolicy,
}

fn default_start_timeout() -> HumanDuration {
    HumanDuration::from_secs(30)
}
fn default_work_timeout() -> HumanDuration {
    HumanDuration::from_secs(120)
}

impl Default for RecoveryPolicy {
    fn default() -> Self {
        Self {
            start_timeout: default_start_timeout(),
            work_timeout: default_work_timeout(),
            max_run_time: None,
            on_lost: LostPolicy::default(),
        }
    }
}
