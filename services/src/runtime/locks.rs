//! The order in which runtime transactions lock rows, so that two of them (two replicas' fire
//! batches, a fire batch and a report batch, a report batch and the watchdog) never wait on
//! each other in a circle. PostgreSQL breaks such a circle by failing one side with "deadlock
//! detected"; it is retried and nothing is lost, but the retries delay heartbeats and fires
//! (seen with two replicas on a RabbitMQ cluster, `server/tests/runtime/cluster.rs`).
//!
//! The rule: a transaction that may write a launch setting's row or start one of its runs locks
//! **every** launch setting it may touch first, in one sorted pass, before it updates any
//! launch setting, schedule group or group activation. A fire batch locks every member of the
//! groups it fires (not only the first, which a busy member may pass over); a settle locks the
//! settled run's launch setting and every member of its group (the next member it may start).
//! Report batches, which update node and host rows in the order their reports came, are one at
//! a time across replicas.
//!
//! The locks are `FOR NO KEY UPDATE`: they keep out another writer of the row, but not the
//! foreign-key checks of inserted rows (`FOR KEY SHARE`), which would otherwise join a circle
//! through every failure log and activation that names a launch setting. On SQLite the write
//! transaction is the only writer, and these statements lock nothing more.

use super::{CHUNK, members::members_of};
use crate::{
    entity::{activations, launch_settings},
    error::ServiceResult,
};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    Statement, sea_query::LockType,
};
use std::collections::BTreeSet;
use uuid::Uuid;

/// The advisory lock key of report batches (any constant; it only has to be ours).
const REPORTS: i64 = 0x616d_7265_706f_7274;

/// Locks the rows of launch settings `ls`, sorted, so two writers never wait on each other: an
/// overlap check and the activation it lets through are then one step.
pub(crate) async fn launch_settings(
    db: &impl ConnectionTrait,
    ls: impl IntoIterator<Item = String>,
) -> ServiceResult<()> {
    let ids: BTreeSet<String> = ls.into_iter().collect();
    let ids: Vec<String> = ids.into_iter().collect();
    for chunk in ids.chunks(CHUNK) {
        let _: Vec<String> = launch_settings::Entity::find()
            .select_only()
            .column(launch_settings::Column::Id)
            .filter(launch_settings::Column::Id.is_in(chunk.iter().cloned()))
            .order_by_asc(launch_settings::Column::Id)
            .lock(LockType::NoKeyUpdate)
            .into_tuple()
            .all(db)
            .await?;
    }
    Ok(())
}

/// Locks what settling `runs` may write (their launch settings and every member of their
/// groups) and the launch settings `also`. Taken before the first of them is settled (a batch
/// of reports takes it for all).
pub(crate) async fn for_settling(
    db: &impl ConnectionTrait,
    runs: &[Uuid],
    also: impl IntoIterator<Item = String>,
) -> ServiceResult<()> {
    let mut ls: BTreeSet<String> = also.into_iter().collect();
    let mut groups = BTreeSet::new();
    for chunk in runs.chunks(CHUNK) {
        let rows: Vec<(Option<String>, Option<String>, Option<Uuid>)> = activations::Entity::find()
            .select_only()
            .column(activations::Column::LaunchSettingId)
            .column(activations::Column::GroupId)
            .column(activations::Column::ParentId)
            .filter(activations::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(db)
            .await?;
        for (launch_setting, group, parent) in rows {
            ls.extend(launch_setting);
            if parent.is_some() {
                groups.extend(group);
            }
        }
    }
    if !groups.is_empty() {
        let groups: Vec<String> = groups.into_iter().collect();
        for members in members_of(db, &groups).await?.into_values() {
            ls.extend(members);
        }
    }
    launch_settings(db, ls).await
}

/// Makes report batches one at a time across replicas (on PostgreSQL, until the transaction
/// ends): each updates node and host rows in the order its reports came, which two batches
/// cannot agree on.
pub(crate) async fn reports(db: &impl ConnectionTrait) -> ServiceResult<()> {
    if db.get_database_backend() == DbBackend::Postgres {
        db.execute_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT pg_advisory_xact_lock($1)",
            [REPORTS.into()],
        ))
        .await?;
    }
    Ok(())
}
