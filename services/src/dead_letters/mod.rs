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

use am_domain::read::failures::FailureEntry;
pub use headers::{BROKER_ERROR_PREFIX, BodyEncoding, BodyView, body_view, parked_at, parse};
pub use ingest::{IncomingDeadLetter, StoreOutcome, store};
pub use read::{get, list};

use crate::{
    entity::dead_letters,
    error::{ServiceError, ServiceResult},
    filters,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, Condition, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait},
};
use serde::{Deserialize, Serialize};

/// Waiting to be replayed or deleted.
pub const DEAD: &str = "dead";
/// Sent back to its launch setting's subscription.
pub const REPLAYED: &str = "replayed";
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

/// Which dead letters a list or a bulk operation takes; blank means no filter.
#[derive(
    Debug,
    Clone,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    utoipa::IntoParams,
    utoipa::ToSchema,
)]
#[into_params(parameter_in = Query)]
#[serde(default)]
pub struct DeadLetterFilter {
    /// Dead letters of this launch setting (id).
    pub launch_setting: Option<String>,
    /// Dead letters from this data queue (id).
    pub data_queue: Option<String>,
    /// Of this error type (the last failure's; `broker:delivery_limit` for messages the
    /// broker dead-lettered itself).
    pub error_type: Option<String>,
    /// `dead` or `replayed`.
    pub status: Option<String>,
    /// Received at or after this time (RFC 3339, `YYYY-MM-DDTHH:MM` or `YYYY-MM-DD`, UTC).
    pub from: Option<String>,
    /// Received before this time.
    pub to: Option<String>,
}

/// The dead letters a bulk operation works on: exactly `ids` when given, otherwise every one
/// matching `filter`. Only `dead` ones are replayed or deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Selection {
    /// Non-empty: exactly these dead letters (at most 10,000).
    pub ids: Vec<i64>,
    /// Used when `ids` is empty: every dead letter matching it.
    pub filter: DeadLetterFilter,
}

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

impl DeadLetterFilter {
    pub(crate) fn parse(&self) -> ServiceResult<Scope> {
        let status = filters::text(&self.status);
        if let Some(s) = &status
            && !STATUSES.contains(&s.as_str())
        {
            return Err(ServiceError::invalid(
                "status",
                format!("unknown status `{s}`; one of {}", STATUSES.join(", ")),
            ));
        }
        let (from, to) = filters::range(&self.from, &self.to)?;
        Ok(Scope {
            launch_setting: filters::text(&self.launch_setting),
            data_queue: filters::text(&self.data_queue),
            error_type: filters::text(&self.error_type),
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
    let scope = sel.filter.parse().map_err(|e| match e {
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

/// A dead letter as lists show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeadLetterSummary {
    pub id: i64,
    /// The launch setting that gave up on it; `None` when no header says.
    pub launch_setting: Option<String>,
    pub data_queue: Option<String>,
    pub message_id: Option<String>,
    pub error_type: Option<String>,
    /// The last failure's message (the first 300 characters in lists).
    pub error_message: Option<String>,
    /// Deliveries before it was given up on (0: unknown).
    pub attempts: i32,
    pub first_failure_at: Option<DateTime<Utc>>,
    pub last_failure_at: Option<DateTime<Utc>>,
    /// The node's host that gave up.
    pub host: Option<String>,
    /// When the manager took it from the dead-letter queue.
    pub received_at: DateTime<Utc>,
    /// `dead` or `replayed`.
    pub status: String,
    pub replay_count: i32,
    pub replayed_at: Option<DateTime<Utc>>,
    pub replayed_by: Option<String>,
    /// What became of its last replay; `None` before the first.
    pub replay: Option<replay::ReplayView>,
    /// When it went through its launch setting's sump (dead-letter policy `park`) before it
    /// died: it already had its one more round after the cool-down.
    pub parked_at: Option<String>,
    pub body_size: u64,
    /// The start of the body, whitespace collapsed.
    pub body_preview: String,
}

/// One page of dead letters, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeadLetterPage {
    /// Dead letters matching the filter (all pages).
    pub total: u64,
    pub items: Vec<DeadLetterSummary>,
    /// Cursor (`after`) of the next page, when there is one.
    pub next: Option<i64>,
}

/// The dead-letter policy of the launch setting a dead letter came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PolicyView {
    /// `dead-letter`, `park`, `retry-forever` or `forward`.
    pub policy: String,
    /// For `park`: how long a message rests in the sump before its one more round.
    pub park_cooldown: String,
    pub max_deliveries: i32,
}

/// Where a dead letter's copy goes (dead-letter policy `forward`) and whether it got there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ForwardView {
    /// The exchange.
    pub to: String,
    /// When the broker confirmed the copy; `None` while it is owed.
    pub forwarded_at: Option<DateTime<Utc>>,
    /// Tries so far.
    pub attempts: i32,
    /// When it is tried next, while owed.
    pub next_at: Option<DateTime<Utc>>,
    /// Why the last try failed.
    pub error: Option<String>,
}

/// One dead letter with everything about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeadLetterDetail {
    pub letter: DeadLetterSummary,
    /// The routing key it reached the dead-letter queue with.
    pub routing_key: Option<String>,
    pub content_type: Option<String>,
    /// Its AMQP headers.
    #[schema(value_type = Object)]
    pub headers: serde_json::Value,
    /// Its other AMQP properties (correlation id, timestamp, ...).
    #[schema(value_type = Object)]
    pub properties: serde_json::Value,
    pub body: BodyView,
    /// The launch setting's policy, when it still exists.
    pub policy: Option<PolicyView>,
    /// Failures reported for this message by this launch setting, newest first (at most 50).
    pub failures: Vec<FailureEntry>,
    /// Whether there are older failures than those shown.
    pub more_failures: bool,
    /// The copy it owes an exchange (dead-letter policy `forward`), if any.
    pub forward: Option<ForwardView>,
}
