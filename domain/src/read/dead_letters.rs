//! Dead letters as the API and the pages read them: the filter of the list, a summary per
//! dead letter, and one dead letter with its headers, body, policy and failures.

use super::failures::FailureEntry;
use crate::{recovery::ReplayResult, status::DeadLetterStatus, words::words};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Which dead letters a list or a bulk operation takes; blank means no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::IntoParams, utoipa::ToSchema),
    into_params(parameter_in = Query)
)]
#[serde(default)]
pub struct DeadLetterFilter {
    /// Dead letters of this launch setting (id).
    pub launch_setting: Option<String>,
    /// Dead letters from this data queue (id).
    pub data_queue: Option<String>,
    /// Of this error type (the last failure's; `broker:delivery_limit` for messages the
    /// broker dead-lettered itself).
    pub error_type: Option<String>,
    /// `dead` or `replayed`.
    pub status: Option<String>,
    /// Received at or after this time (RFC 3339, `YYYY-MM-DDTHH:MM` or `YYYY-MM-DD`, UTC).
    pub from: Option<String>,
    /// Received before this time.
    pub to: Option<String>,
}

impl DeadLetterFilter {
    /// No filter but the status: "all matching" means every dead letter.
    pub fn is_unfiltered(&self) -> bool {
        super::all_blank(&[
            &self.launch_setting,
            &self.data_queue,
            &self.error_type,
            &self.from,
            &self.to,
        ])
    }
}

/// The dead letters a bulk operation works on: exactly `ids` when given, otherwise every one
/// matching `filter`. Only `dead` ones are replayed or deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default, deny_unknown_fields)]
pub struct Selection {
    /// Non-empty: exactly these dead letters (at most 10,000).
    pub ids: Vec<i64>,
    /// Used when `ids` is empty: every dead letter matching it.
    pub filter: DeadLetterFilter,
}

/// A dead letter as lists show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeadLetterSummary {
    pub id: i64,
    /// The launch setting that gave up on it; `None` when no header says.
    pub launch_setting: Option<String>,
    pub data_queue: Option<String>,
    pub message_id: Option<String>,
    pub error_type: Option<String>,
    /// The last failure's message (the first 300 characters in lists).
    pub error_message: Option<String>,
    /// Deliveries before it was given up on (0: unknown).
    pub attempts: i32,
    pub first_failure_at: Option<DateTime<Utc>>,
    pub last_failure_at: Option<DateTime<Utc>>,
    /// The node's host that gave up.
    pub host: Option<String>,
    /// When the manager took it from the dead-letter queue.
    pub received_at: DateTime<Utc>,
    /// `dead` or `replayed`.
    pub status: String,
    pub replay_count: i32,
    pub replayed_at: Option<DateTime<Utc>>,
    pub replayed_by: Option<String>,
    /// What became of its last replay; `None` before the first.
    pub replay: Option<ReplayView>,
    /// When it went through its launch setting's sump (dead-letter policy `park`) before it
    /// died: it already had its one more round after the cool-down.
    pub parked_at: Option<String>,
    pub body_size: u64,
    /// The start of the body, whitespace collapsed.
    pub body_preview: String,
}

impl DeadLetterSummary {
    /// Still waiting for an operator: it can be replayed or deleted.
    pub fn is_dead(&self) -> bool {
        self.status == DeadLetterStatus::Dead.as_str()
    }
}

/// One page of dead letters, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeadLetterPage {
    /// Dead letters matching the filter (all pages).
    pub total: u64,
    pub items: Vec<DeadLetterSummary>,
    /// Cursor (`after`) of the next page, when there is one.
    pub next: Option<i64>,
}

/// The dead-letter policy of the launch setting a dead letter came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PolicyView {
    /// `dead-letter`, `park`, `retry-forever` or `forward`.
    pub policy: String,
    /// For `park`: how long a message rests in the sump before its one more round.
    pub park_cooldown: String,
    pub max_deliveries: i32,
}

/// Where a dead letter's copy goes (dead-letter policy `forward`) and whether it got there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ForwardView {
    /// The exchange.
    pub to: String,
    /// When the broker confirmed the copy; `None` while it is owed.
    pub forwarded_at: Option<DateTime<Utc>>,
    /// Tries so far.
    pub attempts: i32,
    /// When it is tried next, while owed.
    pub next_at: Option<DateTime<Utc>>,
    /// Why the last try failed.
    pub error: Option<String>,
}

/// One dead letter with everything about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeadLetterDetail {
    pub letter: DeadLetterSummary,
    /// The routing key it reached the dead-letter queue with.
    pub routing_key: Option<String>,
    pub content_type: Option<String>,
    /// Its AMQP headers.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub headers: serde_json::Value,
    /// Its other AMQP properties (correlation id, timestamp, ...).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub properties: serde_json::Value,
    pub body: BodyView,
    /// The launch setting's policy, when it still exists.
    pub policy: Option<PolicyView>,
    /// Failures reported for this message by this launch setting, newest first (at most 50).
    pub failures: Vec<FailureEntry>,
    /// Whether there are older failures than those shown.
    pub more_failures: bool,
    /// The copy it owes an exchange (dead-letter policy `forward`), if any.
    pub forward: Option<ForwardView>,
}

/// What became of a dead letter's last replay, as pages and the API show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayView {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub result: ReplayResult,
    /// When it was sent or last reported on.
    pub at: Option<DateTime<Utc>>,
    /// It failed again: `error type: message`.
    pub error: Option<String>,
    /// It was dead-lettered again: the new dead letter.
    pub dead_letter: Option<i64>,
    /// The operation that replayed it.
    pub operation: Option<Uuid>,
}

words! {
    /// How a body is shown.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum BodyEncoding {
        /// Valid JSON, pretty-printed.
        Json = "json",
        /// UTF-8 text, as it is.
        Text = "text",
        /// Neither: the bytes in standard base64.
        Base64 = "base64",
    }
}

/// A body as people read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BodyView {
    pub encoding: BodyEncoding,
    pub text: String,
    /// Size of the body in bytes.
    pub size: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_of_the_status_alone_filters_nothing() {
        let mut f = DeadLetterFilter {
            status: Some(DeadLetterStatus::Replayed.as_str().into()),
            from: Some(" ".into()),
            ..DeadLetterFilter::default()
        };
        assert!(f.is_unfiltered());
        f.data_queue = Some("shop.orders".into());
        assert!(!f.is_unfiltered());
    }
}
