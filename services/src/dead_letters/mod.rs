//! Dead letters (docs/concepts.md, Dead letters): messages a launch setting gave up on, moved
//! from the broker's dead-letter queue into the database ([`store`]) so operators can search
//! and page them, open one with its headers, body and failure history ([`list`], [`get`]), and
//! replay or delete them in bulk. Bulk work runs as background operations, which select what to do
//! with a [`Selection`] and call [`count`], [`next_batch`], [`mark_replayed`] and [`delete`].
//!
//! A dead letter is `dead` until it is replayed, then `replayed` (with who, when and how
//! often); a replayed message that fails for good again arrives as a new dead letter. The
//! dashboard's DLQ size counts the `dead` ones.
//!
//! | read | index |
//! |---|---|
//! | newest first, unfiltered | `idx_dead_letters_received_at` |
//! | of a launch setting | `idx_dead_letters_ls_received_at` |
//! | of a data queue | `idx_dead_letters_data_queue_received_at` |
//! | of an error type | `idx_dead_letters_error_type_received_at` |
//! | of a status (and the DLQ size) | `idx_dead_letters_status_received_at` |
//! | a message's failure history | `idx_failure_logs_data_message_id` |
//! | bulk batches | the primary key, in ascending order from the last batch |

pub mod forward;
mod headers;
mod ingest;
mod read;
pub mod replay;
mod threshold;

pub use headers::{BROKER_ERROR_PREFIX, body_view, parked_at, parse};
pub use ingest::{IncomingDeadLetter, StoreOutcome, store};
pub use read::{get, list};

use crate::{
    entity::dead_letters,
    error::{ServiceError, ServiceResult},
    filters,
};
use am_domain::{
    read::dead_letters::{
        DeadLetterDetail, DeadLetterFilter, DeadLetterPage, DeadLetterSummary, ForwardView,
        PolicyView, Selection,
    },
    status::DeadLetterStatus,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, Condition, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait},
};

/// Waiting to be replayed or deleted.
pub const DEAD: &str = DeadLetterStatus::Dead.as_str();
/// Sent back to its launch setting's subscription.
pub const REPLAYED: &str = DeadLetterStatus::Replayed.as_str();
/// Every status, for filters.
pub const STATUSES: [&str; 2] = [DEAD, REPLAYED];
/// Dead letters per page unless asked otherwise.
pub const PAGE: u64 = 50;
/// Largest page.
pub const MAX_PAGE: u64 = 200;
/// Most ids one selection may name; more is a filter's job.
pub const MAX_IDS: usize = 10_000;
/// Failures a dead letter's page shows, newest first.
pub const HISTORY: u64 = 50;
/// Ids per statement of the bulk functions, well under every backend's parameter limit.
const CHUNK: usize = 1000;

/// A parsed [`DeadLetterFilter`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scope {
    pub launch_setting: Option<String>,
    pub data_queue: Option<String>,
    pub error_type: Option<String>,
    pub status: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

impl Scope {
    /// The scope a filter selects, or which of its fields is malformed.
    pub(crate) fn of(filter: &DeadLetterFilter) -> ServiceResult<Scope> {
        let status = filters::text(&filter.status);
        if let Some(s) = &status
            && !STATUSES.contains(&s.as_str())
        {
            return Err(ServiceError::invalid(
                "status",
                format!("unknown status `{s}`; one of {}", STATUSES.join(", ")),
            ));
        }
        let (from, to) = filters::range(&filter.from, &filter.to)?;
        Ok(Scope {
            launch_setting: filters::text(&filter.launch_setting),
            data_queue: filters::text(&filter.data_queue),
            error_type: filters::text(&filter.error_type),
            status,
            from,
            to,
        })
    }
}

impl Scope {
    pub(crate) fn condition(&self) -> Condition {
        use dead_letters::Column as C;
        let mut c = Condition::all();
        if let Some(v) = &self.launch_setting {
            c = c.add(C::LaunchSettingId.eq(v.clone()));
        }
        if let Some(v) = &self.data_queue {
            c = c.add(C::DataQueueId.eq(v.clone()));
        }
        if let Some(v) = &self.error_type {
            c = c.add(C::ErrorType.eq(v.clone()));
        }
        if let Some(v) = &self.status {
            c = c.add(C::Status.eq(v.clone()));
        }
        if let Some(t) = self.from {
            c = c.add(C::ReceivedAt.gte(t));
        }
        if let Some(t) = self.to {
            c = c.add(C::ReceivedAt.lt(t));
        }
        c
    }
}

/// The `dead` dead letters `sel` takes.
pub(crate) fn selected(sel: &Selection) -> ServiceResult<Condition> {
    use dead_letters::Column as C;
    if !sel.ids.is_empty() {
        if sel.ids.len() > MAX_IDS {
            return Err(ServiceError::invalid(
                "ids",
                format!(
                    "{} ids given; at most {MAX_IDS} at once, select more with a filter",
                    sel.ids.len()
                ),
            ));
        }
        return Ok(Condition::all()
            .add(C::Status.eq(DEAD))
            .add(C::Id.is_in(sel.ids.iter().copied())));
    }
    let scope = Scope::of(&sel.filter).map_err(|e| match e {
        ServiceError::Invalid(mut errors) => {
            for f in &mut errors.0 {
                f.path = format!("filter.{}", f.path);
            }
            ServiceError::Invalid(errors)
        }
        other => other,
    })?;
    if scope.status.as_deref().is_some_and(|s| s != DEAD) {
        return Err(ServiceError::invalid(
            "filter.status",
            "only dead letters (status `dead`) can be replayed or deleted",
        ));
    }
    Ok(scope.condition().add(C::Status.eq(DEAD)))
}

/// How many `dead` dead letters `sel` takes: an operation's total.
pub async fn count(db: &DatabaseConnection, sel: &Selection) -> Result<u64, ServiceError> {
    let n = dead_letters::Entity::find()
        .filter(selected(sel)?)
        .count(db)
        .await?;
    Ok(n)
}

/// The next `limit` `dead` dead letters `sel` takes with an id above `after_id`, in ascending
/// id order: an operation pages through its selection with the last id of each batch, so a
/// batch that was replayed (now `replayed`) or deleted is not taken again.
pub async fn next_batch(
    db: &DatabaseConnection,
    sel: &Selection,
    after_id: i64,
    limit: u64,
) -> Result<Vec<dead_letters::Model>, ServiceError> {
    use dead_letters::Column as C;
    Ok(dead_letters::Entity::find()
        .filter(selected(sel)?)
        .filter(C::Id.gt(after_id))
        .order_by_asc(C::Id)
        .limit(limit)
        .all(db)
        .await?)
}

/// Marks dead letters as sent back to their subscription by `by` in `operation`: replayed once
/// more, no outcome yet (each was published with its next replay token, see [`replay`]).
pub async fn mark_replayed(
    db: &DatabaseConnection,
    ids: &[i64],
    by: &str,
    operation: uuid::Uuid,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    use dead_letters::Column as C;
    for chunk in ids.chunks(CHUNK) {
        dead_letters::Entity::update_many()
            .col_expr(C::Status, Expr::value(REPLAYED))
            .col_expr(C::ReplayedBy, Expr::value(by.to_owned()))
            .col_expr(C::ReplayedAt, Expr::value(now))
            .col_expr(C::ReplayCount, Expr::col(C::ReplayCount).add(1))
            .col_expr(C::ReplayOperation, Expr::value(operation))
            .col_expr(
                C::ReplayResult,
                Expr::value(am_domain::recovery::ReplayResult::Sent.as_str()),
            )
            .col_expr(C::ReplayResultAt, Expr::value(now))
            .col_expr(C::ReplayError, Expr::value(Option::<String>::None))
            .col_expr(C::ReplayDeadLetter, Expr::value(Option::<i64>::None))
            .filter(C::Id.is_in(chunk.iter().copied()))
            .exec(db)
            .await?;
    }
    Ok(())
}

/// Puts back what `previous` (the rows as they were read before [`mark_replayed`]) said of
/// their replay, for the replays the broker refused; a row replayed again since is left alone.
pub async fn unmark_replayed(
    db: &DatabaseConnection,
    previous: &[dead_letters::Model],
) -> Result<(), ServiceError> {
    use dead_letters::Column as C;
    // Rare (the broker refused a publication): one statement per row.
    for r in previous {
        dead_letters::Entity::update_many()
            .col_expr(C::Status, Expr::value(r.status.clone()))
            .col_expr(C::ReplayedBy, Expr::value(r.replayed_by.clone()))
            .col_expr(C::ReplayedAt, Expr::value(r.replayed_at))
            .col_expr(C::ReplayCount, Expr::value(r.replay_count))
            .col_expr(C::ReplayOperation, Expr::value(r.replay_operation))
            .col_expr(C::ReplayResult, Expr::value(r.replay_result.clone()))
            .col_expr(C::ReplayResultAt, Expr::value(r.replay_result_at))
            .col_expr(C::ReplayError, Expr::value(r.replay_error.clone()))
            .col_expr(C::ReplayDeadLetter, Expr::value(r.replay_dead_letter))
            .filter(C::Id.eq(r.id))
            .filter(C::ReplayCount.eq(r.replay_count.saturating_add(1)))
            .exec(db)
            .await?;
    }
    Ok(())
}

/// The token a dead letter's next replay carries.
pub fn next_replay_token(row: &dead_letters::Model) -> am_domain::wire::replay::ReplayToken {
    am_domain::wire::replay::ReplayToken {
        dead_letter: row.id,
        replay: row.replay_count.saturating_add(1),
    }
}

/// Deletes dead letters; how many there were.
pub async fn delete(db: &DatabaseConnection, ids: &[i64]) -> Result<u64, ServiceError> {
    let mut n = 0;
    for chunk in ids.chunks(CHUNK) {
        n += dead_letters::Entity::delete_many()
            .filter(dead_letters::Column::Id.is_in(chunk.iter().copied()))
            .exec(db)
            .await?
            .rows_affected;
    }
    Ok(n)
}
