//! Dead-letter policy `forward`: besides being kept here, each dead letter of such a launch
//! setting owes a copy to the exchange the launch setting names. The copy is sent from the
//! database (the dead letter is stored first, with the copy marked as owed), so a missing
//! exchange or a broker outage delays it, never loses it: a failed try is recorded on the dead
//! letter and tried again later, with growing delays.
//!
//! Several replicas forward at once without sending a copy twice: a replica claims due rows by
//! moving their next try past its claim's end, in one statement that only takes rows still due.

use super::DEAD;
use crate::{entity::dead_letters, error::ServiceResult};
use chrono::{DateTime, Duration, SubsecRound, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait},
};

/// Why a copy did not reach the forward exchange; kept on the dead letter (`forward_error`) for
/// the operator, so each says what to do. `detail` is the broker client's own words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForwardError {
    #[error("cannot open a broker channel: {0}")]
    NoChannel(String),
    #[error("cannot enable publisher confirms: {0}")]
    NoConfirms(String),
    #[error("cannot publish to exchange `{exchange}`: {detail}")]
    Publish { exchange: String, detail: String },
    #[error("the broker did not confirm the copy within {0} s")]
    Unconfirmed(u64),
    #[error("exchange `{0}` does not exist: create it (the manager does not)")]
    NoExchange(String),
    #[error("the broker lost the copy: {0}")]
    Lost(String),
    #[error("the broker refused the copy for `{0}`")]
    Refused(String),
    /// Published mandatory and returned: no queue is bound for the launch setting's key.
    #[error("exchange `{exchange}` routes the copy to no queue (routing key `{routing_key}`)")]
    Unrouted {
        exchange: String,
        routing_key: String,
    },
}

/// How long a claim holds before another replica may take the rows (a try takes well under a
/// second per row).
pub const CLAIM: Duration = Duration::seconds(60);
/// The longest wait between two tries of one copy.
pub const MAX_BACKOFF: Duration = Duration::minutes(5);

/// How long to wait after the `attempts`-th failed try: 1 s, doubling, at most
/// [`MAX_BACKOFF`].
pub fn backoff(attempts: i32) -> Duration {
    let doublings = u32::try_from(attempts.saturating_sub(1).clamp(0, 16)).unwrap_or(0);
    (Duration::seconds(1) * 2_i32.pow(doublings)).min(MAX_BACKOFF)
}

/// Microsecond precision: what both databases store, so the claim written is read back equal.
fn db_time(t: DateTime<Utc>) -> DateTime<Utc> {
    t.trunc_subsecs(6)
}

/// Claims up to `limit` dead letters whose copy is due at `now`, oldest due first, and returns
/// them. Only dead letters still dead owe a copy (one replayed or deleted meanwhile does not).
pub async fn claim(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    limit: u64,
) -> ServiceResult<Vec<dead_letters::Model>> {
    let now = db_time(now);
    let until = now + CLAIM;
    // Read first: an idle forwarder only reads, and takes no write lock.
    let due: Vec<i64> = dead_letters::Entity::find()
        .select_only()
        .column(dead_letters::Column::Id)
        .filter(dead_letters::Column::ForwardNextAt.lte(now))
        .filter(dead_letters::Column::Status.eq(DEAD))
        .order_by_asc(dead_letters::Column::ForwardNextAt)
        .limit(limit)
        .into_tuple()
        .all(db)
        .await?;
    if due.is_empty() {
        return Ok(Vec::new());
    }
    // Rows another replica claimed meanwhile are no longer due, so this takes none of them.
    dead_letters::Entity::update_many()
        .col_expr(dead_letters::Column::ForwardNextAt, Expr::value(until))
        .filter(dead_letters::Column::Id.is_in(due.iter().copied()))
        .filter(dead_letters::Column::ForwardNextAt.lte(now))
        .exec(db)
        .await?;
    Ok(dead_letters::Entity::find()
        .filter(dead_letters::Column::Id.is_in(due))
        .filter(dead_letters::Column::ForwardNextAt.eq(until))
        .order_by_asc(dead_letters::Column::Id)
        .all(db)
        .await?)
}

/// Records what became of the tries of claimed dead letters: a confirmed copy is done; a
/// failed one is tried again after [`backoff`], its error kept for the operator.
pub async fn settle(
    db: &DatabaseConnection,
    tried: &[(dead_letters::Model, Result<(), ForwardError>)],
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let now = db_time(now);
    let sent: Vec<i64> = tried
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(row, _)| row.id)
        .collect();
    for chunk in sent.chunks(500) {
        dead_letters::Entity::update_many()
            .col_expr(
                dead_letters::Column::ForwardNextAt,
                Expr::value(Option::<DateTime<Utc>>::None),
            )
            .col_expr(dead_letters::Column::ForwardedAt, Expr::value(now))
            .col_expr(
                dead_letters::Column::ForwardError,
                Expr::value(Option::<String>::None),
            )
            .col_expr(
                dead_letters::Column::ForwardAttempts,
                Expr::col(dead_letters::Column::ForwardAttempts).add(1),
            )
            .filter(dead_letters::Column::Id.is_in(chunk.iter().copied()))
            .exec(db)
            .await?;
    }
    for (row, result) in tried {
        let Err(error) = result else { continue };
        let attempts = row.forward_attempts.saturating_add(1);
        dead_letters::Entity::update_many()
            .col_expr(
                dead_letters::Column::ForwardNextAt,
                Expr::value(now + backoff(attempts)),
            )
            .col_expr(dead_letters::Column::ForwardAttempts, Expr::value(attempts))
            .col_expr(
                dead_letters::Column::ForwardError,
                Expr::value(error.to_string()),
            )
            .filter(dead_letters::Column::Id.eq(row.id))
            .exec(db)
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tries_wait_longer_each_time_up_to_five_minutes() {
        let secs: Vec<i64> = (1..=12).map(|a| backoff(a).num_seconds()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300]);
        assert_eq!(backoff(0).num_seconds(), 1);
        assert_eq!(backoff(i32::MAX), MAX_BACKOFF);
    }
}
