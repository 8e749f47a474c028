//! The runtime status of launch settings and schedule groups as pages show it: current status
//! (`running` | `waiting` | `disabled`), the last activation's result and why it was disabled.

use crate::{
    Principal,
    entity::{launch_settings, schedule_groups},
    error::ServiceResult,
};
use am_domain::roles::Role;
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};
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

/// Reads only the status columns (the rows also hold parameters and policies) of the rows whose
/// id is in `ids`.
async fn read<E: EntityTrait>(
    db: &impl ConnectionTrait,
    id: E::Column,
    [current, result, result_at, reason]: [E::Column; 4],
    ids: &[String],
) -> ServiceResult<HashMap<String, RunStatus>> {
    type Row = (
        String,
        String,
        Option<String>,
        Option<DateTime<Utc>>,
        Option<String>,
    );
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(CHUNK) {
        let rows: Vec<Row> = E::find()
            .select_only()
            .columns([id, current, result, result_at, reason])
            .filter(id.is_in(chunk.iter().cloned()))
            .into_tuple()
            .all(db)
            .await?;
        out.extend(rows.into_iter().map(
            |(id, current, last_result, last_result_at, disabled_reason)| {
                (
                    id,
                    RunStatus {
                        current,
                        last_result,
                        last_result_at,
                        disabled_reason,
                    },
                )
            },
        ));
    }
    Ok(out)
}

/// Status of each named launch setting that exists.
pub async fn of_launch_settings(
    db: &impl ConnectionTrait,
    actor: &Principal,
    ids: &[String],
) -> ServiceResult<HashMap<String, RunStatus>> {
    use launch_settings::Column as C;
    actor.require(Role::Viewer)?;
    read::<launch_settings::Entity>(
        db,
        C::Id,
        [
            C::CurrentStatus,
            C::LastResult,
            C::LastResultAt,
            C::DisabledReason,
        ],
        ids,
    )
    .await
}

/// Status of each named schedule group that exists.
pub async fn of_schedule_groups(
    db: &impl ConnectionTrait,
    actor: &Principal,
    ids: &[String],
) -> ServiceResult<HashMap<String, RunStatus>> {
    use schedule_groups::Column as C;
    actor.require(Role::Viewer)?;
    read::<schedule_groups::Entity>(
        db,
        C::Id,
        [
            C::CurrentStatus,
            C::LastResult,
            C::LastResultAt,
            C::DisabledReason,
        ],
        ids,
    )
    .await
}
