//! Failure-log retention (docs/concepts.md, Failure logs): a periodic sweep that deletes the
//! failure logs a launch setting's last completed activation made obsolete.
//!
//! # Rules
//!
//! For each launch setting, its *last completed activation* decides:
//!
//! | last completed activation | deleted |
//! |---|---|
//! | `succeeded` | every failure log of the launch setting that occurred up to the activation's time |
//! | `failed` or `interrupted` | the failure logs older than [`RetentionPolicy::keep_failed_for`] before the activation's time |
//! | none | nothing |
//!
//! * *Last completed* is the activation the runtime records in `launch_settings.last_activation_id`
//!   when an activation of the launch setting ends (alone or as a member of a group
//!   activation), in the same transaction that sets `last_result`. So the sweep follows exactly
//!   the *last result* pages and the API show, and "last" means the one that **ended** last: with
//!   overlapping runs, an older run failing after a newer one succeeded is the one that counts.
//!   Reading that pointer costs one primary-key lookup per launch setting, where finding the
//!   latest end among the activations themselves would read every activation of the launch
//!   setting (no index orders them by end time).
//! * `waiting`, `dispatched` and `running` activations never count: they have not ended.
//!   `skipped` does not count either (nothing ran, so it says nothing about the failures); the
//!   runtime leaves `last_result` alone for it too.
//! * The activation's time is its `finished_at`, falling back to `started_at`, then `created_at`
//!   (every activation that ended has `finished_at`; the fallbacks only guard old or hand-made
//!   rows).
//! * After a success, failures that occurred *after* it are kept: they belong to a newer run still
//!   going on (or one that ends later and then rules), and deleting the failures of a running
//!   activation would hide them from the operator while they matter. This also makes the sweep
//!   safe against a run ending while it works: whatever it read, it never deletes a failure
//!   newer than the activation that allowed the deletion.
//! * Failure logs of a launch setting deleted since stay: there is no last activation to decide.
//!
//! # Cost and locking
//!
//! `failure_logs` grows to millions of rows while the runtime writes constantly (and SQLite
//! has one writer), so deletions go in bounded batches, each one statement — its own short
//! transaction — of at most [`RetentionPolicy::batch_size`] rows:
//!
//! ```sql
//! DELETE FROM failure_logs WHERE id IN
//!   (SELECT id FROM failure_logs WHERE launch_setting_id = ? AND occurred_at < ?
//!    ORDER BY occurred_at LIMIT ?)
//! ```
//!
//! The inner select reads a range of `idx_failure_logs_ls_occurred_at`, oldest first; a launch
//! setting with nothing to delete costs one read of that index and one of `error_types`'s
//! primary key (no write lock is taken for it). Once a launch setting's failures are deleted,
//! the error types whose latest failure went with them are forgotten too (the global search
//! finds an error type only while a failure of it is stored).
//! Between
//! batches the sweep pauses ([`RetentionPolicy::pause_between_batches`]) so writers waiting for
//! SQLite's lock get it, and it stops after [`RetentionPolicy::max_batches`] batches, reporting
//! [`RetentionReport::complete`] `false`: the next sweep carries on (launch settings already
//! cleaned cost one index read each). Dropping the future cancels the sweep cleanly at any
//! point: every committed batch is a finished piece of work, the others did not happen.

use crate::{
    entity::{activations, failure_logs, launch_settings},
    error::{ServiceError, ServiceResult},
    failures::error_types,
    status,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait, JoinType,
    QueryFilter, QueryOrder, QuerySelect, QueryTrait, RelationDef, Statement,
    sea_query::{Expr, ExprTrait, Order, Query, SimpleExpr},
};

/// Launch settings read per step of the sweep.
const LAUNCH_SETTINGS_PAGE: u64 = 500;

/// How much the sweep keeps and how hard it works; the server builds it from its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// After a failed or interrupted last activation, failure logs older than this before the
    /// activation's time are deleted (`AM_FAILURE_RETENTION_DAYS`, default 30 days).
    pub keep_failed_for: chrono::Duration,
    /// Rows per delete statement: large enough to be efficient, small enough that each
    /// statement holds the write lock only briefly.
    pub batch_size: u64,
    /// Delete statements per sweep at most; the rest waits for the next sweep.
    pub max_batches: u64,
    /// Pause before each delete statement after the first. SQLite's busy handler polls for the
    /// lock at most every 100 ms, so with a pause at least that long a writer that waited during
    /// a batch always gets in before the next one.
    pub pause_between_batches: std::time::Duration,
}

impl Default for RetentionPolicy {
    fn default() -> Self {
        Self {
            keep_failed_for: chrono::Duration::days(30),
            batch_size: 5_000,
            // A million rows per sweep.
            max_batches: 200,
            pause_between_batches: std::time::Duration::from_millis(100),
        }
    }
}

impl RetentionPolicy {
    fn check(&self) -> ServiceResult<()> {
        if self.keep_failed_for < chrono::Duration::zero() {
            return Err(ServiceError::invalid(
                "keep_failed_for",
                "must not be negative",
            ));
        }
        if self.batch_size == 0 {
            return Err(ServiceError::invalid("batch_size", "must be at least 1"));
        }
        if self.max_batches == 0 {
            return Err(ServiceError::invalid("max_batches", "must be at least 1"));
        }
        Ok(())
    }
}

/// What one sweep did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionReport {
    /// Launch settings with a last completed activation, looked at.
    pub launch_settings_checked: u64,
    /// Failure logs deleted because the last completed activation succeeded.
    pub deleted_after_success: u64,
    /// Failure logs deleted because they were too old before a failed or interrupted one.
    pub deleted_after_failure: u64,
    /// Delete statements run, each its own transaction.
    pub batches: u64,
    /// `false` when the sweep stopped at [`RetentionPolicy::max_batches`] with work left.
    pub complete: bool,
}

impl RetentionReport {
    pub fn deleted(&self) -> u64 {
        self.deleted_after_success + self.deleted_after_failure
    }
}

/// What the last completed activation of one launch setting allows to delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Everything up to and including this time.
    Success(DateTime<Utc>),
    /// Everything strictly before this time.
    Failure(DateTime<Utc>),
}

impl Rule {
    /// The rule for an activation that ended with `status` at `at`; `None` when it allows
    /// nothing (not completed, or a retention reaching before the earliest representable time).
    fn of(status: &str, at: DateTime<Utc>, keep_failed_for: chrono::Duration) -> Option<Rule> {
        match status {
            status::activation::SUCCEEDED => Some(Rule::Success(at)),
            status::activation::FAILED | status::activation::INTERRUPTED => {
                at.checked_sub_signed(keep_failed_for).map(Rule::Failure)
            }
            _ => None,
        }
    }

    /// The rule on a failure's time: `failure_logs.occurred_at`, or the latest of a type in
    /// `error_types.last_seen` (every failure of the type is gone when that one is).
    fn on<C: ColumnTrait>(self, time: C) -> SimpleExpr {
        match self {
            Rule::Success(at) => time.lte(at),
            Rule::Failure(before) => time.lt(before),
        }
    }

    fn condition(self) -> SimpleExpr {
        self.on(failure_logs::Column::OccurredAt)
    }
}

/// The statuses of a completed activation.
const COMPLETED: [&str; 3] = [
    status::activation::SUCCEEDED,
    status::activation::FAILED,
    status::activation::INTERRUPTED,
];

/// `launch_settings.last_activation_id` → `activations.id` (no relation is declared for it).
fn last_activation() -> RelationDef {
    launch_settings::Entity::belongs_to(activations::Entity)
        .from(launch_settings::Column::LastActivationId)
        .to(activations::Column::Id)
        .into()
}

/// Launch settings after `after` (by id) with their last completed activation's status and
/// time, one page.
fn last_completed_page(after: &str) -> sea_orm::Select<launch_settings::Entity> {
    launch_settings::Entity::find()
        .select_only()
        .column(launch_settings::Column::Id)
        .column(activations::Column::Status)
        .column(activations::Column::FinishedAt)
        .column(activations::Column::StartedAt)
        .column(activations::Column::CreatedAt)
        .join(JoinType::InnerJoin, last_activation())
        .filter(launch_settings::Column::Id.gt(after))
        .filter(activations::Column::Status.is_in(COMPLETED))
        .order_by_asc(launch_settings::Column::Id)
        .limit(LAUNCH_SETTINGS_PAGE)
}

/// One failure log `rule` allows to delete, if any: a read, so a clean launch setting never
/// takes the write lock.
///
/// Here and in [`delete_batch`], ordering by time makes `idx_failure_logs_ls_occurred_at` the
/// only index that serves the statement without a sort; without it PostgreSQL may as well
/// take another index led by the launch setting and filter the time row by row.
fn probe(launch_setting: &str, rule: Rule) -> sea_orm::Select<failure_logs::Entity> {
    failure_logs::Entity::find()
        .select_only()
        .column(failure_logs::Column::Id)
        .filter(failure_logs::Column::LaunchSettingId.eq(launch_setting))
        .filter(rule.condition())
        .order_by_asc(failure_logs::Column::OccurredAt)
        .limit(1)
}

/// Deletes at most `batch_size` of the failure logs `rule` allows to delete, the oldest first.
fn delete_batch(
    launch_setting: &str,
    rule: Rule,
    batch_size: u64,
) -> sea_orm::DeleteMany<failure_logs::Entity> {
    let ids = Query::select()
        .column(failure_logs::Column::Id)
        .from(failure_logs::Entity)
        .and_where(failure_logs::Column::LaunchSettingId.eq(launch_setting))
        .and_where(rule.condition())
        .order_by(failure_logs::Column::OccurredAt, Order::Asc)
        .limit(batch_size)
        .take();
    failure_logs::Entity::delete_many().filter(Expr::col(failure_logs::Column::Id).in_subquery(ids))
}

/// Deletes the failure logs the last completed activation of each launch setting made
/// obsolete (see the module documentation for the rules), in batches of their own
/// transactions.
#[tracing::instrument(skip_all, fields(
    keep_failed_days = policy.keep_failed_for.num_days(),
    batch_size = policy.batch_size,
))]
pub async fn sweep(
    db: &DatabaseConnection,
    policy: &RetentionPolicy,
) -> ServiceResult<RetentionReport> {
    policy.check()?;
    let mut report = RetentionReport::default();
    let mut after = String::new();
    loop {
        type Row = (
            String,
            String,
            Option<DateTime<Utc>>,
            Option<DateTime<Utc>>,
            DateTime<Utc>,
        );
        let page: Vec<Row> = last_completed_page(&after).into_tuple().all(db).await?;
        let Some(last) = page.last() else { break };
        after = last.0.clone();
        for (ls, status, finished_at, started_at, created_at) in page {
            report.launch_settings_checked += 1;
            let at = finished_at.or(started_at).unwrap_or(created_at);
            let Some(rule) = Rule::of(&status, at, policy.keep_failed_for) else {
                continue;
            };
            if !clean(db, policy, &ls, rule, &mut report).await? {
                tracing::info!(
                    deleted = report.deleted(),
                    batches = report.batches,
                    "failure-log retention stopped at its batch budget; the next sweep goes on"
                );
                return Ok(report);
            }
        }
    }
    report.complete = true;
    if report.deleted() > 0 {
        tracing::info!(
            launch_settings = report.launch_settings_checked,
            after_success = report.deleted_after_success,
            after_failure = report.deleted_after_failure,
            batches = report.batches,
            "failure logs deleted"
        );
    }
    Ok(report)
}

/// Deletes what `rule` allows for one launch setting; `false` when the batch budget ran out
/// first.
async fn clean(
    db: &DatabaseConnection,
    policy: &RetentionPolicy,
    launch_setting: &str,
    rule: Rule,
    report: &mut RetentionReport,
) -> ServiceResult<bool> {
    let found: Option<i64> = probe(launch_setting, rule).into_tuple().one(db).await?;
    if found.is_some() && !delete_all(db, policy, launch_setting, rule, report).await? {
        return Ok(false);
    }
    // Also after a sweep that deleted nothing: the one before may have stopped in between.
    error_types::forget(db, launch_setting, |time| rule.on(time)).await?;
    Ok(true)
}

/// The delete batches of [`clean`]; `false` when the batch budget ran out first.
async fn delete_all(
    db: &DatabaseConnection,
    policy: &RetentionPolicy,
    launch_setting: &str,
    rule: Rule,
    report: &mut RetentionReport,
) -> ServiceResult<bool> {
    loop {
        if report.batches >= policy.max_batches {
            return Ok(false);
        }
        if report.batches > 0 {
            tokio::time::sleep(policy.pause_between_batches).await;
        }
        let deleted = delete_batch(launch_setting, rule, policy.batch_size)
            .exec(db)
            .await?
            .rows_affected;
        report.batches += 1;
        match rule {
            Rule::Success(_) => report.deleted_after_success += deleted,
            Rule::Failure(_) => report.deleted_after_failure += deleted,
        }
        tracing::debug!(launch_setting, deleted, "failure-log retention batch");
        if deleted < policy.batch_size {
            return Ok(true);
        }
    }
}

/// The query plans of the sweep's statements for `launch_setting` (`(statement, plan)`, as
/// the database prints them: `EXPLAIN QUERY PLAN` on SQLite, `EXPLAIN` on PostgreSQL), for
/// tests and benchmarks that check each one reads through an index. Nothing is deleted.
pub async fn explain(
    db: &impl ConnectionTrait,
    launch_setting: &str,
    policy: &RetentionPolicy,
) -> ServiceResult<Vec<(String, String)>> {
    let backend = db.get_database_backend();
    let now = Utc::now();
    let success = Rule::Success(now);
    let failure = Rule::Failure(now - policy.keep_failed_for);
    let statements = [
        (
            "launch settings: last completed",
            last_completed_page("").build(backend),
        ),
        (
            "failure logs: probe after a success",
            probe(launch_setting, success).build(backend),
        ),
        (
            "failure logs: delete a batch after a success",
            delete_batch(launch_setting, success, policy.batch_size).build(backend),
        ),
        (
            "failure logs: probe after a failure",
            probe(launch_setting, failure).build(backend),
        ),
        (
            "failure logs: delete a batch after a failure",
            delete_batch(launch_setting, failure, policy.batch_size).build(backend),
        ),
    ];
    let mut out = Vec::with_capacity(statements.len());
    for (name, stmt) in statements {
        let prefix = match backend {
            DbBackend::Postgres => "EXPLAIN ",
            _ => "EXPLAIN QUERY PLAN ",
        };
        let rows = db
            .query_all_raw(Statement {
                sql: format!("{prefix}{}", stmt.sql),
                ..stmt.clone()
            })
            .await?;
        let plan: Vec<String> = rows
            .iter()
            .filter_map(|r| match backend {
                DbBackend::Postgres => r.try_get_by_index::<String>(0).ok(),
                _ => r.try_get_by_index::<String>(3).ok(),
            })
            .collect();
        out.push((format!("{name}: {}", stmt.sql), plan.join("\n")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(day: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2030, 1, day, 0, 0, 0)
            .single()
            .expect("valid time")
    }

    #[test]
    fn only_completed_activations_rule() {
        let keep = chrono::Duration::days(7);
        assert_eq!(
            Rule::of("succeeded", t(20), keep),
            Some(Rule::Success(t(20)))
        );
        assert_eq!(Rule::of("failed", t(20), keep), Some(Rule::Failure(t(13))));
        assert_eq!(
            Rule::of("interrupted", t(20), keep),
            Some(Rule::Failure(t(13)))
        );
        for s in ["waiting", "dispatched", "running", "skipped", "unknown"] {
            assert_eq!(Rule::of(s, t(20), keep), None, "{s}");
        }
        // A retention reaching before the earliest representable time allows nothing.
        assert_eq!(Rule::of("failed", t(20), chrono::Duration::MAX), None);
    }

    #[test]
    fn bad_policies_name_the_setting() {
        for (policy, field) in [
            (
                RetentionPolicy {
                    keep_failed_for: chrono::Duration::days(-1),
                    ..RetentionPolicy::default()
                },
                "keep_failed_for",
            ),
            (
                RetentionPolicy {
                    batch_size: 0,
                    ..RetentionPolicy::default()
                },
                "batch_size",
            ),
            (
                RetentionPolicy {
                    max_batches: 0,
                    ..RetentionPolicy::default()
                },
                "max_batches",
            ),
        ] {
            let e = policy.check().expect_err(field);
            assert!(e.to_string().contains(field), "{e}");
        }
        RetentionPolicy::default()
            .check()
            .expect("the default is valid");
    }
}
