//! How a stream launch setting is doing, for its page (docs/concepts.md, The dashboard): its
//! activation runs for days, so "last result" says nothing. Instead: what its running
//! activations processed and since when, failures by kind and dead letters over the last 5
//! minutes and the last hour, its last real failure and since when it fails.
//!
//! Each count reads one index range of one launch setting (`idx_failure_logs_ls_occurred_at`,
//! `idx_dead_letters_ls_received_at`), so a page costs the same with a million rows elsewhere.

use crate::{
    entity::{activation_hosts, activations, dead_letters, launch_settings},
    error::ServiceResult,
    failures::kinds,
    status,
};
use am_domain::{
    dashboard::failure_kind,
    failing::{StreamHealth, WindowCounts},
};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, PaginatorTrait, QueryFilter,
    QuerySelect, Statement,
};
use uuid::Uuid;

#[derive(Debug, FromQueryResult)]
struct KindRow {
    kind: String,
    n: i64,
}

pub(crate) async fn window(
    db: &impl ConnectionTrait,
    ls: &str,
    since: DateTime<Utc>,
) -> ServiceResult<WindowCounts> {
    let backend = db.get_database_backend();
    let (p1, p2) = match backend {
        sea_orm::DbBackend::Postgres => ("$1", "$2"),
        _ => ("?", "?"),
    };
    let stmt = Statement::from_sql_and_values(
        backend,
        format!(
            "SELECT kind, COUNT(*) AS n FROM failure_logs \
             WHERE launch_setting_id = {p1} AND occurred_at >= {p2} GROUP BY kind"
        ),
        [ls.into(), since.into()],
    );
    let mut out = WindowCounts::default();
    for r in KindRow::find_by_statement(stmt).all(db).await? {
        let n = u64::try_from(r.n).unwrap_or(0);
        match r.kind.as_str() {
            failure_kind::RETRIED => out.retried = n,
            failure_kind::UNAVAILABLE => out.unavailable = n,
            _ => out.failed += n,
        }
    }
    out.dead_lettered = dead_letters::Entity::find()
        .filter(dead_letters::Column::LaunchSettingId.eq(ls))
        .filter(dead_letters::Column::ReceivedAt.gte(since))
        .count(db)
        .await?;
    Ok(out)
}

/// The health of stream launch setting `ls` at `now`.
pub async fn of(
    db: &impl ConnectionTrait,
    ls: &str,
    now: DateTime<Utc>,
) -> ServiceResult<StreamHealth> {
    let running: Vec<Uuid> = activations::Entity::find()
        .select_only()
        .column(activations::Column::Id)
        .filter(activations::Column::LaunchSettingId.eq(ls))
        .filter(activations::Column::Status.eq(status::activation::RUNNING))
        .into_tuple()
        .all(db)
        .await?;
    let (mut processed, mut running_since) = (0, None::<DateTime<Utc>>);
    if !running.is_empty() {
        let runs: Vec<(i64, Option<DateTime<Utc>>)> = activation_hosts::Entity::find()
            .select_only()
            .columns([
                activation_hosts::Column::Processed,
                activation_hosts::Column::StartedAt,
            ])
            .filter(activation_hosts::Column::ActivationId.is_in(running))
            .into_tuple()
            .all(db)
            .await?;
        for (n, started) in runs {
            processed += n;
            running_since = match (running_since, started) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }
    let last_success: Option<Option<DateTime<Utc>>> = launch_settings::Entity::find_by_id(ls)
        .select_only()
        .column(launch_settings::Column::LastSuccessAt)
        .into_tuple()
        .one(db)
        .await?;
    let last = kinds::last_real(db, ls).await?;
    let failing_since = match &last {
        Some(_) => kinds::failing_since(db, ls, last_success.flatten()).await?,
        None => None,
    };
    Ok(StreamHealth {
        as_of: now,
        processed,
        running_since,
        last_5_min: window(db, ls, now - Duration::minutes(5)).await?,
        last_hour: window(db, ls, now - Duration::hours(1)).await?,
        last_failure: last.as_ref().map(kinds::last_failure),
        failing_since,
    })
}
