//! The runtime status of launch settings and schedule groups as pages show it: current status
//! (`running` | `waiting` | `disabled`), the last activation's result and why it was disabled.

use crate::{
    Principal,
    entity::{launch_settings, schedule_groups},
    error::ServiceResult,
};
use am_domain::roles::Role;
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunStatus {
    pub current: String,
    /// `succeeded` | `failed` | `interrupted`; `None` before the first activation ends.
    pub last_result: Option<String>,
    pub last_result_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
}

/// Rows per `IN (...)`: far below every database's bound-parameter limit.
const CHUNK: usize = 500;

/// Status of each named launch setting that exists.
pub async fn of_launch_settings(
    db: &impl ConnectionTrait,
    actor: &Principal,
    ids: &[String],
) -> ServiceResult<HashMap<String, RunStatus>> {
    actor.require(Role::Viewer)?;
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(CHUNK) {
        let rows = launch_settings::Entity::find()
            .filter(launch_settings::Column::Id.is_in(chunk.iter().cloned()))
            .all(db)
            .await?;
        out.extend(rows.into_iter().map(|r| {
            (
                r.id,
                RunStatus {
                    current: r.current_status,
                    last_result: r.last_result,
                    last_result_at: r.last_result_at,
                    disabled_reason: r.disabled_reason,
                },
            )
        }));
    }
    Ok(out)
}

/// Status of each named schedule group that exists.
pub async fn of_schedule_groups(
    db: &impl ConnectionTrait,
    actor: &Principal,
    ids: &[String],
) -> ServiceResult<HashMap<String, RunStatus>> {
    actor.require(Role::Viewer)?;
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(CHUNK) {
        let rows = schedule_groups::Entity::find()
            .filter(schedule_groups::Column::Id.is_in(chunk.iter().cloned()))
            .all(db)
            .await?;
        out.extend(rows.into_iter().map(|r| {
            (
                r.id,
                RunStatus {
                    current: r.current_status,
                    last_result: r.last_result,
                    last_result_at: r.last_result_at,
                    disabled_reason: r.disabled_reason,
                },
            )
        }));
    }
    Ok(out)
}
