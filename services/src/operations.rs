//! Bulk operations over search results (docs/runtime.md, Background jobs and bulk operations):
//! replay or delete dead letters, re-run activations, re-enable launch settings or schedule
//! groups.
//!
//! An operation is one row of `operations`: the request and who made it, progress (done,
//! failed, total, the first errors) and a cursor. [`start`] validates the request, counts what
//! it selects, records the row with an audit entry and hands its id to the [`OperationQueue`]
//! (the server's background-job worker). [`run`] then works through it in batches and writes
//! progress and the cursor after every batch: readers watch it move, a cancel request stops it
//! between two batches, and after a restart the job continues at the cursor instead of starting
//! over. One runner at a time: [`run`] claims the row by compare-and-set and every progress
//! write checks the claim is still its own, so a second job for the same operation (a resumed
//! job and a re-enqueued one) backs off instead of doing the work twice.

use crate::{
    Principal, Services,
    activations::{self, ActivationFilter},
    audit::{self, AuditEntry},
    catalog, dead_letters,
    entity::{
        activations as activation, dead_letters as dead_letters_entity, launch_settings,
        operations, schedule_groups,
    },
    error::{ServiceError, ServiceResult},
    runtime::{RuntimeConfig, activate, begin_write},
};
use am_domain::{roles::Role, usage::EntityRef};
use chrono::{DateTime, SubsecRound, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
    sea_query::{Expr, ExprTrait},
};
use serde::{Deserialize, Serialize};
use std::{
    collections::{BTreeSet, HashSet},
    future::Future,
    pin::Pin,
};
use uuid::Uuid;

/// States of an operation.
pub mod status {
    pub const QUEUED: &str = "queued";
    pub const RUNNING: &str = "running";
    /// Every selected item was processed without error.
    pub const SUCCEEDED: &str = "succeeded";
    /// Finished, but some items failed (see `failed` and `errors`).
    pub const FAILED: &str = "failed";
    pub const CANCELLED: &str = "cancelled";
    /// Not finished yet.
    pub const ACTIVE: [&str; 2] = [QUEUED, RUNNING];
}

/// A running operation whose runner wrote no progress for this long is taken over by the next
/// job for it (its manager died). Batches take well under a second.
pub const STALE_AFTER: chrono::Duration = chrono::Duration::seconds(60);

/// How many item errors an operation keeps; the rest are only counted.
pub const MAX_ERRORS: usize = 50;

/// Catalog changes and runs per batch (each is its own transaction).
const CATALOG_BATCH: usize = 20;
/// Dead letters published per batch: enough to keep the broker's confirms pipelined.
const REPLAY_BATCH: u64 = 500;
const DELETE_BATCH: u64 = 1000;

/// What an operator asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum OperationRequest {
    /// Publish dead letters back to the subscription of the launch setting that gave up on
    /// them, with a fresh attempt count; they are marked replayed by the requester.
    ReplayDeadLetters {
        selection: dead_letters::Selection,
    },
    DeleteDeadLetters {
        selection: dead_letters::Selection,
    },
    /// Run again what these activations ran: the launch setting, or the group of a group
    /// activation; a member run of a group re-runs its launch setting alone. Each launch
    /// setting or group runs once, however many of the activations ran it.
    RerunActivations {
        /// Exactly these activations; when empty, every activation `filter` matches.
        #[serde(default)]
        ids: Vec<Uuid>,
        #[serde(default)]
        filter: ActivationFilter,
    },
    EnableLaunchSettings {
        ids: Vec<String>,
    },
    EnableScheduleGroups {
        ids: Vec<String>,
    },
}

impl OperationRequest {
    /// The `kind` column.
    pub fn kind(&self) -> &'static str {
        match self {
            OperationRequest::ReplayDeadLetters { .. } => "replay-dead-letters",
            OperationRequest::DeleteDeadLetters { .. } => "delete-dead-letters",
            OperationRequest::RerunActivations { .. } => "rerun-activations",
            OperationRequest::EnableLaunchSettings { .. } => "enable-launch-settings",
            OperationRequest::EnableScheduleGroups { .. } => "enable-schedule-groups",
        }
    }
}

/// What the runner needs, kept in the `params` column.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    request: OperationRequest,
    /// The requester: the runner acts on their behalf, so audit entries name them.
    actor: Principal,
    /// The items, resolved when the operation was started (catalog ids and re-run targets);
    /// the cursor is an index into them.
    #[serde(default)]
    items: Vec<EntityRef>,
    /// Dead-letter operations: the newest dead letter when it started. Later arrivals that
    /// match the filter are not part of it (its total would never be reached).
    #[serde(default)]
    max_id: Option<i64>,
}

/// Where started operations go to be run: the server's background-job queue.
pub trait OperationQueue: Send + Sync {
    /// Queues the job of operation `id`. An error leaves the operation `queued`; the server's
    /// resume pass queues it again.
    fn enqueue(&self, id: Uuid) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;
}

/// The queue of a process without a job worker (tools, tests): operations stay `queued` until
/// a manager's worker runs them.
#[derive(Debug, Default)]
pub struct NoQueue;

impl OperationQueue for NoQueue {
    fn enqueue(&self, _id: Uuid) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>> {
        Box::pin(async { Ok(()) })
    }
}

/// Microsecond precision: what both databases store, so a value written is read back equal
/// (the claim check compares `updated_at`).
fn now_db() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}

/// Starts an operation: validates the request against the current data (every problem listed,
/// nothing recorded when there is one), records it as `queued` with an audit entry in one
/// transaction, and queues its job.
#[tracing::instrument(skip_all, fields(kind = request.kind(), by = %by.name))]
pub async fn start(
    services: &Services,
    by: &Principal,
    request: OperationRequest,
) -> ServiceResult<operations::Model> {
    by.require(Role::Operator)?;
    let db = &services.db;
    let (items, total, max_id) = match &request {
        OperationRequest::ReplayDeadLetters { selection }
        | OperationRequest::DeleteDeadLetters { selection } => {
            let max_id = dead_letters_entity::Entity::find()
                .select_only()
                .column_as(dead_letters_entity::Column::Id.max(), "m")
                .into_tuple::<Option<i64>>()
                .one(db)
                .await?
                .flatten();
            let total = dead_letters::count(db, selection).await?;
            (Vec::new(), i64::try_from(total).unwrap_or(i64::MAX), max_id)
        }
        _ => {
            let items = resolve(db, &request).await?;
            let total = items.len() as i64;
            (items, total, None)
        }
    };
    if total == 0 {
        return Err(ServiceError::invalid(
            "",
            "nothing to do: the selection matches nothing",
        ));
    }
    let now = now_db();
    let id = Uuid::now_v7();
    let stored = Stored {
        request: request.clone(),
        actor: by.clone(),
        items,
        max_id,
    };
    let params = serde_json::to_value(&stored)
        .map_err(|e| ServiceError::Internal(format!("operation parameters: {e}")))?;
    let txn = begin_write(db).await?;
    let row = operations::ActiveModel {
        id: Set(id),
        kind: Set(request.kind().to_owned()),
        status: Set(status::QUEUED.to_owned()),
        requested_by: Set(by.name.clone()),
        params: Set(params),
        total: Set(total),
        done: Set(0),
        failed: Set(0),
        errors: Set(serde_json::json!([])),
        cursor: Set(None),
        cancel_requested: Set(false),
        created_at: Set(now),
        started_at: Set(None),
        finished_at: Set(None),
        updated_at: Set(now),
    }
    .insert(&txn)
    .await?;
    audit::record(
        &txn,
        AuditEntry::new(by, "start", "operation", &id.to_string())
            .after(&serde_json::json!({ "request": request, "total": total })),
    )
    .await?;
    txn.commit().await?;
    tracing::info!(operation = %id, total, "operation started");
    if let Err(e) = services.operations.enqueue(id).await {
        tracing::warn!(operation = %id, error = %e, "operation recorded but not queued; the resume pass queues it");
    }
    Ok(row)
}

/// What an activation ran: id, launch setting, group, parent (for member runs).
type RunOf = (Uuid, Option<String>, Option<String>, Option<Uuid>);

/// At most this many ids in one request (one statement's bound parameters); more are
/// selected by a filter.
fn at_most(count: usize) -> ServiceResult<()> {
    let max = dead_letters::MAX_IDS;
    if count > max {
        return Err(ServiceError::invalid(
            "ids",
            format!("{count} ids given; at most {max} at once"),
        ));
    }
    Ok(())
}

/// The items of a request, checked against the database.
async fn resolve(
    db: &DatabaseConnection,
    request: &OperationRequest,
) -> ServiceResult<Vec<EntityRef>> {
    match request {
        OperationRequest::ReplayDeadLetters { .. } | OperationRequest::DeleteDeadLetters { .. } => {
            Ok(Vec::new())
        }
        OperationRequest::EnableLaunchSettings { ids } => {
            let ids = distinct(ids, "ids")?;
            let found: BTreeSet<String> = launch_settings::Entity::find()
                .select_only()
                .column(launch_settings::Column::Id)
                .filter(launch_settings::Column::Id.is_in(ids.iter().cloned()))
                .into_tuple()
                .all(db)
                .await?
                .into_iter()
                .collect();
            missing(&ids, &found, "launch setting")?;
            Ok(ids.into_iter().map(EntityRef::LaunchSetting).collect())
        }
        OperationRequest::EnableScheduleGroups { ids } => {
            let ids = distinct(ids, "ids")?;
            let found: BTreeSet<String> = schedule_groups::Entity::find()
                .select_only()
                .column(schedule_groups::Column::Id)
                .filter(schedule_groups::Column::Id.is_in(ids.iter().cloned()))
                .into_tuple()
                .all(db)
                .await?
                .into_iter()
                .collect();
            missing(&ids, &found, "schedule group")?;
            Ok(ids.into_iter().map(EntityRef::ScheduleGroup).collect())
        }
        OperationRequest::RerunActivations { ids, filter } => {
            at_most(ids.len())?;
            let q = if ids.is_empty() {
                activations::matching(filter)?
            } else {
                activation::Entity::find().filter(activation::Column::Id.is_in(ids.iter().copied()))
            };
            let rows: Vec<RunOf> = q
                .select_only()
                .column(activation::Column::Id)
                .column(activation::Column::LaunchSettingId)
                .column(activation::Column::GroupId)
                .column(activation::Column::ParentId)
                .into_tuple()
                .all(db)
                .await?;
            if !ids.is_empty() {
                let found: BTreeSet<String> = rows.iter().map(|r| r.0.to_string()).collect();
                let wanted: Vec<String> = ids.iter().map(Uuid::to_string).collect();
                missing(&wanted, &found, "activation")?;
            }
            let mut seen = HashSet::new();
            let mut targets = Vec::new();
            for (_, ls, group, parent) in rows {
                let target = match (ls, group, parent) {
                    (Some(ls), _, _) => EntityRef::LaunchSetting(ls),
                    (None, Some(g), None) => EntityRef::ScheduleGroup(g),
                    _ => continue,
                };
                if seen.insert(target.clone()) {
                    targets.push(target);
                }
            }
            Ok(targets)
        }
    }
}

fn distinct(ids: &[String], field: &str) -> ServiceResult<Vec<String>> {
    at_most(ids.len())?;
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let id = id.trim();
        if id.is_empty() {
            return Err(ServiceError::invalid(format!("{field}[{i}]"), "empty id"));
        }
        if seen.insert(id.to_owned()) {
            out.push(id.to_owned());
        }
    }
    Ok(out)
}

fn missing(wanted: &[String], found: &BTreeSet<String>, what: &str) -> ServiceResult<()> {
    let mut errors = am_domain::ValidationErrors::new();
    for (i, id) in wanted.iter().enumerate() {
        if !found.contains(id) {
            errors.push(format!("ids[{i}]"), format!("there is no {what} `{id}`"));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ServiceError::Invalid(errors))
    }
}

/// One operation.
pub async fn get(
    db: &DatabaseConnection,
    actor: &Principal,
    id: Uuid,
) -> ServiceResult<operations::Model> {
    actor.require(Role::Viewer)?;
    operations::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("operation {id}")))
}

/// The newest operations first.
pub async fn list(
    db: &DatabaseConnection,
    actor: &Principal,
    limit: u64,
) -> ServiceResult<Vec<operations::Model>> {
    actor.require(Role::Viewer)?;
    Ok(operations::Entity::find()
        .order_by_desc(operations::Column::CreatedAt)
        .order_by_desc(operations::Column::Id)
        .limit(limit.clamp(1, 500))
        .all(db)
        .await?)
}

/// Asks an operation to stop. A queued one is cancelled at once; a running one stops after the
/// batch in progress (what it already did stays done).
#[tracing::instrument(skip_all, fields(operation = %id, by = %by.name))]
pub async fn cancel(
    db: &DatabaseConnection,
    by: &Principal,
    id: Uuid,
) -> ServiceResult<operations::Model> {
    by.require(Role::Operator)?;
    let now = now_db();
    let txn = begin_write(db).await?;
    let op = operations::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("operation {id}")))?;
    if !status::ACTIVE.contains(&op.status.as_str()) {
        return Err(ServiceError::Conflict(format!(
            "operation {id} is already {}",
            op.status
        )));
    }
    let mut update = operations::Entity::update_many()
        .col_expr(operations::Column::CancelRequested, Expr::value(true))
        .filter(operations::Column::Id.eq(id))
        .filter(operations::Column::Status.is_in(status::ACTIVE));
    if op.status == status::QUEUED {
        update = update
            .col_expr(operations::Column::Status, Expr::value(status::CANCELLED))
            .col_expr(operations::Column::FinishedAt, Expr::value(now))
            .col_expr(operations::Column::UpdatedAt, Expr::value(now));
    }
    update.exec(&txn).await?;
    audit::record(
        &txn,
        AuditEntry::new(by, "cancel", "operation", &id.to_string())
            .after(&serde_json::json!({ "done": op.done, "total": op.total })),
    )
    .await?;
    txn.commit().await?;
    get(db, by, id).await
}

/// A queued operation no worker took for this long is queued again (its job was lost, e.g.
/// the manager stopped between recording it and queueing it).
pub const QUEUED_GRACE: chrono::Duration = chrono::Duration::seconds(10);

/// Operations a manager should (re)queue: queued ones no worker took, and running ones whose
/// runner stopped writing progress (it died).
pub async fn resumable(db: &DatabaseConnection, now: DateTime<Utc>) -> ServiceResult<Vec<Uuid>> {
    Ok(operations::Entity::find()
        .select_only()
        .column(operations::Column::Id)
        .filter(
            operations::Column::Status
                .eq(status::QUEUED)
                .and(operations::Column::UpdatedAt.lt(now - QUEUED_GRACE))
                .or(operations::Column::Status
                    .eq(status::RUNNING)
                    .and(operations::Column::UpdatedAt.lt(now - STALE_AFTER))),
        )
        .order_by_asc(operations::Column::CreatedAt)
        .into_tuple()
        .all(db)
        .await?)
}

/// Publishes dead letters back to their launch settings' subscriptions (the broker side of a
/// replay, implemented by the server).
pub trait DeadLetterPublisher: Send + Sync {
    /// One result per row, in order.
    fn publish(
        &self,
        rows: &[crate::entity::dead_letters::Model],
        replayed_by: &str,
    ) -> impl Future<Output = Vec<Result<(), String>>> + Send;
}

/// The result of one batch.
#[derive(Debug, Default)]
struct Step {
    done: i64,
    failed: i64,
    errors: Vec<serde_json::Value>,
    cursor: Option<String>,
    finished: bool,
}

impl Step {
    fn record(&mut self, item: &str, result: Result<(), String>) {
        match result {
            Ok(()) => self.done += 1,
            Err(e) => {
                self.failed += 1;
                self.errors
                    .push(serde_json::json!({ "item": item, "error": e }));
            }
        }
    }
}

/// How a [`run`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// Finished with this status.
    Finished(&'static str),
    /// Another runner has it, or it is already finished: nothing done.
    NotClaimed,
    /// Another runner took it over (this one was too slow); it stopped.
    LostClaim,
}

/// Claims operation `id` (queued, or running but stale) for this runner.
async fn claim(
    db: &DatabaseConnection,
    id: Uuid,
    now: DateTime<Utc>,
) -> ServiceResult<Option<operations::Model>> {
    let claimed = operations::Entity::update_many()
        .col_expr(operations::Column::Status, Expr::value(status::RUNNING))
        .col_expr(
            operations::Column::StartedAt,
            Expr::col(operations::Column::StartedAt).if_null(now),
        )
        .col_expr(operations::Column::UpdatedAt, Expr::value(now))
        .filter(operations::Column::Id.eq(id))
        .filter(
            operations::Column::Status
                .eq(status::QUEUED)
                .or(operations::Column::Status
                    .eq(status::RUNNING)
                    .and(operations::Column::UpdatedAt.lt(now - STALE_AFTER))),
        )
        .exec(db)
        .await?;
    if claimed.rows_affected == 0 {
        return Ok(None);
    }
    Ok(operations::Entity::find_by_id(id).one(db).await?)
}

/// Carries out operation `id` to its end (or until cancelled), batch by batch.
#[tracing::instrument(skip_all, fields(operation = %id))]
pub async fn run(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    id: Uuid,
    publisher: &impl DeadLetterPublisher,
) -> ServiceResult<RunEnd> {
    let Some(op) = claim(db, id, now_db()).await? else {
        return Ok(RunEnd::NotClaimed);
    };
    let stored: Stored = serde_json::from_value(op.params.clone()).map_err(|e| {
        ServiceError::Internal(format!("operation {id} has unreadable parameters: {e}"))
    })?;
    if op.cursor.is_some() {
        tracing::info!(done = op.done, total = op.total, "resuming operation");
    }
    if op.cancel_requested {
        // Cancelled while its runner was gone: nothing more to do than say so.
        cancelled(db, id, op.updated_at, now_db()).await?;
        return Ok(RunEnd::Finished(status::CANCELLED));
    }
    let mut claim_at = op.updated_at;
    let mut cursor = op.cursor.clone();
    let mut kept_errors = op.errors.as_array().map_or(0, Vec::len);
    let mut failed_total = op.failed;
    loop {
        let step = match &stored.request {
            OperationRequest::ReplayDeadLetters { selection } => {
                let rows =
                    dead_letter_batch(db, &stored, selection, cursor.as_deref(), REPLAY_BATCH)
                        .await?;
                let mut step = Step::default();
                if let Some(last) = rows.last() {
                    step.cursor = Some(last.id.to_string());
                    let results = publisher.publish(&rows, &stored.actor.name).await;
                    let mut replayed = Vec::with_capacity(rows.len());
                    for (row, result) in rows.iter().zip(results) {
                        if result.is_ok() {
                            replayed.push(row.id);
                        }
                        step.record(&format!("dead letter {}", row.id), result);
                    }
                    dead_letters::mark_replayed(db, &replayed, &stored.actor.name, Utc::now())
                        .await?;
                } else {
                    step.cursor = cursor.clone();
                    step.finished = true;
                }
                step
            }
            OperationRequest::DeleteDeadLetters { selection } => {
                let rows =
                    dead_letter_batch(db, &stored, selection, cursor.as_deref(), DELETE_BATCH)
                        .await?;
                let mut step = Step::default();
                if let Some(last) = rows.last() {
                    step.cursor = Some(last.id.to_string());
                    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
                    let deleted = dead_letters::delete(db, &ids).await?;
                    step.done = i64::try_from(deleted).unwrap_or(i64::MAX);
                } else {
                    step.cursor = cursor.clone();
                    step.finished = true;
                }
                step
            }
            OperationRequest::EnableLaunchSettings { .. }
            | OperationRequest::EnableScheduleGroups { .. } => {
                catalog_step(&stored, cursor.as_deref(), |item| {
                    let actor = stored.actor.clone();
                    let item = item.clone();
                    async move {
                        catalog::set_enabled(
                            db,
                            &actor,
                            &item,
                            true,
                            &format!("bulk operation {id}"),
                        )
                        .await
                        .map(|_| ())
                    }
                })
                .await
            }
            OperationRequest::RerunActivations { .. } => {
                catalog_step(&stored, cursor.as_deref(), |item| {
                    let actor = stored.actor.clone();
                    let item = item.clone();
                    async move { activate::run_now(db, cfg, &actor, &item).await.map(|_| ()) }
                })
                .await
            }
        };
        failed_total += step.failed;
        let room = MAX_ERRORS.saturating_sub(kept_errors);
        let new_errors: Vec<_> = step.errors.into_iter().take(room).collect();
        kept_errors += new_errors.len();
        let now = now_db();
        let finish = step.finished.then_some(if failed_total == 0 {
            status::SUCCEEDED
        } else {
            status::FAILED
        });
        match progress(
            db,
            id,
            claim_at,
            now,
            step.done,
            step.failed,
            new_errors,
            step.cursor.clone(),
            finish,
        )
        .await?
        {
            Progress::Lost => return Ok(RunEnd::LostClaim),
            Progress::Kept { cancel } => {
                claim_at = now;
                cursor = step.cursor;
                if let Some(end) = finish {
                    finished(db, &stored.actor, id, end).await?;
                    return Ok(RunEnd::Finished(end));
                }
                if cancel {
                    cancelled(db, id, claim_at, now).await?;
                    return Ok(RunEnd::Finished(status::CANCELLED));
                }
            }
        }
    }
}

/// The next dead letters of a dead-letter operation: still dead, after the cursor, and not
/// newer than the operation.
async fn dead_letter_batch(
    db: &DatabaseConnection,
    stored: &Stored,
    selection: &dead_letters::Selection,
    cursor: Option<&str>,
    limit: u64,
) -> ServiceResult<Vec<dead_letters_entity::Model>> {
    let after = cursor.and_then(|c| c.parse::<i64>().ok()).unwrap_or(0);
    let Some(max_id) = stored.max_id else {
        return Ok(Vec::new());
    };
    let mut rows = dead_letters::next_batch(db, selection, after, limit).await?;
    rows.retain(|r| r.id <= max_id);
    Ok(rows)
}

/// One batch of catalog items (enable, re-run), from the index in the cursor.
async fn catalog_step<F, Fut>(stored: &Stored, cursor: Option<&str>, mut apply: F) -> Step
where
    F: FnMut(&EntityRef) -> Fut,
    Fut: Future<Output = ServiceResult<()>>,
{
    let from = cursor.and_then(|c| c.parse::<usize>().ok()).unwrap_or(0);
    let to = (from + CATALOG_BATCH).min(stored.items.len());
    let mut step = Step::default();
    for item in stored.items.get(from..to).unwrap_or_default() {
        let result = apply(item).await.map_err(|e| e.to_string());
        step.record(&item.to_string(), result);
    }
    step.cursor = Some(to.to_string());
    step.finished = to >= stored.items.len();
    step
}

/// Marks a claimed operation cancelled.
async fn cancelled(
    db: &DatabaseConnection,
    id: Uuid,
    claim_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    operations::Entity::update_many()
        .col_expr(operations::Column::Status, Expr::value(status::CANCELLED))
        .col_expr(operations::Column::FinishedAt, Expr::value(now))
        .col_expr(operations::Column::UpdatedAt, Expr::value(now))
        .filter(operations::Column::Id.eq(id))
        .filter(operations::Column::UpdatedAt.eq(claim_at))
        .exec(db)
        .await?;
    tracing::info!("operation cancelled");
    Ok(())
}

enum Progress {
    Kept { cancel: bool },
    Lost,
}

/// Adds a batch's counts, errors and cursor, if this runner still holds the claim (its last
/// write is still the row's `updated_at`).
#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the columns of one update"
)]
async fn progress(
    db: &DatabaseConnection,
    id: Uuid,
    claim_at: DateTime<Utc>,
    now: DateTime<Utc>,
    done: i64,
    failed: i64,
    new_errors: Vec<serde_json::Value>,
    cursor: Option<String>,
    finish: Option<&'static str>,
) -> ServiceResult<Progress> {
    let txn = begin_write(db).await?;
    let Some(op) = operations::Entity::find_by_id(id)
        .filter(operations::Column::UpdatedAt.eq(claim_at))
        .filter(operations::Column::Status.eq(status::RUNNING))
        .one(&txn)
        .await?
    else {
        return Ok(Progress::Lost);
    };
    let mut errors = op.errors.as_array().cloned().unwrap_or_default();
    errors.extend(new_errors);
    let mut row: operations::ActiveModel = op.clone().into();
    row.done = Set(op.done + done);
    row.failed = Set(op.failed + failed);
    row.errors = Set(serde_json::Value::Array(errors));
    row.cursor = Set(cursor);
    row.updated_at = Set(now);
    if let Some(end) = finish {
        row.status = Set(end.to_owned());
        row.finished_at = Set(Some(now));
    }
    row.update(&txn).await?;
    txn.commit().await?;
    Ok(Progress::Kept {
        cancel: op.cancel_requested,
    })
}

async fn finished(
    db: &DatabaseConnection,
    actor: &Principal,
    id: Uuid,
    end: &str,
) -> ServiceResult<()> {
    let Some(op) = operations::Entity::find_by_id(id).one(db).await? else {
        return Ok(());
    };
    audit::record(
        db,
        AuditEntry::new(actor, "finish", "operation", &id.to_string()).after(&serde_json::json!({
            "status": end, "done": op.done, "failed": op.failed, "total": op.total,
        })),
    )
    .await?;
    tracing::info!(
        status = end,
        done = op.done,
        failed = op.failed,
        "operation finished"
    );
    Ok(())
}

/// An item that failed, as kept in `errors`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ItemError {
    pub item: String,
    pub error: String,
}

/// An operation as the API and the pages show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OperationView {
    pub id: Uuid,
    /// `replay-dead-letters`, `delete-dead-letters`, `rerun-activations`,
    /// `enable-launch-settings` or `enable-schedule-groups`.
    pub kind: String,
    /// `queued`, `running`, `succeeded`, `failed` (finished, some items failed) or `cancelled`.
    pub status: String,
    pub requested_by: String,
    pub total: i64,
    pub done: i64,
    pub failed: i64,
    /// The first errors (at most 50), one per failed item.
    pub errors: Vec<ItemError>,
    pub cancel_requested: bool,
    /// What was asked for.
    pub request: Option<OperationRequest>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
}

impl From<operations::Model> for OperationView {
    fn from(m: operations::Model) -> Self {
        let request = serde_json::from_value::<Stored>(m.params)
            .ok()
            .map(|s| s.request);
        let errors = serde_json::from_value(m.errors).unwrap_or_default();
        OperationView {
            id: m.id,
            kind: m.kind,
            status: m.status,
            requested_by: m.requested_by,
            total: m.total,
            done: m.done,
            failed: m.failed,
            errors,
            cancel_requested: m.cancel_requested,
            request,
            created_at: m.created_at,
            started_at: m.started_at,
            finished_at: m.finished_at,
            updated_at: m.updated_at,
        }
    }
}

/// An operation id from a URL: a malformed one names no operation.
pub fn parse_id(id: &str) -> ServiceResult<Uuid> {
    Uuid::parse_str(id.trim()).map_err(|_| ServiceError::NotFound(format!("operation {id}")))
}

/// What is disabled now (id and reason), as a re-enable operation selects from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disabled {
    pub launch_settings: Vec<(String, Option<String>)>,
    pub groups: Vec<(String, Option<String>)>,
}

pub async fn disabled(db: &DatabaseConnection, actor: &Principal) -> ServiceResult<Disabled> {
    actor.require(Role::Viewer)?;
    let launch_settings = launch_settings::Entity::find()
        .select_only()
        .column(launch_settings::Column::Id)
        .column(launch_settings::Column::DisabledReason)
        .filter(launch_settings::Column::Enabled.eq(false))
        .order_by_asc(launch_settings::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    let groups = schedule_groups::Entity::find()
        .select_only()
        .column(schedule_groups::Column::Id)
        .column(schedule_groups::Column::DisabledReason)
        .filter(schedule_groups::Column::Enabled.eq(false))
        .order_by_asc(schedule_groups::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    Ok(Disabled {
        launch_settings,
        groups,
    })
}
