//! The scheduler's view of the schedule groups: which are due when, and what to do about fires
//! missed while no manager ran. The timers themselves live in the server.

use super::{Metrics, RuntimeConfig};
use crate::{entity::schedule_groups, error::ServiceResult};
use am_domain::{catalog::MisfirePolicy, schedule::Schedule};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    sea_query::Expr,
};
use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

/// An enabled group as the scheduler sees it.
#[derive(Debug, Clone)]
pub struct GroupSchedule {
    pub id: String,
    /// Shared by the groups with the same cron and time zone.
    pub schedule: Arc<Schedule>,
    pub misfire: MisfirePolicy,
    /// Fires after this instant are due: the last recorded fire, or the group's last change.
    pub since: DateTime<Utc>,
    /// Changes whenever what the timer depends on changes (cron, zone, policy).
    pub fingerprint: String,
}

/// Every enabled group with a valid schedule (the catalog validates cron expressions when
/// saved, so an invalid one here is only logged).
pub async fn load(db: &impl ConnectionTrait) -> ServiceResult<Vec<GroupSchedule>> {
    let rows = schedule_groups::Entity::find()
        .filter(schedule_groups::Column::Enabled.eq(true))
        .all(db)
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    // A parsed cron holds a 5 KB table of years: groups sharing a schedule share one parse.
    let mut parsed: HashMap<(String, String), Arc<Schedule>> = HashMap::new();
    for g in rows {
        let key = (g.cron.clone(), g.time_zone.clone());
        let schedule = match parsed.get(&key) {
            Some(s) => Arc::clone(s),
            None => match Schedule::parse(&g.cron, &g.time_zone) {
                Ok(s) => Arc::clone(parsed.entry(key).or_insert(Arc::new(s))),
                Err(e) => {
                    tracing::error!(group = %g.id, error = %e, "stored schedule is invalid; not scheduled");
                    continue;
                }
            },
        };
        let misfire = crate::catalog::rows::enum_from_str("misfire policy", &g.misfire_policy)
            .unwrap_or_default();
        let since = g.last_fire_at.map_or(g.updated_at, |f| f.max(g.updated_at));
        out.push(GroupSchedule {
            fingerprint: format!("{}|{}|{}", g.cron, g.time_zone, g.misfire_policy),
            id: g.id,
            schedule,
            misfire,
            since,
        });
    }
    Ok(out)
}

/// What to do at start-up (or when a group is loaded) about the fires since it was last due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatchUp {
    /// Nothing was missed.
    Nothing,
    /// Fire this (the latest missed) fire time now; `late` says it is a misfire beyond the
    /// threshold rather than a small lag.
    Fire { at: DateTime<Utc>, late: bool },
    /// Drop the missed fire time (policy `skip`).
    Skip { at: DateTime<Utc> },
}

/// At most this many missed fire times are walked to find the latest one (a per-second cron
/// missed for days); beyond it the latest found is used.
const MAX_WALK: usize = 1_000_000;

/// Pure: the catch-up decision for a group at `now`.
pub fn catch_up(
    schedule: &Schedule,
    misfire: MisfirePolicy,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    threshold: chrono::Duration,
) -> CatchUp {
    let latest = schedule
        .fire_times_after(since)
        .take(MAX_WALK)
        .take_while(|t| *t <= now)
        .last();
    match latest {
        None => CatchUp::Nothing,
        Some(at) if now - at <= threshold => CatchUp::Fire { at, late: false },
        Some(at) => match misfire {
            MisfirePolicy::FireOnceNow => CatchUp::Fire { at, late: true },
            MisfirePolicy::Skip => CatchUp::Skip { at },
        },
    }
}

/// Records a skipped misfire as the group's last fire, so it is not considered again, and
/// raises `schedule_missed` with it (once: the record is a compare-and-set).
pub async fn record_skip(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    group: &str,
    at: DateTime<Utc>,
) -> ServiceResult<()> {
    let txn = super::begin_write(db).await?;
    let recorded = schedule_groups::Entity::update_many()
        .col_expr(schedule_groups::Column::LastFireAt, Expr::value(Some(at)))
        .filter(schedule_groups::Column::Id.eq(group))
        .filter(
            Condition::any()
                .add(schedule_groups::Column::LastFireAt.is_null())
                .add(schedule_groups::Column::LastFireAt.lt(at)),
        )
        .exec(&txn)
        .await?;
    if recorded.rows_affected == 0 {
        return Ok(());
    }
    let now = Utc::now();
    crate::notifications::raise(
        &txn,
        crate::notifications::events::schedule_missed(group, at, now),
        now,
    )
    .await?;
    txn.commit().await?;
    Metrics::inc(&cfg.metrics.misfires_skipped);
    tracing::info!(%group, fire_time = %at, "missed fire skipped (misfire policy skip)");
    Ok(())
}

/// Stores the next fire times, for the pages.
pub async fn record_next_fires(
    db: &impl ConnectionTrait,
    next: &[(String, DateTime<Utc>)],
) -> ServiceResult<()> {
    let mut by_time: BTreeMap<DateTime<Utc>, Vec<String>> = BTreeMap::new();
    for (g, t) in next {
        by_time.entry(*t).or_default().push(g.clone());
    }
    for (t, ids) in by_time {
        for chunk in ids.chunks(super::CHUNK) {
            schedule_groups::Entity::update_many()
                .col_expr(schedule_groups::Column::NextFireAt, Expr::value(Some(t)))
                .filter(schedule_groups::Column::Id.is_in(chunk.iter().cloned()))
                .exec(db)
                .await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 29, h, m, s)
            .single()
            .expect("valid time")
    }

    fn every_minute() -> Schedule {
        Schedule::parse("0 * * * * *", "UTC").expect("valid schedule")
    }

    #[test]
    fn nothing_missed_when_no_fire_time_passed() {
        let r = catch_up(
            &every_minute(),
            MisfirePolicy::FireOnceNow,
            at(1, 0, 0),
            at(1, 0, 59),
            chrono::Duration::seconds(60),
        );
        assert_eq!(r, CatchUp::Nothing);
    }

    #[test]
    fn a_small_lag_just_fires_the_due_time() {
        let r = catch_up(
            &every_minute(),
            MisfirePolicy::Skip,
            at(1, 0, 0),
            at(1, 1, 5),
            chrono::Duration::seconds(60),
        );
        assert_eq!(
            r,
            CatchUp::Fire {
                at: at(1, 1, 0),
                late: false
            }
        );
    }

    #[test]
    fn a_long_outage_fires_once_the_latest_missed_time_or_skips_it() {
        let s = every_minute();
        let t = chrono::Duration::seconds(60);
        assert_eq!(
            catch_up(
                &s,
                MisfirePolicy::FireOnceNow,
                at(1, 0, 0),
                at(1, 30, 30),
                t
            ),
            CatchUp::Fire {
                at: at(1, 30, 0),
                late: false
            }
        );
        assert_eq!(
            catch_up(
                &s,
                MisfirePolicy::FireOnceNow,
                at(1, 0, 0),
                at(1, 32, 30),
                t
            ),
            CatchUp::Fire {
                at: at(1, 32, 0),
                late: false
            }
        );
        let hourly = Schedule::parse("0 0 * * * *", "Europe/Paris").expect("valid schedule");
        assert_eq!(
            catch_up(
                &hourly,
                MisfirePolicy::FireOnceNow,
                at(0, 30, 0),
                at(3, 30, 0),
                t
            ),
            CatchUp::Fire {
                at: at(3, 0, 0),
                late: true
            }
        );
        assert_eq!(
            catch_up(&hourly, MisfirePolicy::Skip, at(0, 30, 0), at(3, 30, 0), t),
            CatchUp::Skip { at: at(3, 0, 0) }
        );
    }
}
