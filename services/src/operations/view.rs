//! An operation as the API and the pages show it.

use super::Stored;
use crate::{entity::operations, error::ServiceResult};
use am_domain::recovery::ReplayOutcomes;
use sea_orm::DatabaseConnection;

/// The kind of a dead-letter replay.
pub(super) const REPLAY_KIND: &str = "replay-dead-letters";
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
    /// A dead-letter replay: what became of the dead letters it sent, as the nodes reported
    /// (`done` counts those the broker took, not those processed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_outcomes: Option<ReplayOutcomes>,
}

/// An operation with what only the database knows beyond its row: a replay's outcomes.
pub async fn view(db: &DatabaseConnection, m: operations::Model) -> ServiceResult<OperationView> {
    let replay = m.kind == REPLAY_KIND;
    let id = m.id;
    let mut v = OperationView::from(m);
    if replay {
        v.replay_outcomes = Some(crate::dead_letters::replay::outcomes(db, id).await?);
    }
    Ok(v)
}

/// [`view`] of each.
pub async fn views(
    db: &DatabaseConnection,
    rows: Vec<operations::Model>,
) -> ServiceResult<Vec<OperationView>> {
    let mut out = Vec::with_capacity(rows.len());
    for m in rows {
        out.push(view(db, m).await?);
    }
    Ok(out)
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
            replay_outcomes: None,
        }
    }
}
