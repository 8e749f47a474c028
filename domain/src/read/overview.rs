//! The operator summary at the top of a launch setting's page: its newest runs, its failures by
//! kind and the messages it dead-lettered in the last hour, the dead letters still waiting for
//! an operator, and its figures per minute. Every count is the one the list it links to shows
//! (the activations list, the failure logs, the dead letters).

use super::activations::ActivationSummary;
use crate::{failing::WindowCounts, throughput::Throughput};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overview {
    pub generated_at: DateTime<Utc>,
    /// The newest runs of the launch setting (a handful), newest first.
    pub recent: Vec<ActivationSummary>,
    /// Runs of it in all (as the activations list filtered on it counts them).
    pub runs_total: u64,
    /// Failure reports by kind, and messages dead-lettered, in the last 60 minutes.
    pub last_hour: WindowCounts,
    /// Dead letters of it waiting for an operator (status `dead`).
    pub dead_letters_waiting: u64,
    pub throughput: Throughput,
}
