//! The failure-log drill-down as the API and the pages read it: launch settings with failures,
//! their activations, the hosts of one activation and the failures themselves, each level with
//! its counts by error type and of the other kinds of report ([`KindCounts`]).

use crate::failing::{KindCounts, LastFailure};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Filters of the drill-down as URLs and the API give them; blank means no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::IntoParams),
    into_params(parameter_in = Query)
)]
pub struct FailureFilter {
    /// Only failures of this launch setting (id).
    pub launch_setting: Option<String>,
    /// Only failures of launch settings of this application.
    pub application: Option<String>,
    /// Only failures of this activation (UUID).
    #[cfg_attr(
        feature = "openapi",
        param(
            pattern = "^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})?$"
        )
    )]
    pub activation: Option<String>,
    /// Only failures reported by this host.
    pub host: Option<String>,
    /// Only failures of this error type.
    pub error_type: Option<String>,
    /// Failures at or after this time (RFC 3339, `YYYY-MM-DDTHH:MM` or `YYYY-MM-DD`, UTC).
    pub from: Option<String>,
    /// Failures before this time.
    pub to: Option<String>,
    /// `failed` (blank: the failures an operator has to look at), `retried` (attempts whose
    /// message was sent to be tried again), `unavailable` ("temporarily unavailable" answers)
    /// or `any`. Every level also counts the other kinds ([`KindCounts`]).
    #[cfg_attr(
        feature = "openapi",
        param(pattern = "^(failed|retried|unavailable|any)?$")
    )]
    pub kind: Option<String>,
}

/// How many failures of one error type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorTypeCount {
    pub error_type: String,
    pub count: u64,
}

/// A launch setting with failures (first level).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LaunchSettingFailures {
    pub launch_setting: String,
    /// From the catalog; `None` for a launch setting deleted since.
    pub application: Option<String>,
    pub agent: Option<String>,
    pub total: u64,
    /// Most frequent first.
    pub by_error_type: Vec<ErrorTypeCount>,
    pub first_at: Option<DateTime<Utc>>,
    pub last_at: Option<DateTime<Utc>>,
    /// The newest failure matching the filters: what the operator reads first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastFailure>,
}

/// One page of launch settings with failures, by id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LaunchSettingFailuresPage {
    pub items: Vec<LaunchSettingFailures>,
    /// Sum of the counts of this page's launch settings by error type.
    pub by_error_type: Vec<ErrorTypeCount>,
    /// Reports of each kind of this page's launch settings the other filters match (the kind filter aside): what the list
    /// of one kind leaves out.
    pub kinds: KindCounts,
    /// Cursor (`after`) of the next page, when there is one.
    pub next: Option<String>,
}

/// How many failures one host reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HostCount {
    pub host: String,
    pub count: u64,
}

/// An activation of a launch setting with its failures (second level).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivationFailures {
    pub activation: Uuid,
    /// `None` when the activation row is gone (failure logs outlive it).
    pub status: Option<String>,
    pub trigger: Option<String>,
    pub created_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub total: u64,
    pub first_at: Option<DateTime<Utc>>,
    pub last_at: Option<DateTime<Utc>>,
    pub hosts: Vec<HostCount>,
    pub by_error_type: Vec<ErrorTypeCount>,
}

/// One page of the activations of a launch setting that have failures, newest failure first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivationFailuresPage {
    pub launch_setting: String,
    /// Failures of the launch setting matching the filters.
    pub total: u64,
    pub by_error_type: Vec<ErrorTypeCount>,
    /// Reports of each kind the other filters match (the kind filter aside): what the list
    /// of one kind leaves out.
    pub kinds: KindCounts,
    /// Activations with matching failures.
    pub activations: u64,
    pub items: Vec<ActivationFailures>,
    /// One-based.
    pub page: u64,
    pub limit: u64,
    pub has_more: bool,
}

/// A host of an activation with its failures (third level).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HostFailures {
    pub host: String,
    pub total: u64,
    pub by_error_type: Vec<ErrorTypeCount>,
    pub first_at: Option<DateTime<Utc>>,
    pub last_at: Option<DateTime<Utc>>,
    /// Status of the host's latest dispatch of the activation, if the activation still exists.
    pub status: Option<String>,
}

/// The hosts of one activation that reported failures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivationHostFailures {
    pub activation: Uuid,
    pub launch_setting: Option<String>,
    pub activation_status: Option<String>,
    pub total: u64,
    pub by_error_type: Vec<ErrorTypeCount>,
    /// Reports of each kind the other filters match (the kind filter aside): what the list
    /// of one kind leaves out.
    pub kinds: KindCounts,
    pub items: Vec<HostFailures>,
}

/// One failure a node reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FailureEntry {
    pub id: i64,
    pub launch_setting: String,
    pub activation: Uuid,
    pub host: String,
    pub application: String,
    pub agent: String,
    pub error_type: String,
    pub message: String,
    /// Stack trace or other detail the agent gave.
    pub details: Option<String>,
    /// The data message being processed, for message agents.
    pub data_message_id: Option<String>,
    pub attempt: Option<i32>,
    pub occurred_at: DateTime<Utc>,
    /// The dead letter of that data message, once it was dead-lettered.
    pub dead_letter: Option<i64>,
    /// The agent said the condition is temporary (the breaker does not count it).
    pub temporary: bool,
    /// What the node did with the data message: `retry`, `park` or `dead-letter`.
    pub disposition: Option<String>,
}

/// Failures matching a filter, newest first, and their counts by error type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FailureList {
    /// Failures matching the filter (all pages).
    pub total: u64,
    pub by_error_type: Vec<ErrorTypeCount>,
    /// Reports of each kind the other filters match (the kind filter aside): what the list
    /// of one kind leaves out.
    pub kinds: KindCounts,
    pub entries: Vec<FailureEntry>,
    /// Cursor (`after`) of the next page, when there is one.
    pub next: Option<i64>,
}
