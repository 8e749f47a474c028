//! The per-minute figures of the charts of the last hour ([`am_domain::throughput`]): what the
//! nodes processed, written as their reports are applied (in the report batch's transaction,
//! so a batch delivered twice adds nothing the second time: the counters it carries equal the
//! stored ones); the backlog, written as a replica samples the broker; the failures, read from
//! the failure logs the drill-down lists.
//!
//! Reads are one index range each: `pk_throughput_minutes` for a launch setting,
//! `idx_throughput_minutes_minute` for all of them, `idx_failure_logs_ls_occurred_at` and
//! `idx_failure_logs_occurred_at` for the failures.

use crate::{
    Principal,
    entity::{activation_hosts, agents, launch_settings, throughput_minutes as tm},
    error::{ServiceError, ServiceResult},
    sql::{count, epoch_bucket, placeholder},
};
use am_domain::{
    read::depths::Depths,
    roles::Operation,
    throughput::{BROKER_SCOPE, Throughput, minute_start, window},
};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ActiveValue::Set,
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, FromQueryResult, PaginatorTrait,
    QueryFilter, QuerySelect, Statement,
    sea_query::{Expr, OnConflict},
};
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

/// How long per-minute rows are kept: the charts show one hour, the rest is slack for a
/// manager that was down and for reading a recent incident back through the API.
pub const KEPT_FOR: Duration = Duration::hours(24);

/// Rows written per statement.
const CHUNK: usize = 200;

/// What the processed counters of each launch setting's runs grew by within one batch of
/// reports.
#[derive(Debug, Default)]
pub(crate) struct Grown(BTreeMap<String, u64>);

impl Grown {
    /// Notes how much the counters `reported` (activation → messages processed) add to those
    /// stored in the rows of launch setting `ls` that `rows` selects, which the caller then
    /// overwrites. A counter lower than the stored one (an older heartbeat arriving late) adds
    /// nothing.
    pub(crate) async fn observe(
        &mut self,
        db: &impl ConnectionTrait,
        ls: &str,
        rows: Condition,
        reported: &HashMap<Uuid, u64>,
    ) -> ServiceResult<()> {
        if reported.is_empty() {
            return Ok(());
        }
        let stored: Vec<(Uuid, i64)> = activation_hosts::Entity::find()
            .select_only()
            .column(activation_hosts::Column::ActivationId)
            .column(activation_hosts::Column::Processed)
            .filter(rows)
            .into_tuple()
            .all(db)
            .await?;
        let grown: u64 = stored
            .into_iter()
            .filter_map(|(id, before)| {
                let now = *reported.get(&id)?;
                Some(now.saturating_sub(u64::try_from(before).unwrap_or(0)))
            })
            .sum();
        if grown > 0 {
            *self.0.entry(ls.to_owned()).or_default() += grown;
        }
        Ok(())
    }

    /// Adds the growth to `now`'s minute of each launch setting.
    pub(crate) async fn write(
        self,
        db: &impl ConnectionTrait,
        now: DateTime<Utc>,
    ) -> ServiceResult<()> {
        let minute = minute_start(now);
        let rows: Vec<tm::ActiveModel> = self
            .0
            .into_iter()
            .map(|(scope, n)| tm::ActiveModel {
                scope: Set(scope),
                minute: Set(minute),
                processed: Set(i64::try_from(n).unwrap_or(i64::MAX)),
                backlog: Set(None),
            })
            .collect();
        upsert(
            db,
            rows,
            tm::Column::Processed,
            "throughput_minutes.processed + excluded.processed",
        )
        .await
    }
}

/// Inserts `rows`, a chunk per statement; a row whose minute of its scope is already there
/// sets `column` to `merged` (SQL over the stored row and `excluded`, the new one) instead.
async fn upsert(
    db: &impl ConnectionTrait,
    rows: Vec<tm::ActiveModel>,
    column: tm::Column,
    merged: &'static str,
) -> ServiceResult<()> {
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<_> = rows.by_ref().take(CHUNK).collect();
        tm::Entity::insert_many(chunk)
            .on_conflict(
                OnConflict::columns([tm::Column::Scope, tm::Column::Minute])
                    .value(column, Expr::cust(merged))
                    .to_owned(),
            )
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

/// Records the backlog of one broker sample in `at`'s minute, where it stays if it is the most
/// the minute's samples found (replicas sample the same broker; a minute keeps its peak, so a
/// backlog that drained in it still shows): for each launch setting whose queue (its own
/// subscription or its data queue's shared queue) was sampled, and the total under
/// [`BROKER_SCOPE`]. Then deletes the rows older than [`KEPT_FOR`].
#[tracing::instrument(skip_all, fields(queues = depths.queues.len()))]
pub async fn record_backlogs(
    db: &impl ConnectionTrait,
    depths: &Depths,
    at: DateTime<Utc>,
) -> ServiceResult<()> {
    let minute = minute_start(at);
    let settings: Vec<(String, String, String)> = launch_settings::Entity::find()
        .select_only()
        .columns([
            launch_settings::Column::Id,
            launch_settings::Column::ApplicationId,
            launch_settings::Column::AgentId,
        ])
        .into_tuple()
        .all(db)
        .await?;
    let data_queues: HashMap<(String, String), String> = agents::Entity::find()
        .select_only()
        .columns([
            agents::Column::ApplicationId,
            agents::Column::Id,
            agents::Column::DataQueueId,
        ])
        .filter(agents::Column::DataQueueId.is_not_null())
        .into_tuple::<(String, String, Option<String>)>()
        .all(db)
        .await?
        .into_iter()
        .filter_map(|(app, agent, dq)| Some(((app, agent), dq?)))
        .collect();
    let row = |scope: String, ready: u64| tm::ActiveModel {
        scope: Set(scope),
        minute: Set(minute),
        processed: Set(0),
        backlog: Set(Some(i64::try_from(ready).unwrap_or(i64::MAX))),
    };
    let mut rows = vec![row(BROKER_SCOPE.to_owned(), depths.summary().ready)];
    for (ls, application, agent) in settings {
        let data_queue = data_queues.get(&(application, agent)).map(String::as_str);
        if let Some(b) = depths.backlog_of(&ls, data_queue) {
            rows.push(row(ls, u64::from(b.ready)));
        }
    }
    upsert(
        db,
        rows,
        tm::Column::Backlog,
        "CASE WHEN throughput_minutes.backlog IS NULL \
         OR excluded.backlog > throughput_minutes.backlog \
         THEN excluded.backlog ELSE throughput_minutes.backlog END",
    )
    .await?;
    tm::Entity::delete_many()
        .filter(tm::Column::Minute.lt(minute - KEPT_FOR))
        .exec(db)
        .await?;
    Ok(())
}

#[derive(Debug, FromQueryResult)]
struct SampleRow {
    minute: DateTime<Utc>,
    processed: i64,
    backlog: Option<i64>,
}

#[derive(Debug, FromQueryResult)]
struct FailureRow {
    minute: i64,
    kind: String,
    n: i64,
}

/// `minute, kind, n` of the failure reports in the window, of launch setting `ls` or of all.
fn failures_statement(
    backend: sea_orm::DbBackend,
    ls: Option<&str>,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
) -> Statement {
    let minute = epoch_bucket(backend, "occurred_at", 60);
    let mut text =
        format!("SELECT {minute} AS minute, kind, COUNT(*) AS n FROM failure_logs WHERE ");
    let mut values = Vec::new();
    if let Some(ls) = ls {
        text.push_str("launch_setting_id = ");
        placeholder(backend, &mut text, &mut values, ls.into());
        text.push_str(" AND ");
    }
    text.push_str("occurred_at >= ");
    placeholder(backend, &mut text, &mut values, from.into());
    text.push_str(" AND occurred_at < ");
    placeholder(backend, &mut text, &mut values, to.into());
    text.push_str(" GROUP BY minute, kind");
    Statement::from_sql_and_values(backend, text, values)
}

/// The window's samples of every launch setting, summed per minute, with the broker's total
/// backlog.
fn overall_samples_statement(backend: sea_orm::DbBackend, from: DateTime<Utc>) -> Statement {
    let mut text = String::from(
        "SELECT minute, CAST(SUM(processed) AS BIGINT) AS processed, \
         MAX(CASE WHEN scope = ",
    );
    let mut values = Vec::new();
    placeholder(backend, &mut text, &mut values, BROKER_SCOPE.into());
    text.push_str(" THEN backlog END) AS backlog FROM throughput_minutes WHERE minute >= ");
    placeholder(backend, &mut text, &mut values, from.into());
    text.push_str(" GROUP BY minute");
    Statement::from_sql_and_values(backend, text, values)
}

async fn failures(
    db: &impl ConnectionTrait,
    ls: Option<&str>,
    now: DateTime<Utc>,
) -> ServiceResult<Vec<(DateTime<Utc>, String, u64)>> {
    let stmt = failures_statement(db.get_database_backend(), ls, window(now));
    Ok(FailureRow::find_by_statement(stmt)
        .all(db)
        .await?
        .into_iter()
        .filter_map(|r| {
            let start = DateTime::from_timestamp(r.minute.checked_mul(60)?, 0)?;
            Some((start, r.kind, count(r.n)))
        })
        .collect())
}

fn assemble(
    now: DateTime<Utc>,
    samples: Vec<SampleRow>,
    failures: &[(DateTime<Utc>, String, u64)],
) -> Throughput {
    Throughput::assemble(
        now,
        samples
            .into_iter()
            .map(|s| (s.minute, count(s.processed), s.backlog.map(count))),
        failures.iter().map(|(t, k, n)| (*t, k.as_str(), *n)),
    )
}

/// The last hour of launch setting `ls`, minute by minute.
#[tracing::instrument(skip(db, actor))]
pub async fn of_launch_setting(
    db: &impl ConnectionTrait,
    actor: &Principal,
    ls: &str,
    now: DateTime<Utc>,
) -> ServiceResult<Throughput> {
    actor.require(Operation::Read)?;
    if launch_settings::Entity::find_by_id(ls).count(db).await? == 0 {
        return Err(ServiceError::NotFound(
            am_domain::usage::EntityRef::LaunchSetting(ls.to_owned()).to_string(),
        ));
    }
    let (from, _) = window(now);
    let samples = tm::Entity::find()
        .select_only()
        .columns([
            tm::Column::Minute,
            tm::Column::Processed,
            tm::Column::Backlog,
        ])
        .filter(tm::Column::Scope.eq(ls))
        .filter(tm::Column::Minute.gte(from))
        .into_model::<SampleRow>()
        .all(db)
        .await?;
    let failures = failures(db, Some(ls), now).await?;
    Ok(assemble(now, samples, &failures))
}

/// The last hour of every launch setting together, minute by minute, with the broker's total
/// backlog (each queue counted once, however many launch settings take from it).
#[tracing::instrument(skip(db))]
pub async fn overall(db: &impl ConnectionTrait, now: DateTime<Utc>) -> ServiceResult<Throughput> {
    let (from, _) = window(now);
    let stmt = overall_samples_statement(db.get_database_backend(), from);
    let samples = SampleRow::find_by_statement(stmt).all(db).await?;
    let failures = failures(db, None, now).await?;
    Ok(assemble(now, samples, &failures))
}
