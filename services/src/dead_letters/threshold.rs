//! `dead_letters_threshold` (docs/notifications.md): a launch setting's dead letters still
//! `dead` reached its `notify_threshold` with this batch. Counted before and after the batch in
//! its transaction, each count stopping at the threshold, so a launch setting with a hundred
//! thousand dead letters costs no more than one with ten; told again only once they fell below
//! it (a later batch crosses it again).

use super::DEAD;
use crate::{
    entity::{dead_letters, launch_settings},
    error::ServiceResult,
    notifications::{self, events},
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QuerySelect,
};
use std::collections::HashSet;

/// The launch settings of a batch that have a threshold, with their count before it.
pub(super) struct Watch(Vec<(String, u64, u64)>);

/// Dead letters of `ls` still dead, counted up to `cap`.
async fn dead_up_to(db: &impl ConnectionTrait, ls: &str, cap: u64) -> ServiceResult<u64> {
    Ok(dead_letters::Entity::find()
        .select_only()
        .column(dead_letters::Column::Id)
        .filter(dead_letters::Column::LaunchSettingId.eq(ls))
        .filter(dead_letters::Column::Status.eq(DEAD))
        .limit(cap)
        .count(db)
        .await?)
}

/// Before the batch is written: the thresholds of its launch settings and their counts.
pub(super) async fn watch(
    db: &impl ConnectionTrait,
    launch_settings: HashSet<String>,
) -> ServiceResult<Watch> {
    if launch_settings.is_empty() {
        return Ok(Watch(Vec::new()));
    }
    let rows: Vec<(String, Option<i32>)> = launch_settings::Entity::find()
        .select_only()
        .columns([
            launch_settings::Column::Id,
            launch_settings::Column::DeadLetterNotifyThreshold,
        ])
        .filter(launch_settings::Column::Id.is_in(launch_settings))
        .filter(launch_settings::Column::DeadLetterNotifyThreshold.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    let mut watched = Vec::with_capacity(rows.len());
    for (ls, threshold) in rows {
        let Some(threshold) = threshold
            .and_then(|t| u64::try_from(t).ok())
            .filter(|t| *t > 0)
        else {
            continue;
        };
        let before = dead_up_to(db, &ls, threshold).await?;
        watched.push((ls, threshold, before));
    }
    Ok(Watch(watched))
}

impl Watch {
    /// After the batch is written, in its transaction: raises the notice for each launch
    /// setting the batch took from below its threshold to it.
    pub(super) async fn raise_crossed(
        self,
        db: &impl ConnectionTrait,
        now: DateTime<Utc>,
    ) -> ServiceResult<()> {
        for (ls, threshold, before) in self.0 {
            if before >= threshold {
                continue;
            }
            let after = dead_up_to(db, &ls, threshold).await?;
            if after >= threshold {
                let notice = events::dead_letters_threshold(&ls, after, threshold, now);
                notifications::raise(db, notice, now).await?;
            }
        }
        Ok(())
    }
}
