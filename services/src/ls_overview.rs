//! The operator summary at the top of a launch setting's page: its newest runs, its failures by
//! kind and the messages it dead-lettered in the last hour, the dead letters still waiting for
//! an operator, and its figures per minute ([`crate::throughput`]). Every count is the one the
//! list it links to shows (the activations list, the failure logs, the dead letters).

use crate::{
    Principal, activations, dead_letters, error::ServiceResult, stream_health, throughput,
};
use am_domain::read::{
    activations::ActivationFilter, dead_letters::DeadLetterFilter, overview::Overview,
};
use chrono::{DateTime, Duration, Utc};
use sea_orm::ConnectionTrait;
/// Runs the summary lists.
pub const RECENT_RUNS: u64 = 5;

/// The summary of launch setting `ls` at `now` (not found when it does not exist).
#[tracing::instrument(skip(db, actor))]
pub async fn of(
    db: &impl ConnectionTrait,
    actor: &Principal,
    ls: &str,
    now: DateTime<Utc>,
) -> ServiceResult<Overview> {
    let throughput = throughput::of_launch_setting(db, actor, ls, now).await?;
    let runs = activations::list(
        db,
        actor,
        &ActivationFilter {
            launch_setting: Some(ls.to_owned()),
            ..ActivationFilter::default()
        },
        Some(1),
        Some(RECENT_RUNS),
    )
    .await?;
    let waiting = dead_letters::list(
        db,
        actor,
        &DeadLetterFilter {
            launch_setting: Some(ls.to_owned()),
            status: Some(dead_letters::DEAD.to_owned()),
            ..DeadLetterFilter::default()
        },
        None,
        Some(1),
    )
    .await?;
    Ok(Overview {
        generated_at: now,
        recent: runs.items,
        runs_total: runs.total,
        last_hour: stream_health::window(db, ls, now - Duration::hours(1)).await?,
        dead_letters_waiting: waiting.total,
        throughput,
    })
}
