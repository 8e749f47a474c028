//! Runs' starts and ends into this replica's metrics ([`Metrics::runs`]), labelled by
//! application and agent: recorded where the start and the end are written, so every way a
//! run ends (a report, the watchdog, an interrupt, a stop) is counted once.

use super::{CHUNK, Metrics};
use crate::{
    entity::{activations, launch_settings},
    error::ServiceResult,
};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};
use std::collections::HashMap;
use uuid::Uuid;

/// The agent of each of `settings` (one read).
async fn agents_of(
    db: &impl ConnectionTrait,
    settings: impl IntoIterator<Item = String>,
) -> ServiceResult<HashMap<String, String>> {
    let mut ids: Vec<String> = settings.into_iter().collect();
    ids.sort();
    ids.dedup();
    let mut agents = HashMap::new();
    for chunk in ids.chunks(CHUNK) {
        let rows: Vec<(String, String)> = launch_settings::Entity::find()
            .select_only()
            .column(launch_settings::Column::Id)
            .column(launch_settings::Column::AgentId)
            .filter(launch_settings::Column::Id.is_in(chunk.iter().cloned()))
            .into_tuple()
            .all(db)
            .await?;
        agents.extend(rows);
    }
    Ok(agents)
}

/// An activation as a start is observed: id, created, application, launch setting.
type StartedRun = (Uuid, DateTime<Utc>, Option<String>, Option<String>);

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
    let agents = agents_of(db, run.launch_setting_id.clone()).await?;
    let agent = run
        .launch_setting_id
        .as_ref()
        .and_then(|ls| agents.get(ls))
        .map_or("", String::as_str);
    let application = run.application_id.as_deref().unwrap_or_default();
    let ran_for = run.started_at.map(|s| seconds(now - s));
    metrics.runs.ended(application, agent, result, ran_for);
    Ok(())
}

/// Each of `starts` (an activation and when it first started, by its node's clock), read in
/// two statements for a whole batch of reports.
pub(crate) async fn started(
    db: &impl ConnectionTrait,
    metrics: &Metrics,
    starts: &[(Uuid, DateTime<Utc>)],
) -> ServiceResult<()> {
    if starts.is_empty() {
        return Ok(());
    }
    let mut runs = Vec::with_capacity(starts.len());
    for chunk in starts.chunks(CHUNK) {
        let rows: Vec<StartedRun> = activations::Entity::find()
            .select_only()
            .column(activations::Column::Id)
            .column(activations::Column::CreatedAt)
            .column(activations::Column::ApplicationId)
            .column(activations::Column::LaunchSettingId)
            .filter(activations::Column::Id.is_in(chunk.iter().map(|(id, _)| *id)))
            .into_tuple()
            .all(db)
            .await?;
        runs.extend(rows);
    }
    let agents = agents_of(db, runs.iter().filter_map(|r| r.3.clone())).await?;
    let at: HashMap<Uuid, DateTime<Utc>> = starts.iter().copied().collect();
    for (id, created, application, ls) in &runs {
        let Some(started) = at.get(id) else { continue };
        let agent = ls
            .as_ref()
            .and_then(|ls| agents.get(ls))
            .map_or("", String::as_str);
        metrics.runs.started(
            application.as_deref().unwrap_or_default(),
            agent,
            seconds(*started - *created),
        );
    }
    Ok(())
}
