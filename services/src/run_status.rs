//! The runtime status of launch settings and schedule groups as pages and the API show it:
//! current status (`running` | `waiting` | `disabled`), the last activation's result, why it was
//! disabled and, for a launch setting, what waits for it in the broker and which hosts its
//! breaker quarantined.

use crate::{
    Principal,
    entity::{agents, launch_settings, schedule_groups},
    error::ServiceResult,
    quarantine::Quarantine,
    topology::{Backlog, DepthsHandle},
};
use am_domain::catalog::{Catalog, LaunchKind, LaunchSetting};
use am_domain::roles::Role;
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct RunStatus {
    /// `running` | `waiting` | `disabled`.
    pub current: String,
    /// `succeeded` | `failed` | `interrupted`; `None` before the first activation ends.
    pub last_result: Option<String>,
    pub last_result_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
    /// Launch settings only: what waits for it in the broker, from this replica's last sample
    /// (none before the first one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<Backlog>,
    /// Launch settings only: hosts its `MANY` breaker took out of the rotation, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quarantined: Vec<Quarantine>,
    /// Launch settings only: how often the runtime recovered it, by kind (`start_timeout`,
    /// `lost`, `redispatch`, `stale_report`, `quarantine`); kinds that never happened are left
    /// out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub recovery: BTreeMap<String, i64>,
    /// Stream launch settings only, on their own page: processed, failures and dead letters
    /// over the last 5 minutes and hour, last failure, failing since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<am_domain::failing::StreamHealth>,
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
                        backlog: None,
                        quarantined: Vec::new(),
                        recovery: BTreeMap::new(),
                        stream: None,
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
    Ok(statuses)
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
