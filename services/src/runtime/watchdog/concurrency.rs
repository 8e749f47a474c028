//! Whether an activation's agent runs on one node of the pool or on every node: what decides
//! how the watchdog moves or restarts it.

use crate::{
    catalog::agent_concurrency,
    entity::{activations, launch_settings},
    error::ServiceResult,
};
use am_domain::catalog::Concurrency;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

/// The concurrency of the agent `a` runs (`ANY` for a group's own run or a deleted agent).
pub(super) async fn concurrency_of(
    db: &impl ConnectionTrait,
    a: &activations::Model,
) -> ServiceResult<Concurrency> {
    let Some(ls) = &a.launch_setting_id else {
        return Ok(Concurrency::Any);
    };
    let agent: Option<String> = launch_settings::Entity::find()
        .select_only()
        .column(launch_settings::Column::AgentId)
        .filter(launch_settings::Column::Id.eq(ls.as_str()))
        .into_tuple()
        .one(db)
        .await?;
    let Some(agent) = agent else {
        return Ok(Concurrency::Any);
    };
    let app = a.application_id.as_deref().unwrap_or_default();
    agent_concurrency(db, app, &agent).await
}
