//! Bulk operations over search results (docs/runtime.md, Background jobs and bulk operations):
//! replay or delete dead letters, re-run activations, re-enable launch settings or schedule
//! groups, replay what no launch setting of a data queue took.
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
    audit::{self, AuditEntry},
    catalog, dead_letters,
    entity::{dead_letters as dead_letters_entity, launch_settings, operations, schedule_groups},
    error::{ServiceError, ServiceResult},
    runtime::begin_write,
};
use am_domain::{read::operations::OperationRequest, roles::Operation, usage::EntityRef};
use chrono::{DateTime, SubsecRound, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
    sea_query::{Expr, ExprTrait},
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use uuid::Uuid;

mod batch;
mod broker;
mod disabled;
mod interrupt;
mod queue;
mod replay;
mod rerun;
mod run;
mod selected;
mod told;
mod view;

pub use broker::{ReplayBroker, ReplayError, UnroutedBatch};
pub use disabled::disabled;
pub use interrupt::interrupt_count;
pub use queue::{NoQueue, OperationQueue, QueueError};
pub use rerun::rerun_count;
pub use run::{RunEnd, run};
pub use view::{view, views};

/// States of an operation.
pub mod status {
    use am_domain::status::OperationStatus as S;

    pub const QUEUED: &str = S::Queued.as_str();
    pub const RUNNING: &str = S::Running.as_str();
    /// Every selected item was processed without error.
    pub const SUCCEEDED: &str = S::Succeeded.as_str();
    /// Finished, but some items failed (see `failed` and `errors`).
    pub const FAILED: &str = S::Failed.as_str();
    pub const CANCELLED: &str = S::Cancelled.as_str();
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
/// Activations checked per batch of a consistency sweep (a few queries each).
const SWEEP_BATCH: u64 = 100;

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
    /// Consistency sweep: the newest activation in progress when it started.
    #[serde(default)]
    until: Option<Uuid>,
    /// Re-run from where it broke: the activations to re-run, one per launch setting or group;
    /// interrupt: the activations to interrupt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    runs: Vec<Uuid>,
    /// The applications it touches, told when it ends (`told`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    applications: Vec<String>,
}

/// Microsecond precision: what both databases store, so a value written is read back equal
/// (the claim check compares `updated_at`).
fn now_db() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}

/// Starts an operation: validates the request against the current data (every problem listed,
/// nothing recorded when there is one), records it as `queued` with an audit entry in one
/// transaction, and queues its job.
#[tracing::instrument(skip_all, fields(kind = request.kind().as_str(), by = %by.name))]
pub async fn start(
    services: &Services,
    by: &Principal,
    request: OperationRequest,
) -> ServiceResult<operations::Model> {
    by.require(Operation::Bulk)?;
    by.require(request.operation())?;
    replay::check(&request)?;
    let db = &services.db;
    let mut until = None;
    let mut runs = Vec::new();
    let (items, total, max_id) = match &request {
        OperationRequest::ReplayDeadLetters { selection, .. }
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
        OperationRequest::ReplayUnrouted { data_queue } => (
            Vec::new(),
            unrouted_total(services, data_queue).await?,
            None,
        ),
        OperationRequest::ConsistencySweep {} => {
            let (count, newest) = crate::runtime::sweep::in_progress(db).await?;
            if count == 0 {
                return Err(ServiceError::Conflict(
                    "nothing to check: no activation is in progress".into(),
                ));
            }
            until = newest;
            (Vec::new(), i64::try_from(count).unwrap_or(i64::MAX), None)
        }
        OperationRequest::RerunActivations {
            ids,
            filter,
            from_where_it_broke,
        } => {
            let selected = rerun::select(db, ids, filter, *from_where_it_broke).await?;
            runs = selected.runs;
            let total = (selected.targets.len() + runs.len()) as i64;
            (selected.targets, total, None)
        }
        OperationRequest::InterruptActivations { ids, filter } => {
            runs = interrupt::select(db, ids, filter).await?;
            (Vec::new(), runs.len() as i64, None)
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
    let applications = told::applications(db, &request, &items, &runs).await?;
    let now = now_db();
    let id = Uuid::now_v7();
    let stored = Stored {
        applications,
        request: request.clone(),
        actor: by.clone(),
        items,
        max_id,
        until,
        runs,
    };
    let params = serde_json::to_value(&stored)
        .map_err(|e| ServiceError::Internal(format!("operation parameters: {e}")))?;
    let txn = begin_write(db).await?;
    let row = operations::ActiveModel {
        id: Set(id),
        kind: Set(request.kind().as_str().to_owned()),
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

/// At most this many ids in one request (one statement's bound parameters); more are
/// selected by a filter.
pub(super) fn at_most(count: usize) -> ServiceResult<()> {
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
        OperationRequest::ReplayDeadLetters { .. }
        | OperationRequest::DeleteDeadLetters { .. }
        | OperationRequest::ReplayUnrouted { .. }
        | OperationRequest::ConsistencySweep {}
        // Selected by `rerun::select`, which also gives the runs to re-run where they broke,
        // and by `interrupt::select`.
        | OperationRequest::RerunActivations { .. }
        | OperationRequest::InterruptActivations { .. } => Ok(Vec::new()),
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
    }
}

/// How many messages replaying the unrouted queue of `data_queue` moves: what the queue held at
/// the last sample. Refused when no launch setting takes the data queue's messages (they would
/// come straight back) or when there is nothing to move.
async fn unrouted_total(services: &Services, data_queue: &str) -> ServiceResult<i64> {
    let field = "data_queue";
    let catalog = catalog::load_with(&services.db, false).await?;
    if catalog.data_queue(data_queue).is_none() {
        return Err(ServiceError::invalid(
            field,
            format!("there is no data queue `{data_queue}`"),
        ));
    }
    let consumed = catalog.launch_settings.iter().any(|ls| {
        am_domain::topology::consumed_data_queue(&catalog, ls)
            .is_some_and(|(_, dq)| dq.id == data_queue)
    });
    if !consumed {
        return Err(ServiceError::invalid(
            field,
            format!(
                "no launch setting takes the messages of data queue `{data_queue}` yet: \
                 replayed messages would come straight back to its unrouted queue"
            ),
        ));
    }
    let held = services
        .broker_depths
        .read()
        .map_err(|_| ServiceError::Internal("the queue depth sample is poisoned".into()))?
        .unrouted_of(data_queue);
    match held {
        Some(n) if n > 0 => Ok(i64::from(n)),
        Some(_) => Err(ServiceError::invalid(
            field,
            format!("nothing to do: the unrouted queue of `{data_queue}` is empty"),
        )),
        None => Err(ServiceError::invalid(
            field,
            format!(
                "the unrouted queue of `{data_queue}` has not been sampled yet; try again in a \
                 few seconds"
            ),
        )),
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

pub(super) fn missing(
    wanted: &[String],
    found: &BTreeSet<String>,
    what: &str,
) -> ServiceResult<()> {
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
    actor.require(Operation::Read)?;
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
    actor.require(Operation::Read)?;
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
    by.require(Operation::Bulk)?;
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
    let queued = op.status == status::QUEUED;
    if queued {
        update = update
            .col_expr(operations::Column::Status, Expr::value(status::CANCELLED))
            .col_expr(operations::Column::FinishedAt, Expr::value(now))
            .col_expr(operations::Column::UpdatedAt, Expr::value(now));
    }
    update.exec(&txn).await?;
    // A queued operation ends here; a running one ends when its runner sees the request.
    if queued && let Some(ended) = operations::Entity::find_by_id(id).one(&txn).await? {
        told::tell(&txn, &ended, now).await?;
    }
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

/// An operation id from a URL: a malformed one names no operation.
pub fn parse_id(id: &str) -> ServiceResult<Uuid> {
    Uuid::parse_str(id.trim()).map_err(|_| ServiceError::NotFound(format!("operation {id}")))
}
