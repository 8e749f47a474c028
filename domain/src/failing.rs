//! What the pages say about something that fails: its newest failure, and how a stream launch
//! setting is doing (its activation runs for days, so "last result" says nothing). Shared by
//! the server, the HTTP API and the browser.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The newest failure of a launch setting (or of a group of the drill-down), its message cut
/// to [`crate::dashboard::MESSAGE_SHOWN`] characters; the failure itself has it whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LastFailure {
    pub error_type: String,
    pub message: String,
    pub host: String,
    /// The activation it failed in (a UUID).
    pub activation: String,
    pub at: DateTime<Utc>,
}

/// Failure reports by kind ([`crate::dashboard::failure_kind`]) and dead letters of one launch
/// setting over one window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WindowCounts {
    /// Real failures.
    pub failed: u64,
    pub retried: u64,
    /// "Temporarily unavailable" answers.
    pub unavailable: u64,
    /// Messages dead-lettered.
    pub dead_lettered: u64,
}

/// Failure reports by kind ([`crate::dashboard::failure_kind`]): what a list filtered on one
/// kind leaves out is shown beside it, so no count hides another.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KindCounts {
    /// Real failures.
    pub failed: u64,
    /// Failed attempts whose message was sent to be tried again.
    pub retried: u64,
    /// "Temporarily unavailable" answers.
    pub unavailable: u64,
}

impl KindCounts {
    /// Adds `n` reports of `kind` (a [`crate::dashboard::failure_kind`] word; any other counts
    /// as failed, the kind of whatever is not known to be harmless).
    pub fn add(&mut self, kind: &str, n: u64) {
        use crate::dashboard::failure_kind;
        match kind {
            failure_kind::RETRIED => self.retried += n,
            failure_kind::UNAVAILABLE => self.unavailable += n,
            _ => self.failed += n,
        }
    }

    /// The count of `kind`.
    pub fn of(&self, kind: &str) -> u64 {
        use crate::dashboard::failure_kind;
        match kind {
            failure_kind::RETRIED => self.retried,
            failure_kind::UNAVAILABLE => self.unavailable,
            _ => self.failed,
        }
    }
}

/// How a stream launch setting is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StreamHealth {
    /// When these figures were read (the base of "3 min ago").
    pub as_of: DateTime<Utc>,
    /// Messages its running activations processed, by their nodes' last heartbeats.
    pub processed: i64,
    /// When the oldest of its running activations started; `None` when none runs.
    pub running_since: Option<DateTime<Utc>>,
    pub last_5_min: WindowCounts,
    pub last_hour: WindowCounts,
    pub last_failure: Option<LastFailure>,
    /// The first real failure after it last succeeded, when it has failed since.
    pub failing_since: Option<DateTime<Utc>>,
}
