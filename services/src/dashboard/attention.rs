//! What needs the on-call operator, for the dashboard's top: the disabled launch settings and
//! groups (who, when, why, the tripping activation) and the launch settings failing now (last
//! real error, hosts, since when).

use super::{DISABLED_SHOWN, count, placeholder};
use crate::{
    entity::{failure_logs, launch_settings, schedule_groups},
    error::ServiceResult,
    failures::kinds,
};
use am_domain::dashboard::{Disabled, FAILING_SHOWN, Failing, MESSAGE_SHOWN, cut, failure_kind};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, FromQueryResult, QueryFilter, QueryOrder,
    QuerySelect, Statement,
    sea_query::{NullOrdering, Order},
};
use std::collections::HashMap;
use uuid::Uuid;

type DisabledRow = (
    String,
    String,
    Option<String>,
    Option<DateTime<Utc>>,
    Option<String>,
    Option<Uuid>,
);

fn disabled(rows: Vec<DisabledRow>) -> Vec<Disabled> {
    rows.into_iter()
        .map(
            |(id, application, reason, disabled_at, by, activation)| Disabled {
                id,
                application,
                reason,
                disabled_at,
                by,
                activation: activation.map(|a| a.to_string()),
            },
        )
        .collect()
}

/// The most recently disabled launch settings first.
pub(super) async fn disabled_launch_settings(
    db: &impl ConnectionTrait,
) -> ServiceResult<Vec<Disabled>> {
    use launch_settings::Column as C;
    let rows = launch_settings::Entity::find()
        .select_only()
        .columns([
            C::Id,
            C::ApplicationId,
            C::DisabledReason,
            C::DisabledAt,
            C::DisabledBy,
            C::DisabledActivation,
        ])
        .filter(C::Enabled.eq(false))
        // Both backends put rows never stamped last (PostgreSQL would put them first).
        .order_by_with_nulls(C::DisabledAt, Order::Desc, NullOrdering::Last)
        .order_by_asc(C::Id)
        .limit(DISABLED_SHOWN)
        .into_tuple()
        .all(db)
        .await?;
    Ok(disabled(rows))
}

/// The most recently disabled groups first.
pub(super) async fn disabled_groups(db: &impl ConnectionTrait) -> ServiceResult<Vec<Disabled>> {
    use schedule_groups::Column as C;
    let rows = schedule_groups::Entity::find()
        .select_only()
        .columns([
            C::Id,
            C::ApplicationId,
            C::DisabledReason,
            C::DisabledAt,
            C::DisabledBy,
            C::DisabledActivation,
        ])
        .filter(C::Enabled.eq(false))
        .order_by_with_nulls(C::DisabledAt, Order::Desc, NullOrdering::Last)
        .order_by_asc(C::Id)
        .limit(DISABLED_SHOWN)
        .into_tuple()
        .all(db)
        .await?;
    Ok(disabled(rows))
}

#[derive(Debug, FromQueryResult)]
struct FailingRow {
    launch_setting: String,
    n: i64,
    last_at: DateTime<Utc>,
}

/// `launch_setting, n, last_at` of the launch settings with real failures since `since`.
pub(super) fn failing_statement(backend: DbBackend, since: DateTime<Utc>) -> Statement {
    // SQLite would rather walk a whole index in launch-setting order (to group without sorting)
    // than read the last hour's range: told which index to use, it reads only the range.
    let table = match backend {
        DbBackend::Sqlite => "failure_logs INDEXED BY idx_failure_logs_occurred_at",
        _ => "failure_logs",
    };
    let mut text = format!(
        "SELECT launch_setting_id AS launch_setting, COUNT(*) AS n, MAX(occurred_at) AS last_at \
         FROM {table} WHERE occurred_at >= "
    );
    let mut values = Vec::new();
    placeholder(backend, &mut text, &mut values, since.into());
    // The same rule as `kinds::real_failures`.
    text.push_str(" AND kind = ");
    placeholder(backend, &mut text, &mut values, failure_kind::FAILED.into());
    text.push_str(" GROUP BY launch_setting_id");
    Statement::from_sql_and_values(backend, text, values)
}

/// The launch settings with real failures in the hour before `now`, the most recently failing
/// first (at most [`FAILING_SHOWN`]), each with its last error, its hosts and since when it
/// fails; and how many there are in all.
pub(super) async fn failing(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> ServiceResult<(Vec<Failing>, u64)> {
    use failure_logs::Column as F;
    let since = now - Duration::hours(1);
    let mut rows =
        FailingRow::find_by_statement(failing_statement(db.get_database_backend(), since))
            .all(db)
            .await?;
    let total = rows.len() as u64;
    rows.sort_by(|a, b| {
        b.last_at
            .cmp(&a.last_at)
            .then_with(|| a.launch_setting.cmp(&b.launch_setting))
    });
    rows.truncate(usize::try_from(FAILING_SHOWN).unwrap_or(usize::MAX));
    let ids: Vec<String> = rows.iter().map(|r| r.launch_setting.clone()).collect();
    let catalog: HashMap<String, (String, Option<DateTime<Utc>>)> = launch_settings::Entity::find()
        .select_only()
        .columns([
            launch_settings::Column::Id,
            launch_settings::Column::ApplicationId,
            launch_settings::Column::LastSuccessAt,
        ])
        .filter(launch_settings::Column::Id.is_in(ids))
        .into_tuple::<(String, String, Option<DateTime<Utc>>)>()
        .all(db)
        .await?
        .into_iter()
        .map(|(id, app, success)| (id, (app, success)))
        .collect();
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let Some(last) = kinds::last_real(db, &r.launch_setting).await? else {
            continue;
        };
        let hosts: Vec<String> = failure_logs::Entity::find()
            .filter(F::LaunchSettingId.eq(r.launch_setting.as_str()))
            .filter(kinds::real_failures())
            .filter(F::OccurredAt.gte(since))
            .select_only()
            .column(F::Host)
            .distinct()
            .order_by_asc(F::Host)
            .into_tuple()
            .all(db)
            .await?;
        let (application, last_success) = catalog
            .get(&r.launch_setting)
            .cloned()
            .map_or((None, None), |(a, s)| (Some(a), s));
        let failing_since = kinds::failing_since(db, &r.launch_setting, last_success).await?;
        out.push(Failing {
            application,
            failures: count(r.n),
            hosts,
            last_error_type: last.error_type,
            last_message: cut(&last.message, MESSAGE_SHOWN),
            last_host: last.host,
            last_activation: last.activation_id.to_string(),
            last_at: last.occurred_at,
            failing_since: failing_since.unwrap_or(last.occurred_at),
            launch_setting: r.launch_setting,
        });
    }
    Ok((out, total))
}
