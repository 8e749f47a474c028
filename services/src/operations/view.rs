//! An operation as the API and the pages show it.

use super::Stored;
use crate::{entity::operations, error::ServiceResult};
use am_domain::read::operations::{OperationKind, OperationView};
use sea_orm::DatabaseConnection;

/// An operation with what only the database knows beyond its row: a replay's outcomes.
pub async fn view(db: &DatabaseConnection, m: operations::Model) -> ServiceResult<OperationView> {
    let replay = m.kind == OperationKind::ReplayDeadLetters.as_str();
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
