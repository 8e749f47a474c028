//! How often the runtime had to recover each launch setting, by kind (docs/runtime.md, Recovery
//! counters): kept in the database, counted in the transaction of the recovery itself, so the
//! launch setting's page and `/metrics` show the same exact numbers on every replica and after
//! a restart.

use crate::{entity::recovery_counts, error::ServiceResult};
use sea_orm::{
    ActiveValue::Set,
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    sea_query::{Expr, OnConflict},
};
use std::collections::{BTreeMap, HashMap};

/// The kinds of recovery, as stored and as `/metrics` labels them (`RecoveryKind`).
pub mod kind {
    use am_domain::status::RecoveryKind as K;

    /// A launch not accepted within the start timeout.
    pub const START_TIMEOUT: &str = K::StartTimeout.as_str();
    /// A run without heartbeat within the work timeout.
    pub const LOST: &str = K::Lost.as_str();
    /// A run moved to another node (after a start timeout, or restarted after it was lost).
    pub const REDISPATCH: &str = K::Redispatch.as_str();
    /// A report with an outdated fencing token, ignored.
    pub const STALE_REPORT: &str = K::StaleReport.as_str();
    /// A host its `MANY` breaker quarantined.
    pub const QUARANTINE: &str = K::Quarantine.as_str();
    /// Every kind, in the order pages list them.
    pub const ALL: [&str; 5] = [START_TIMEOUT, LOST, REDISPATCH, STALE_REPORT, QUARANTINE];
}

/// Counts gathered by a runtime step, written with it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally(BTreeMap<(String, &'static str), i64>);

impl Tally {
    pub fn add(&mut self, launch_setting: &str, kind: &'static str) {
        *self.0.entry((launch_setting.to_owned(), kind)).or_default() += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds the counts to the stored ones (an upsert each), in the caller's transaction.
    pub async fn write(self, db: &impl ConnectionTrait) -> ServiceResult<()> {
        for ((launch_setting, kind), n) in self.0 {
            recovery_counts::Entity::insert(recovery_counts::ActiveModel {
                launch_setting_id: Set(launch_setting),
                kind: Set(kind.to_owned()),
                count: Set(n),
            })
            .on_conflict(
                OnConflict::columns([
                    recovery_counts::Column::LaunchSettingId,
                    recovery_counts::Column::Kind,
                ])
                .value(
                    recovery_counts::Column::Count,
                    Expr::cust("recovery_counts.count + excluded.count"),
                )
                .to_owned(),
            )
            .exec_without_returning(db)
            .await?;
        }
        Ok(())
    }
}

/// Counts one recovery of `launch_setting` now, in the caller's transaction.
pub async fn count(
    db: &impl ConnectionTrait,
    launch_setting: &str,
    kind: &'static str,
) -> ServiceResult<()> {
    let mut t = Tally::default();
    t.add(launch_setting, kind);
    t.write(db).await
}

/// The counts of each named launch setting that has any, by kind.
pub async fn of_launch_settings(
    db: &impl ConnectionTrait,
    launch_settings: &[String],
) -> ServiceResult<HashMap<String, BTreeMap<String, i64>>> {
    let mut out: HashMap<String, BTreeMap<String, i64>> = HashMap::new();
    for chunk in launch_settings.chunks(500) {
        for r in recovery_counts::Entity::find()
            .filter(recovery_counts::Column::LaunchSettingId.is_in(chunk.iter().cloned()))
            .all(db)
            .await?
        {
            out.entry(r.launch_setting_id)
                .or_default()
                .insert(r.kind, r.count);
        }
    }
    Ok(out)
}

/// Every count, by launch setting and kind (for `/metrics`: one row per launch setting that
/// ever needed a recovery, times the kinds).
pub async fn all(db: &impl ConnectionTrait) -> ServiceResult<Vec<recovery_counts::Model>> {
    Ok(recovery_counts::Entity::find()
        .order_by_asc(recovery_counts::Column::LaunchSettingId)
        .order_by_asc(recovery_counts::Column::Kind)
        .all(db)
        .await?)
}
