//! The dead man's switch of schedule groups (docs/notifications.md, `schedule_missed`): a group
//! with `expect_success_within` whose runs have not succeeded for that long is told once, until
//! a run succeeds again (or it is enabled again). It catches what no failure report can: a
//! group nobody fires, a pool with no live node, a node that never answers.

use crate::{
    entity::schedule_groups,
    error::ServiceResult,
    notifications::{self, events},
    runtime::begin_write,
};
use am_domain::HumanDuration;
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, sea_query::Expr};

/// Since when a group has been silent: its last success, or since it is watched (created or
/// enabled again), whichever is later.
fn silent_since(g: &schedule_groups::Model) -> DateTime<Utc> {
    [g.last_success_at, g.watch_from]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(g.created_at)
}

/// Whether the group's silence is due to be told: longer than its window, and not told since
/// it began.
fn due(g: &schedule_groups::Model, now: DateTime<Utc>) -> Option<(DateTime<Utc>, HumanDuration)> {
    let window = u64::try_from(g.expect_success_within_ms?).ok()?;
    let since = silent_since(g);
    let over = now - since >= chrono::Duration::milliseconds(i64::try_from(window).ok()?);
    let told = g.silence_told_at.is_some_and(|t| t >= since);
    (g.enabled && over && !told).then_some((
        since,
        HumanDuration::from(std::time::Duration::from_millis(window)),
    ))
}

/// Tells every enabled group whose runs have not succeeded within its window, each once per
/// silence: the told time is set by compare-and-set in the notice's transaction, so replicas
/// tell it once between them. A pass reads every watched group, so the server runs it every
/// few seconds rather than on every watchdog pass (a window is at least a minute).
pub async fn silent_groups(db: &DatabaseConnection, now: DateTime<Utc>) -> ServiceResult<()> {
    let watched = schedule_groups::Entity::find()
        .filter(schedule_groups::Column::Enabled.eq(true))
        .filter(schedule_groups::Column::ExpectSuccessWithinMs.is_not_null())
        .all(db)
        .await?;
    for g in watched {
        let Some((since, window)) = due(&g, now) else {
            continue;
        };
        let txn = begin_write(db).await?;
        let told_before = match g.silence_told_at {
            Some(t) => schedule_groups::Column::SilenceToldAt.eq(t),
            None => schedule_groups::Column::SilenceToldAt.is_null(),
        };
        let claimed = schedule_groups::Entity::update_many()
            .col_expr(
                schedule_groups::Column::SilenceToldAt,
                Expr::value(Some(now)),
            )
            .filter(schedule_groups::Column::Id.eq(g.id.as_str()))
            .filter(told_before)
            .exec(&txn)
            .await?
            .rows_affected
            == 1;
        if claimed {
            tracing::warn!(group = %g.id, %since, %window, "no run of the group succeeded within its window");
            notifications::raise(&txn, events::no_success(&g.id, since, window, now), now).await?;
        }
        txn.commit().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 25, h, 0, 0)
            .single()
            .expect("valid time")
    }

    fn group() -> schedule_groups::Model {
        schedule_groups::Model {
            id: "nightly".into(),
            title: String::new(),
            application_id: "billing".into(),
            cron: "0 2 * * *".into(),
            time_zone: "UTC".into(),
            misfire_policy: "fire-once-now".into(),
            enabled: true,
            continue_on_failure: false,
            current_status: "waiting".into(),
            last_result: None,
            last_result_at: None,
            last_fire_at: None,
            next_fire_at: None,
            disabled_reason: None,
            disabled_at: None,
            disabled_by: None,
            disabled_activation: None,
            expect_success_within_ms: Some(3 * 3_600_000),
            last_success_at: None,
            watch_from: Some(at(1)),
            silence_told_at: None,
            webhook_url: None,
            webhook_secret: None,
            webhook_format: "json".into(),
            notify_email: None,
            webhook_events: None,
            email_events: None,
            created_at: at(0),
            updated_at: at(0),
        }
    }

    #[test]
    fn a_group_is_told_once_its_window_passed_without_a_success() {
        let g = group();
        assert!(due(&g, at(3)).is_none(), "2 h watched, window 3 h");
        assert_eq!(due(&g, at(4)).map(|d| d.0), Some(at(1)));
    }

    #[test]
    fn a_success_restarts_the_window_and_a_told_silence_is_not_told_again() {
        let mut g = group();
        g.last_success_at = Some(at(2));
        assert!(due(&g, at(4)).is_none());
        assert!(due(&g, at(5)).is_some());
        g.silence_told_at = Some(at(5));
        assert!(due(&g, at(9)).is_none(), "told for this silence");
        g.last_success_at = Some(at(6));
        assert!(due(&g, at(9)).is_some(), "a new silence after a success");
    }

    #[test]
    fn a_disabled_group_or_one_without_a_window_is_not_watched() {
        let mut g = group();
        g.enabled = false;
        assert!(due(&g, at(9)).is_none());
        let mut g = group();
        g.expect_success_within_ms = None;
        assert!(due(&g, at(9)).is_none());
    }
}
