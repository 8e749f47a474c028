//! An operation as the API and the pages show it.

use super::Stored;
use crate::entity::operations;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// An item that failed, as kept in `errors`; for a consistency sweep, also what it found wrong
/// and repaired (`repaired: true`, not counted as failed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ItemError {
    pub item: String,
    pub error: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repaired: bool,
}

/// An operation as the API and the pages show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OperationView {
    pub id: Uuid,
    /// `replay-dead-letters`, `delete-dead-letters`, `rerun-activations`,
    /// `enable-launch-settings`, `enable-schedule-groups`, `replay-unrouted` or
    /// `consistency-sweep`.
    pub kind: String,
    /// `queued`, `running`, `succeeded`, `failed` (finished, some items failed) or `cancelled`.
    pub status: String,
    pub requested_by: String,
    pub total: i64,
    pub done: i64,
    pub failed: i64,
    /// The first errors (at most 50), one per failed item; a sweep's repaired findings too.
    pub errors: Vec<ItemError>,
    pub cancel_requested: bool,
    /// What was asked for.
    pub request: Option<super::OperationRequest>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
}

impl From<operations::Model> for OperationView {
    fn from(m: operations::Model) -> Self {
        let request = serde_json::from_value::<Stored>(m.params)
            .ok()
            .map(|s| s.request);
        let errors = serde_json::from_value(m.errors).unwrap_or_default();
        OperationView {
            id: m.id,
            kind: m.kind,
            status: m.status,
            requested_by: m.requested_by,
            total: m.total,
            done: m.done,
            failed: m.failed,
            errors,
            cancel_requested: m.cancel_requested,
            request,
            created_at: m.created_at,
            started_at: m.started_at,
            finished_at: m.finished_at,
            updated_at: m.updated_at,
        }
    }
}
