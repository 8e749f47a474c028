//! The error types each launch setting's failures reported (`error_types`): kept with the
//! failure reports, in their transaction, and forgotten by the retention sweep once it deleted
//! every failure of the type; read by the global search. One row per launch setting and error
//! type, so finding an error type never reads `failure_logs` (millions of rows, no index led by
//! the error type).

use crate::{entity::error_types, error::ServiceResult};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set,
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, OnConflict, SimpleExpr},
};
use std::collections::BTreeMap;

/// The error types one batch of reports saw, with the latest time each occurred.
#[derive(Debug, Default)]
pub(crate) struct Seen(BTreeMap<(String, String), DateTime<Utc>>);

impl Seen {
    pub(crate) fn note(&mut self, launch_setting: &str, error_type: &str, at: DateTime<Utc>) {
        let last = self
            .0
            .entry((launch_setting.to_owned(), error_type.to_owned()))
            .or_insert(at);
        *last = (*last).max(at);
    }

    /// Inserts the new pairs and moves `last_seen` forward (never back: a late report of an
    /// older failure must not make the retention sweep forget a type whose newer failures are
    /// still stored). One statement per chunk, in key order, so two replicas writing the same
    /// pairs take their row locks in one order.
    pub(crate) async fn write(self, txn: &impl ConnectionTrait) -> ServiceResult<()> {
        let mut rows = self.0.into_iter().peekable();
        while rows.peek().is_some() {
            let chunk: Vec<_> = rows
                .by_ref()
                .take(crate::sql::CHUNK)
                .map(|((ls, error_type), at)| error_types::ActiveModel {
                    launch_setting_id: Set(ls),
                    error_type: Set(error_type),
                    last_seen: Set(at),
                })
                .collect();
            error_types::Entity::insert_many(chunk)
                .on_conflict(
                    OnConflict::columns([
                        error_types::Column::LaunchSettingId,
                        error_types::Column::ErrorType,
                    ])
                    .value(
                        error_types::Column::LastSeen,
                        Expr::cust(
                            "CASE WHEN excluded.last_seen > error_types.last_seen \
                             THEN excluded.last_seen ELSE error_types.last_seen END",
                        ),
                    )
                    .to_owned(),
                )
                .exec_without_returning(txn)
                .await?;
        }
        Ok(())
    }
}

/// Forgets the error types of `launch_setting` whose latest failure `gone` (a condition on
/// `failure_logs.occurred_at`'s value, applied to `last_seen`) says the retention sweep
/// deleted. A read first, so a launch setting with nothing to forget takes no write lock.
pub(crate) async fn forget(
    db: &impl ConnectionTrait,
    launch_setting: &str,
    gone: impl Fn(error_types::Column) -> SimpleExpr,
) -> ServiceResult<u64> {
    let any: Option<String> = error_types::Entity::find()
        .select_only()
        .column(error_types::Column::ErrorType)
        .filter(error_types::Column::LaunchSettingId.eq(launch_setting))
        .filter(gone(error_types::Column::LastSeen))
        .limit(1)
        .into_tuple()
        .one(db)
        .await?;
    if any.is_none() {
        return Ok(0);
    }
    Ok(error_types::Entity::delete_many()
        .filter(error_types::Column::LaunchSettingId.eq(launch_setting))
        .filter(gone(error_types::Column::LastSeen))
        .exec(db)
        .await?
        .rows_affected)
}

/// An error type the search found: how many launch settings reported it and when last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Known {
    pub error_type: String,
    pub launch_settings: u64,
    pub last_seen: DateTime<Utc>,
}

/// The error types `condition` matches, by name, at most `limit`.
pub(crate) async fn matching(
    db: &impl ConnectionTrait,
    condition: sea_orm::Condition,
    limit: u64,
) -> ServiceResult<Vec<Known>> {
    let rows: Vec<(String, i64, DateTime<Utc>)> = error_types::Entity::find()
        .select_only()
        .column(error_types::Column::ErrorType)
        .column_as(
            error_types::Column::LaunchSettingId.count(),
            "launch_settings",
        )
        .column_as(error_types::Column::LastSeen.max(), "last_seen")
        .filter(condition)
        .group_by(error_types::Column::ErrorType)
        .order_by_asc(error_types::Column::ErrorType)
        .limit(limit)
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(error_type, n, last_seen)| Known {
            error_type,
            launch_settings: crate::sql::count(n),
            last_seen,
        })
        .collect())
}
