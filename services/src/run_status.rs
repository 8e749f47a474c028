//! The runtime status of launch settings and schedule groups as pages and the API show it:
//! current status (`running` | `waiting` | `disabled`), the last activation's result, why it was
//! disabled and, for a launch setting, what waits for it in the broker and which hosts its
//! breaker quarantined.

use crate::{
    Principal,
    entity::{agents, launch_settings, schedule_groups},
    error::ServiceResult,
    topology::DepthsHandle,
};
use am_domain::catalog::{Catalog, LaunchKind, LaunchSetting};
use am_domain::read::run_status::{RecentCounts, RunStatus};
use am_domain::roles::Operation;
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};
use std::collections::{BTreeMap, HashMap};

/// How far back [`RunStatus::last_24h`] counts.
pub const RECENT: chrono::Duration = chrono::Duration::hours(24);

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
                        backlog: None,
                        quarantined: Vec::new(),
                        recovery: BTreeMap::new(),
                        stream: None,
                        next_fire_at: None,
                        last_24h: None,
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
    actor.require(Operation::Read)?;
    let mut statuses = read::<launch_settings::Entity>(
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
    .await?;
    for (id, quarantined) in crate::quarantine::of_launch_settings(db, ids).await? {
        if let Some(status) = statuses.get_mut(&id) {
            status.quarantined = quarantined;
        }
    }
    for (id, counts) in crate::recovery::of_launch_settings(db, ids).await? {
        if let Some(status) = statuses.get_mut(&id) {
            status.recovery = counts;
        }
    }
    let recent = recent_counts(db, ids, chrono::Utc::now() - RECENT).await?;
    for (id, status) in &mut statuses {
        status.last_24h = Some(recent.get(id).copied().unwrap_or_default());
    }
    Ok(statuses)
}

/// Real failures and dead letters since `since` of each of `ids` that has any: one counted
/// index range per launch setting (`idx_failure_logs_ls_occurred_at`,
/// `idx_dead_letters_ls_received_at`).
pub async fn recent_counts(
    db: &impl ConnectionTrait,
    ids: &[String],
    since: DateTime<Utc>,
) -> ServiceResult<HashMap<String, RecentCounts>> {
    use crate::entity::{dead_letters, failure_logs};
    let mut out: HashMap<String, RecentCounts> = HashMap::new();
    for chunk in ids.chunks(CHUNK) {
        let failures: Vec<(String, i64)> = failure_logs::Entity::find()
            .select_only()
            .column(failure_logs::Column::LaunchSettingId)
            .column_as(failure_logs::Column::Id.count(), "n")
            .filter(failure_logs::Column::LaunchSettingId.is_in(chunk.iter().cloned()))
            .filter(failure_logs::Column::OccurredAt.gte(since))
            .filter(crate::failures::kinds::real_failures())
            .group_by(failure_logs::Column::LaunchSettingId)
            .into_tuple()
            .all(db)
            .await?;
        for (ls, n) in failures {
            out.entry(ls).or_default().failures = u64::try_from(n).unwrap_or(0);
        }
        let dead: Vec<(Option<String>, i64)> = dead_letters::Entity::find()
            .select_only()
            .column(dead_letters::Column::LaunchSettingId)
            .column_as(dead_letters::Column::Id.count(), "n")
            .filter(dead_letters::Column::LaunchSettingId.is_in(chunk.iter().cloned()))
            .filter(dead_letters::Column::ReceivedAt.gte(since))
            .group_by(dead_letters::Column::LaunchSettingId)
            .into_tuple()
            .all(db)
            .await?;
        for (ls, n) in dead {
            if let Some(ls) = ls {
                out.entry(ls).or_default().dead_letters = u64::try_from(n).unwrap_or(0);
            }
        }
    }
    Ok(out)
}

/// As [`of_launch_settings`] for `settings`, each with its backlog.
pub async fn of_launch_settings_with_backlog(
    db: &impl ConnectionTrait,
    actor: &Principal,
    depths: &DepthsHandle,
    catalog: &Catalog,
    settings: &[&LaunchSetting],
) -> ServiceResult<HashMap<String, RunStatus>> {
    let ids: Vec<String> = settings.iter().map(|l| l.id.clone()).collect();
    let mut statuses = of_launch_settings(db, actor, &ids).await?;
    let mut backlogs = match depths.read() {
        Ok(d) => d.backlogs(catalog, settings.iter().copied()),
        Err(poisoned) => poisoned
            .into_inner()
            .backlogs(catalog, settings.iter().copied()),
    };
    for (id, status) in &mut statuses {
        status.backlog = backlogs.remove(id);
    }
    Ok(statuses)
}

/// The status of one launch setting with its backlog, for its page: reads only its row and its
/// agent's data queue (a page need not load the whole catalog).
pub async fn of_launch_setting_with_backlog(
    db: &impl ConnectionTrait,
    actor: &Principal,
    depths: &DepthsHandle,
    id: &str,
) -> ServiceResult<Option<RunStatus>> {
    let Some(mut status) = of_launch_settings(db, actor, &[id.to_owned()])
        .await?
        .remove(id)
    else {
        return Ok(None);
    };
    let agent: Option<(String, String, String)> = launch_settings::Entity::find_by_id(id)
        .select_only()
        .columns([
            launch_settings::Column::ApplicationId,
            launch_settings::Column::AgentId,
            launch_settings::Column::Kind,
        ])
        .into_tuple()
        .one(db)
        .await?;
    if agent
        .as_ref()
        .is_some_and(|(_, _, kind)| *kind == crate::catalog::rows::enum_to_str(&LaunchKind::Stream))
    {
        status.stream = Some(crate::stream_health::of(db, id, chrono::Utc::now()).await?);
    }
    let data_queue = match agent {
        Some((application, agent, _)) => agents::Entity::find_by_id((application, agent))
            .select_only()
            .column(agents::Column::DataQueueId)
            .into_tuple::<Option<String>>()
            .one(db)
            .await?
            .flatten(),
        None => None,
    };
    status.backlog = match depths.read() {
        Ok(d) => d.backlog_of(id, data_queue.as_deref()),
        Err(poisoned) => poisoned.into_inner().backlog_of(id, data_queue.as_deref()),
    };
    Ok(Some(status))
}

/// Status of each named schedule group that exists.
pub async fn of_schedule_groups(
    db: &impl ConnectionTrait,
    actor: &Principal,
    ids: &[String],
) -> ServiceResult<HashMap<String, RunStatus>> {
    use schedule_groups::Column as C;
    actor.require(Operation::Read)?;
    let mut statuses = read::<schedule_groups::Entity>(
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
    .await?;
    for chunk in ids.chunks(CHUNK) {
        let next: Vec<(String, Option<DateTime<Utc>>)> = schedule_groups::Entity::find()
            .select_only()
            .columns([C::Id, C::NextFireAt])
            .filter(C::Id.is_in(chunk.iter().cloned()))
            .filter(C::Enabled.eq(true))
            .into_tuple()
            .all(db)
            .await?;
        for (id, at) in next {
            if let Some(status) = statuses.get_mut(&id) {
                status.next_fire_at = at;
            }
        }
    }
    Ok(statuses)
}
