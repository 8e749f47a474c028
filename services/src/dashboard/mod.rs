//! The dashboard's figures (docs/concepts.md, The dashboard) and the gauges `/metrics` exposes
//! from the database (docs/runtime.md, Metrics).
//!
//! Every statement reads one index range or counts one index range (shown by [`explain`] and
//! asserted in the tests), so a snapshot stays cheap with a million failure rows and is safe to
//! take every two seconds:
//! - runs by status: one count per status on `idx_activations_status_created_runs` (the
//!   activations without a parent: a group's run counts once, not again with its members; the
//!   finished ones limited to the window by `created_at`);
//! - the newest active runs: `idx_activations_status_created_runs` backwards, per status;
//! - dead letters: `idx_dead_letters_status_received_at` (status `dead`);
//! - failures: the window's range of `idx_failure_logs_occurred_at`, grouped by hour, kind
//!   (real, retried, unavailable: [`failure_kind`]) and error type (the live feed keeps the
//!   complete hours for a minute, see [`ChartCache`]); the last hour's range of it by kind, and
//!   by launch setting for the failing ones, whose last error, hosts and first failure since
//!   their last success read `idx_failure_logs_ls_occurred_at` (a handful of launch settings).

mod alarms;
mod attention;
mod plans;

pub use plans::explain;

use crate::{
    Principal,
    entity::{activation_hosts, activations, dead_letters, launch_settings, schedule_groups},
    error::ServiceResult,
    registry,
    runtime::RuntimeConfig,
    status,
};
use am_domain::{
    dashboard::{
        ChartRow, Dashboard, FailureChart, NodeLoad, RunningActivation, StatusCount, WINDOW_HOURS,
        failure_chart, failure_kind, hour_start,
    },
    read::nodes::NodeFilter,
    roles::Operation,
};
use attention::{disabled_groups, disabled_launch_settings, failing, failing_statement};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, FromQueryResult, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Statement,
};
use std::collections::HashMap;
use uuid::Uuid;

/// Active activations the dashboard lists (the total is given too).
pub const RUNNING_SHOWN: u64 = 20;
/// Disabled launch settings, and disabled groups, the dashboard lists.
pub const DISABLED_SHOWN: u64 = 50;

/// Statuses in the order the dashboard shows them.
const STATUSES: [(&str, bool); 7] = [
    (status::activation::WAITING, true),
    (status::activation::DISPATCHED, true),
    (status::activation::RUNNING, true),
    (status::activation::SUCCEEDED, false),
    (status::activation::FAILED, false),
    (status::activation::INTERRUPTED, false),
    (status::activation::SKIPPED, false),
];

/// The figures that are plain counts: what `/metrics` exposes as gauges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gauges {
    /// Every status: the active ones whatever their age, the finished ones created in the last
    /// [`WINDOW_HOURS`] hours.
    pub activations: Vec<StatusCount>,
    /// Active activations (`waiting`, `dispatched`, `running`).
    pub running: u64,
    /// Dead letters waiting for an operator.
    pub dead_letters: u64,
    pub disabled_launch_settings: u64,
    pub disabled_groups: u64,
    /// Real failures reported in the last 60 minutes (see [`failure_kind`]).
    pub failures_last_hour: u64,
    /// Failed attempts of the last 60 minutes whose message was sent to be tried again.
    pub retried_last_hour: u64,
    /// "Temporarily unavailable" answers of the last 60 minutes.
    pub unavailable_last_hour: u64,
    /// Notifications given up on.
    pub failed_notifications: u64,
}

pub(super) use crate::sql::count;

pub(super) use crate::sql::placeholder;

/// `status, n` of every status: one counted index range each, in one round trip.
fn status_counts_statement(backend: DbBackend, since: DateTime<Utc>) -> Statement {
    let mut text = String::new();
    let mut values = Vec::new();
    for (i, (s, active)) in STATUSES.iter().enumerate() {
        if i > 0 {
            text.push_str(" UNION ALL ");
        }
        text.push_str("SELECT ");
        placeholder(backend, &mut text, &mut values, (*s).into());
        // Runs, not rows: a group's run counts once, its members' runs not again.
        text.push_str(" AS status, COUNT(*) AS n FROM activations WHERE status = ");
        placeholder(backend, &mut text, &mut values, (*s).into());
        text.push_str(" AND parent_id IS NULL");
        if !active {
            text.push_str(" AND created_at >= ");
            placeholder(backend, &mut text, &mut values, since.into());
        }
    }
    Statement::from_sql_and_values(backend, text, values)
}

/// `hour, kind, error_type, n` of the failures in `[from, to)`, `hour` counted in hours since
/// the Unix epoch ([`crate::sql::epoch_bucket`]).
fn hourly_failures_statement(
    backend: DbBackend,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Statement {
    let hour = crate::sql::epoch_bucket(backend, "occurred_at", 3600);
    let mut text = format!(
        "SELECT {hour} AS hour, kind, error_type, COUNT(*) AS n FROM failure_logs \
         WHERE occurred_at >= "
    );
    let mut values = Vec::new();
    placeholder(backend, &mut text, &mut values, from.into());
    text.push_str(" AND occurred_at < ");
    placeholder(backend, &mut text, &mut values, to.into());
    text.push_str(" GROUP BY hour, kind, error_type");
    Statement::from_sql_and_values(backend, text, values)
}

/// `kind, n` of the failure reports since `since`.
fn kinds_statement(backend: DbBackend, since: DateTime<Utc>) -> Statement {
    let mut text =
        String::from("SELECT kind, COUNT(*) AS n FROM failure_logs WHERE occurred_at >= ");
    let mut values = Vec::new();
    placeholder(backend, &mut text, &mut values, since.into());
    text.push_str(" GROUP BY kind");
    Statement::from_sql_and_values(backend, text, values)
}

#[derive(Debug, FromQueryResult)]
struct StatusRow {
    status: String,
    n: i64,
}

#[derive(Debug, FromQueryResult)]
struct HourRow {
    hour: i64,
    kind: String,
    error_type: String,
    n: i64,
}

#[derive(Debug, FromQueryResult)]
struct KindRow {
    kind: String,
    n: i64,
}

/// The window of the failure chart: from the start of the hour 23 hours before `now`'s to the
/// end of `now`'s hour.
fn chart_window(now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    let current = hour_start(now);
    (
        current - Duration::hours(WINDOW_HOURS - 1),
        current + Duration::hours(1),
    )
}

/// The counts `/metrics` exposes and the dashboard shows.
#[tracing::instrument(skip_all)]
pub async fn gauges(db: &impl ConnectionTrait, now: DateTime<Utc>) -> ServiceResult<Gauges> {
    let backend = db.get_database_backend();
    let since = now - Duration::hours(WINDOW_HOURS);
    let counted: HashMap<String, u64> =
        StatusRow::find_by_statement(status_counts_statement(backend, since))
            .all(db)
            .await?
            .into_iter()
            .map(|r| (r.status, count(r.n)))
            .collect();
    let activations: Vec<StatusCount> = STATUSES
        .iter()
        .map(|(s, active)| StatusCount {
            status: (*s).to_owned(),
            count: counted.get(*s).copied().unwrap_or(0),
            active: *active,
        })
        .collect();
    let running = activations
        .iter()
        .filter(|c| c.active)
        .map(|c| c.count)
        .sum();
    let dead_letters = dead_letters::Entity::find()
        .filter(dead_letters::Column::Status.eq(crate::dead_letters::DEAD))
        .count(db)
        .await?;
    let disabled_launch_settings = launch_settings::Entity::find()
        .filter(launch_settings::Column::Enabled.eq(false))
        .count(db)
        .await?;
    let disabled_groups = schedule_groups::Entity::find()
        .filter(schedule_groups::Column::Enabled.eq(false))
        .count(db)
        .await?;
    let kinds: HashMap<String, u64> =
        KindRow::find_by_statement(kinds_statement(backend, now - Duration::hours(1)))
            .all(db)
            .await?
            .into_iter()
            .map(|r| (r.kind, count(r.n)))
            .collect();
    let of_kind = |k: &str| kinds.get(k).copied().unwrap_or(0);
    Ok(Gauges {
        activations,
        running,
        dead_letters,
        disabled_launch_settings,
        disabled_groups,
        failures_last_hour: of_kind(failure_kind::FAILED),
        retried_last_hour: of_kind(failure_kind::RETRIED),
        unavailable_last_hour: of_kind(failure_kind::UNAVAILABLE),
        failed_notifications: crate::notifications::failed_count(db).await?,
    })
}

/// The newest active runs (a group's run once, not again with its members), at most
/// [`RUNNING_SHOWN`], with the hosts they run on; a group's run with its member running now.
async fn running(db: &impl ConnectionTrait) -> ServiceResult<Vec<RunningActivation>> {
    // One index range per status, read backwards from the newest: an `IN` over the statuses
    // with one `ORDER BY` would walk every activation ever created by `created_at`.
    let mut rows = Vec::new();
    for s in status::activation::ACTIVE {
        rows.extend(
            activations::Entity::find()
                .filter(activations::Column::Status.eq(s))
                .filter(activations::Column::ParentId.is_null())
                .order_by_desc(activations::Column::CreatedAt)
                .limit(RUNNING_SHOWN)
                .all(db)
                .await?,
        );
    }
    rows.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    rows.truncate(usize::try_from(RUNNING_SHOWN).unwrap_or(usize::MAX));
    // The member each group run is at: the hosts of the group run are its member's.
    let groups: Vec<Uuid> = rows
        .iter()
        .filter(|a| a.launch_setting_id.is_none())
        .map(|a| a.id)
        .collect();
    let mut members: HashMap<Uuid, (Uuid, Option<String>)> = HashMap::new();
    if !groups.is_empty() {
        let active: Vec<(Uuid, Uuid, Option<String>)> = activations::Entity::find()
            .select_only()
            .columns([
                activations::Column::ParentId,
                activations::Column::Id,
                activations::Column::LaunchSettingId,
            ])
            .filter(activations::Column::ParentId.is_in(groups))
            .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
            .order_by_asc(activations::Column::Position)
            .into_tuple()
            .all(db)
            .await?;
        for (parent, id, ls) in active {
            members.entry(parent).or_insert((id, ls));
        }
    }
    let ids: Vec<Uuid> = rows
        .iter()
        .map(|a| members.get(&a.id).map_or(a.id, |(m, _)| *m))
        .collect();
    let mut hosts: HashMap<Uuid, Vec<String>> = HashMap::new();
    if !ids.is_empty() {
        let dispatched: Vec<(Uuid, String)> = activation_hosts::Entity::find()
            .select_only()
            .columns([
                activation_hosts::Column::ActivationId,
                activation_hosts::Column::Host,
            ])
            .filter(activation_hosts::Column::ActivationId.is_in(ids))
            .filter(activation_hosts::Column::Status.is_in(status::host::ACTIVE))
            .order_by_asc(activation_hosts::Column::Host)
            .into_tuple()
            .all(db)
            .await?;
        for (a, h) in dispatched {
            let list = hosts.entry(a).or_default();
            if !list.contains(&h) {
                list.push(h);
            }
        }
    }
    Ok(rows
        .into_iter()
        .map(|a| {
            let member = members.remove(&a.id);
            let runs_on = member.as_ref().map_or(a.id, |(m, _)| *m);
            RunningActivation {
                hosts: hosts.remove(&runs_on).unwrap_or_default(),
                member: member.and_then(|(_, ls)| ls),
                id: a.id.to_string(),
                launch_setting: a.launch_setting_id,
                group: a.group_id,
                application: a.application_id,
                status: a.status,
                created_at: a.created_at,
                started_at: a.started_at,
            }
        })
        .collect())
}

type HourRows = Vec<ChartRow>;

/// The failures in `[from, to)` counted by hour, kind and error type.
async fn hourly_failures(
    db: &impl ConnectionTrait,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> ServiceResult<HourRows> {
    let stmt = hourly_failures_statement(db.get_database_backend(), from, to);
    Ok(HourRow::find_by_statement(stmt)
        .all(db)
        .await?
        .into_iter()
        .filter_map(|r| {
            Some(ChartRow {
                start: DateTime::from_timestamp(r.hour.checked_mul(3600)?, 0)?,
                kind: r.kind,
                error_type: r.error_type,
                count: count(r.n),
            })
        })
        .collect())
}

/// Failures per hour over the last [`WINDOW_HOURS`] hours, by kind and error type.
pub async fn failures_per_hour(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
) -> ServiceResult<FailureChart> {
    let (from, to) = chart_window(now);
    Ok(failure_chart(now, &hourly_failures(db, from, to).await?))
}

/// How long the counts of the chart's complete hours are reused before they are read again.
pub const COMPLETE_HOURS_KEPT: Duration = Duration::seconds(60);

/// The counts of the chart's complete hours, kept between the snapshots of the live feed.
///
/// Grouping a day of failures is the one expensive read of a snapshot: with a million failures
/// in the last 24 hours it takes a second or more (see `docs/benchmarks.md`), too much every two
/// seconds. New failures land in the current hour, which every snapshot reads; the complete
/// hours change only by late reports (a node that could not reach the broker) and the retention
/// job, so they are read again once [`COMPLETE_HOURS_KEPT`] passed or the hour turned.
#[derive(Debug, Default)]
pub struct ChartCache {
    kept: std::sync::Mutex<Option<KeptHours>>,
}

#[derive(Debug)]
struct KeptHours {
    from: DateTime<Utc>,
    read_at: DateTime<Utc>,
    rows: HourRows,
}

impl ChartCache {
    fn get(&self, from: DateTime<Utc>, now: DateTime<Utc>) -> Option<HourRows> {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.as_ref()
            .filter(|k| k.from == from && now - k.read_at < COMPLETE_HOURS_KEPT && k.read_at <= now)
            .map(|k| k.rows.clone())
    }

    fn put(&self, from: DateTime<Utc>, now: DateTime<Utc>, rows: HourRows) {
        *self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(KeptHours {
            from,
            read_at: now,
            rows,
        });
    }
}

/// [`failures_per_hour`] reading only the current hour when `cache` holds the complete ones.
pub async fn failures_per_hour_cached(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    cache: &ChartCache,
) -> ServiceResult<FailureChart> {
    let (from, to) = chart_window(now);
    let current = hour_start(now);
    let mut rows = match cache.get(from, now) {
        Some(rows) => rows,
        None => {
            let rows = hourly_failures(db, from, current).await?;
            cache.put(from, now, rows.clone());
            rows
        }
    };
    rows.extend(hourly_failures(db, current, to).await?);
    Ok(failure_chart(now, &rows))
}

/// `dashboard` with what waits in the broker, from this replica's last sample.
/// The dashboard `d` with what this replica knows of the broker: the backlog it last sampled
/// and the broker's alarms (no connection, objects that differ from what was applied), most
/// urgent first.
pub async fn with_broker(mut d: Dashboard, s: &crate::Services) -> ServiceResult<Dashboard> {
    let depths = s
        .broker_depths
        .read()
        .map(|d| d.clone())
        .unwrap_or_default();
    d.backlog = depths.summary();
    let mut alarms = alarms::of_broker(s, &depths).await?;
    alarms.append(&mut d.alarms);
    d.alarms = alarms;
    Ok(d)
}

/// Everything the dashboard shows at `now` but what this replica knows of the broker
/// ([`with_broker`]).
pub async fn snapshot(
    db: &impl ConnectionTrait,
    actor: &Principal,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
) -> ServiceResult<Dashboard> {
    take(db, actor, cfg, now, None).await
}

/// [`snapshot`] for a caller that takes one every few seconds: the chart's complete hours come
/// from `cache` (see [`ChartCache`]).
pub async fn snapshot_cached(
    db: &impl ConnectionTrait,
    actor: &Principal,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
    cache: &ChartCache,
) -> ServiceResult<Dashboard> {
    take(db, actor, cfg, now, Some(cache)).await
}

#[tracing::instrument(skip_all)]
async fn take(
    db: &impl ConnectionTrait,
    actor: &Principal,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
    cache: Option<&ChartCache>,
) -> ServiceResult<Dashboard> {
    actor.require(Operation::Read)?;
    let g = gauges(db, now).await?;
    let nodes = registry::list(db, actor, &NodeFilter::default(), now, cfg.node_timeout)
        .await?
        .into_iter()
        .map(|n| NodeLoad {
            application: n.application,
            host: n.host,
            running: n.running,
            capacity: n.capacity,
            load: n.load,
            last_heartbeat_at: n.last_heartbeat_at,
        })
        .collect();
    let failures_per_hour = match cache {
        Some(c) => failures_per_hour_cached(db, now, c).await?,
        None => failures_per_hour(db, now).await?,
    };
    let (failing, failing_total) = failing(db, now).await?;
    Ok(Dashboard {
        generated_at: now,
        running: running(db).await?,
        running_total: g.running,
        activations: g.activations,
        nodes,
        dead_letters: g.dead_letters,
        disabled_launch_settings: disabled_launch_settings(db).await?,
        disabled_launch_settings_total: g.disabled_launch_settings,
        disabled_groups: disabled_groups(db).await?,
        disabled_groups_total: g.disabled_groups,
        failures_last_hour: g.failures_last_hour,
        retried_last_hour: g.retried_last_hour,
        unavailable_last_hour: g.unavailable_last_hour,
        failed_notifications: g.failed_notifications,
        failures_per_hour,
        throughput: crate::throughput::overall(db, now).await?,
        failing,
        failing_total,
        // The caller's replica samples the broker; see `with_broker`.
        backlog: Default::default(),
        alarms: alarms::of_database(db, now, g.failed_notifications).await?,
        needs_data_queue: registry::agents_needing_data_queue(db, actor)
            .await?
            .into_iter()
            .map(|(application, agent)| format!("{application}/{agent}"))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_follow_the_backend() {
        let t = DateTime::from_timestamp(7200, 0).unwrap_or_default();
        let pg = status_counts_statement(DbBackend::Postgres, t);
        assert!(pg.sql.contains("status = $2"), "{}", pg.sql);
        assert!(pg.sql.contains("created_at >= $12"), "{}", pg.sql);
        assert_eq!(pg.values.map(|v| v.0.len()), Some(7 * 2 + 4));
        let lite = hourly_failures_statement(DbBackend::Sqlite, t, t);
        assert!(
            lite.sql.ends_with(
                "WHERE occurred_at >= ? AND occurred_at < ? GROUP BY hour, kind, error_type"
            ),
            "{}",
            lite.sql
        );
        let failing = failing_statement(DbBackend::Postgres, t);
        assert!(
            failing.sql.contains("occurred_at >= $1") && failing.sql.contains("kind = $2"),
            "{}",
            failing.sql
        );
    }

    #[test]
    fn the_chart_window_is_whole_hours() {
        let now = DateTime::from_timestamp(10 * 3600 + 125, 0).unwrap_or_default();
        let (from, to) = chart_window(now);
        assert_eq!(from.timestamp(), (10 - 23) * 3600);
        assert_eq!(to.timestamp(), 11 * 3600);
    }
}
