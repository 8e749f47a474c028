//! The broker as the reconciler keeps it, as `GET /api/v1/broker` and the Broker page read it:
//! which catalog revision it is in sync with, what it refused, which queues are leaving, what
//! the queues hold and where the broker differs.

use super::depths::Depths;
use crate::topology::{DriftState, ObjectKind};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A queue on its way out, as the Broker page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LeavingView {
    pub queue: String,
    /// `drain` (deleted once its messages expired into where they go) or `retire` (its
    /// messages move to the dead-letter queue once its hold is over).
    pub how: String,
    pub reason: Option<String>,
    pub since: DateTime<Utc>,
}

/// One difference between the broker and what the reconciler keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Drift {
    pub object: ObjectKind,
    pub name: String,
    pub state: DriftState,
    /// What the broker said, or what happens next.
    pub detail: String,
}

/// The broker as the reconciler keeps it: in sync with which catalog revision, when, the last
/// refusals, how many objects it keeps and which queues are on their way out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BrokerView {
    pub catalog_revision: i64,
    pub applied_revision: Option<i64>,
    pub in_sync: bool,
    pub reconciled_at: Option<DateTime<Utc>>,
    pub full_requested_at: Option<DateTime<Utc>>,
    /// What the broker refused on the last pass, one line each (retried on the next).
    pub last_error: Option<String>,
    pub exchanges: usize,
    pub queues: usize,
    pub bindings: usize,
    pub leaving: Vec<LeavingView>,
    /// What the consumed and unrouted queues hold, as this replica last sampled them.
    pub depths: Depths,
    /// Where the broker differs from what the reconciler keeps.
    pub drift: Vec<Drift>,
}

impl BrokerView {
    /// What the broker refused on the last pass, one line each.
    pub fn errors(&self) -> Vec<&str> {
        self.last_error
            .as_deref()
            .map(|e| e.lines().collect())
            .unwrap_or_default()
    }
}
