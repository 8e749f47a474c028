//! Runs' starts and ends into this replica's metrics ([`Metrics::runs`]), labelled by
//! application and agent: recorded where the start and the end are written, so every way a
//! run ends (a report, the watchdog, an interrupt, a stop) is counted once.

use super::Metrics;
use crate::{
    entity::{activations, launch_settings},
    error::ServiceResult,
};
use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, EntityTrait, QuerySelect};
use uuid::Uuid;

async fn agent_of(db: &impl ConnectionTrait, ls: Option<&str>) -> ServiceResult<String> {
    let Some(ls) = ls else {
        return Ok(String::new());
    };
    Ok(launch_settings::Entity::find_by_id(ls)
        .select_only()
        .column(launch_settings::Column::AgentId)
        .into_tuple::<String>()
        .one(db)
        .await?
        .unwrap_or_default())
}

fn seconds(d: chrono::Duration) -> f64 {
    d.num_milliseconds() as f64 / 1000.0
}

/// `run` (as it was before its end was written) ended with `result` at `now`.
pub(crate) async fn ended(
    db: &impl ConnectionTrait,
    metrics: &Metrics,
    run: &activations::Model,
    result: &str,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let agent = agent_of(db, run.launch_setting_id.as_deref()).await?;
    let application = run.application_id.as_deref().unwrap_or_default();
    let ran_for = run.started_at.map(|s| seconds(now - s));
    metrics.runs.ended(application, &agent, result, ran_for);
    Ok(())
}

/// `activation` started at `at` (a node's clock) for the first time.
pub(crate) async fn started(
    db: &impl ConnectionTrait,
    metrics: &Metrics,
    activation: Uuid,
    at: DateTime<Utc>,
) -> ServiceResult<()> {
    let Some(run) = activations::Entity::find_by_id(activation).one(db).await? else {
        return Ok(());
    };
    let agent = agent_of(db, run.launch_setting_id.as_deref()).await?;
    let application = run.application_id.as_deref().unwrap_or_default();
    metrics
        .runs
        .started(application, &agent, seconds(at - run.created_at));
    Ok(())
}
