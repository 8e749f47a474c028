//! Hosts a `MANY` launch setting's breaker took out of its rotation (docs/runtime.md, Breaker
//! policy). A tripped node stops that launch setting; without a quarantine the watchdog would
//! hand it the launch again at its next pass, and the breaker would trip again, every second.
//! A quarantined host gets no launch of that launch setting until an operator clears it or
//! re-enables the launch setting (which clears all of its hosts).

use crate::{
    Principal,
    audit::{self, AuditEntry},
    entity::host_quarantines,
    error::{ServiceError, ServiceResult},
};
use am_domain::{read::run_status::Quarantine, roles::Operation};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, sea_query::OnConflict,
};
use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;

/// Rows per `IN (...)`: far below every database's bound-parameter limit.
const CHUNK: usize = 500;

/// Quarantines `host` for `launch_setting`; a host already there keeps its first cause.
/// Returns whether it is new.
pub(crate) async fn add(
    db: &impl ConnectionTrait,
    launch_setting: &str,
    host: &str,
    activation: Option<Uuid>,
    cause: &str,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    let inserted = host_quarantines::Entity::insert(host_quarantines::ActiveModel {
        launch_setting_id: Set(launch_setting.to_owned()),
        host: Set(host.to_owned()),
        since: Set(now),
        cause: Set(cause.to_owned()),
        activation_id: Set(activation),
    })
    .on_conflict(
        OnConflict::columns([
            host_quarantines::Column::LaunchSettingId,
            host_quarantines::Column::Host,
        ])
        .do_nothing()
        .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(inserted == 1)
}

/// The quarantined hosts of each named launch setting that has any.
pub async fn hosts_of(
    db: &impl ConnectionTrait,
    launch_settings: &[String],
) -> ServiceResult<HashMap<String, BTreeSet<String>>> {
    let mut out: HashMap<String, BTreeSet<String>> = HashMap::new();
    for q in read(db, launch_settings).await? {
        out.entry(q.launch_setting_id).or_default().insert(q.host);
    }
    Ok(out)
}

/// The quarantines of each named launch setting that has any, oldest first.
pub async fn of_launch_settings(
    db: &impl ConnectionTrait,
    launch_settings: &[String],
) -> ServiceResult<HashMap<String, Vec<Quarantine>>> {
    let mut out: HashMap<String, Vec<Quarantine>> = HashMap::new();
    for q in read(db, launch_settings).await? {
        out.entry(q.launch_setting_id)
            .or_default()
            .push(Quarantine {
                host: q.host,
                since: q.since,
                cause: q.cause,
                activation_id: q.activation_id,
            });
    }
    Ok(out)
}

async fn read(
    db: &impl ConnectionTrait,
    launch_settings: &[String],
) -> ServiceResult<Vec<host_quarantines::Model>> {
    let mut rows = Vec::new();
    for chunk in launch_settings.chunks(CHUNK) {
        rows.extend(
            host_quarantines::Entity::find()
                .filter(host_quarantines::Column::LaunchSettingId.is_in(chunk.iter().cloned()))
                .order_by_asc(host_quarantines::Column::Since)
                .order_by_asc(host_quarantines::Column::Host)
                .all(db)
                .await?,
        );
    }
    Ok(rows)
}

/// An operator puts `host` back into the rotation of `launch_setting`; a `MANY` stream joins
/// it again at the watchdog's next pass. Not found when the host is not quarantined.
pub async fn clear(
    db: &DatabaseConnection,
    actor: &Principal,
    launch_setting: &str,
    host: &str,
) -> ServiceResult<()> {
    actor.require(Operation::Toggle)?;
    let txn = crate::db::begin_write(db).await?;
    let Some(row) =
        host_quarantines::Entity::find_by_id((launch_setting.to_owned(), host.to_owned()))
            .one(&txn)
            .await?
    else {
        return Err(ServiceError::NotFound(format!(
            "host '{host}' is not quarantined for launch setting '{launch_setting}'"
        )));
    };
    host_quarantines::Entity::delete_by_id((launch_setting.to_owned(), host.to_owned()))
        .exec(&txn)
        .await?;
    audit::record(
        &txn,
        AuditEntry::new(actor, "clear-quarantine", "launch_setting", launch_setting)
            .before(&serde_json::json!({ "host": host, "since": row.since, "cause": row.cause }))
            .cause(format!("host {host} back in the rotation")),
    )
    .await?;
    txn.commit().await?;
    tracing::info!(launch_setting, host, actor = %actor.name, "quarantine cleared");
    Ok(())
}

/// Every host of `launch_setting` goes back into its rotation: it was re-enabled.
pub(crate) async fn clear_all(
    db: &impl ConnectionTrait,
    launch_setting: &str,
) -> ServiceResult<u64> {
    Ok(host_quarantines::Entity::delete_many()
        .filter(host_quarantines::Column::LaunchSettingId.eq(launch_setting))
        .exec(db)
        .await?
        .rows_affected)
}
