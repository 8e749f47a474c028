//! The runner of an operation: claims it, works through it batch by batch, and writes
//! progress and the cursor after each batch under its claim.

use super::{
    DELETE_BATCH, MAX_ERRORS, OperationRequest, REPLAY_BATCH, STALE_AFTER, SWEEP_BATCH, Stored,
    batch::{Step, batch_step, dead_letter_batch},
    broker::ReplayBroker,
    now_db, status, told,
};
use crate::{
    Principal,
    audit::{self, AuditEntry},
    bulk::{self, BulkAction},
    dead_letters,
    entity::operations,
    error::{ServiceError, ServiceResult},
    runtime::{RuntimeConfig, begin_write, interrupt, run, sweep},
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set,
    sea_query::{Expr, ExprTrait},
};
use uuid::Uuid;

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
    publisher: &impl ReplayBroker,
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
        let step = step(db, cfg, id, op.total, &stored, cursor.as_deref(), publisher).await?;
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

/// One batch of operation `id`'s work after `cursor`: what it did, and where the next begins.
async fn step(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    id: Uuid,
    total: i64,
    stored: &Stored,
    cursor: Option<&str>,
    publisher: &impl ReplayBroker,
) -> ServiceResult<Step> {
    Ok(match &stored.request {
        OperationRequest::ReplayDeadLetters {
            selection,
            canary,
            rate_per_second,
        } => {
            super::replay::step(
                db,
                id,
                stored,
                selection,
                *canary,
                *rate_per_second,
                cursor,
                publisher,
            )
            .await?
        }
        OperationRequest::DeleteDeadLetters { selection } => {
            let after = cursor.and_then(|c| c.parse().ok()).unwrap_or(0);
            let rows = dead_letter_batch(db, stored, selection, after, DELETE_BATCH).await?;
            let mut step = Step::default();
            if let Some(last) = rows.last() {
                step.cursor = Some(last.id.to_string());
                let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
                let deleted = dead_letters::delete(db, &ids).await?;
                step.done = i64::try_from(deleted).unwrap_or(i64::MAX);
            } else {
                step.cursor = cursor.map(str::to_owned);
                step.finished = true;
            }
            step
        }
        OperationRequest::EnableLaunchSettings { .. }
        | OperationRequest::EnableScheduleGroups { .. } => {
            batch_step(&stored.items, cursor, |item| {
                let actor = stored.actor.clone();
                let item = item.clone();
                async move {
                    let cause = format!("bulk operation {id}");
                    bulk::one(db, cfg, &actor, &item, BulkAction::Enable, &cause)
                        .await
                        .map(|_| ())
                }
            })
            .await
        }
        OperationRequest::ReplayUnrouted { data_queue } => {
            unrouted_step(db, publisher, data_queue, total, cursor, &stored.actor.name).await?
        }
        OperationRequest::ConsistencySweep {} => sweep_step(db, cfg, stored.until, cursor).await?,
        OperationRequest::RerunActivations {
            from_where_it_broke: true,
            ..
        } => {
            batch_step(&stored.runs, cursor, |id| {
                let actor = stored.actor.clone();
                let id = *id;
                async move {
                    run::rerun_where_it_broke(db, cfg, &actor, id)
                        .await
                        .map(|_| ())
                }
            })
            .await
        }
        OperationRequest::InterruptActivations { .. } => {
            batch_step(&stored.runs, cursor, |id| {
                let actor = stored.actor.clone();
                let id = id.to_string();
                async move {
                    match interrupt::interrupt(db, cfg, &actor, &id).await {
                        // It ended meanwhile: nothing is left to interrupt.
                        Err(ServiceError::Conflict(_)) => Ok(()),
                        other => other,
                    }
                }
            })
            .await
        }
        OperationRequest::RerunActivations { .. } => {
            batch_step(&stored.items, cursor, |item| {
                let actor = stored.actor.clone();
                let item = item.clone();
                async move { run::run_now(db, cfg, &actor, &item).await.map(|_| ()) }
            })
            .await
        }
    })
}

/// One batch of an unrouted replay; the cursor counts the messages moved so far.
async fn unrouted_step(
    db: &DatabaseConnection,
    broker: &impl ReplayBroker,
    data_queue: &str,
    total: i64,
    cursor: Option<&str>,
    replayed_by: &str,
) -> ServiceResult<Step> {
    let moved = cursor.and_then(|c| c.parse::<i64>().ok()).unwrap_or(0);
    let left = u64::try_from(total - moved).unwrap_or(0);
    let batch = Ord::min(left, REPLAY_BATCH);
    let mut step = Step::default();
    let address = crate::entity::data_queues::Entity::find_by_id(data_queue)
        .one(db)
        .await?
        .map(|dq| {
            am_domain::catalog::DataQueue::effective_address_of(&dq.id, dq.address.as_deref())
                .to_owned()
        });
    let Some(address) = address else {
        step.failed = i64::try_from(left).unwrap_or(i64::MAX);
        step.errors.push(serde_json::json!({
            "item": format!("data queue {data_queue}"),
            "error": "the data queue was deleted from the catalog",
        }));
        step.cursor = Some(total.to_string());
        step.finished = true;
        return Ok(step);
    };
    let got = broker
        .replay_unrouted(data_queue, &address, batch, replayed_by)
        .await;
    step.done = i64::try_from(got.moved).unwrap_or(i64::MAX);
    step.cursor = Some((moved + step.done).to_string());
    match got.error {
        // The queue ran empty (someone else took them), or the bound is reached.
        None => step.finished = got.moved < batch || moved + step.done >= total,
        // The rest stays in the unrouted queue, counted as failed: a new replay moves it.
        Some(e) => {
            step.failed = i64::try_from(left - Ord::min(got.moved, left)).unwrap_or(i64::MAX);
            step.errors.push(serde_json::json!({
                "item": format!("unrouted messages of {data_queue}"),
                "error": e.to_string(),
            }));
            step.finished = true;
        }
    }
    Ok(step)
}

/// One batch of a consistency sweep; the cursor is the last activation checked.
async fn sweep_step(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    until: Option<Uuid>,
    cursor: Option<&str>,
) -> ServiceResult<Step> {
    let mut step = Step::default();
    let after = cursor.and_then(|c| Uuid::parse_str(c).ok());
    let batch = match until {
        Some(until) => sweep::next_batch(db, after, until, SWEEP_BATCH).await?,
        None => Vec::new(),
    };
    let Some(last) = batch.last() else {
        step.cursor = cursor.map(str::to_owned);
        step.finished = true;
        return Ok(step);
    };
    step.cursor = Some(last.id.to_string());
    let now = Utc::now();
    for a in &batch {
        let found = sweep::check(db, cfg, a, now).await?;
        let unrepaired = found.iter().any(|f| !f.repaired);
        if unrepaired {
            step.failed += 1;
        } else {
            step.done += 1;
        }
        for f in found {
            tracing::info!(activation = %f.activation, host = ?f.host, kind = %f.kind, repaired = f.repaired, detail = %f.detail, "consistency sweep finding");
            step.errors.push(serde_json::json!({
                "item": match &f.host {
                    Some(h) => format!("activation {} on {h}", f.activation),
                    None => format!("activation {}", f.activation),
                },
                "error": format!("{}: {}", f.kind, f.detail),
                "repaired": f.repaired,
            }));
        }
    }
    Ok(step)
}

/// Marks a claimed operation cancelled.
async fn cancelled(
    db: &DatabaseConnection,
    id: Uuid,
    claim_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let txn = begin_write(db).await?;
    let ended = operations::Entity::update_many()
        .col_expr(operations::Column::Status, Expr::value(status::CANCELLED))
        .col_expr(operations::Column::FinishedAt, Expr::value(now))
        .col_expr(operations::Column::UpdatedAt, Expr::value(now))
        .filter(operations::Column::Id.eq(id))
        .filter(operations::Column::UpdatedAt.eq(claim_at))
        .exec(&txn)
        .await?
        .rows_affected
        == 1;
    if ended && let Some(op) = operations::Entity::find_by_id(id).one(&txn).await? {
        told::tell(&txn, &op, now).await?;
    }
    txn.commit().await?;
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
    let updated = row.update(&txn).await?;
    if finish.is_some() {
        told::tell(&txn, &updated, now).await?;
    }
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
