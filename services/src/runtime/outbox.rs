//! The outbox's database side for the relay that publishes it: claim a batch for one replica,
//! mark what the broker confirmed as sent, and hand back what it did not (tried again a little
//! later, with the reason). A claim that outlives its replica expires and another takes over,
//! so several replicas relay without sending a row twice.

use crate::{entity::outbox, error::ServiceResult};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait, Query},
};

/// How long a claim holds before another replica may take the rows.
pub const CLAIM: Duration = Duration::seconds(30);
/// How long a row the broker did not take waits before it is tried again.
pub const RETRY_AFTER: Duration = Duration::seconds(1);

/// Claims up to `limit` unsent rows that are due for `me` and returns them, oldest first.
pub async fn claim(
    db: &DatabaseConnection,
    me: &str,
    now: DateTime<Utc>,
    limit: u64,
) -> ServiceResult<Vec<outbox::Model>> {
    let claimable = Query::select()
        .column(outbox::Column::Id)
        .from(outbox::Entity)
        .and_where(outbox::Column::SentAt.is_null())
        .and_where(outbox::Column::AvailableAt.lte(now))
        .cond_where(
            sea_orm::Condition::any()
                .add(outbox::Column::ClaimedUntil.is_null())
                .add(outbox::Column::ClaimedUntil.lt(now)),
        )
        .order_by(outbox::Column::Id, sea_orm::Order::Asc)
        .limit(limit)
        .to_owned();
    // The claimability is checked again on each row: on PostgreSQL a replica whose update
    // waited for another's re-checks the row's own conditions, not the subquery's, so a row
    // the other just claimed is not claimed (and published) twice.
    outbox::Entity::update_many()
        .col_expr(outbox::Column::ClaimedBy, Expr::value(Some(me.to_owned())))
        .col_expr(outbox::Column::ClaimedUntil, Expr::value(Some(now + CLAIM)))
        .filter(outbox::Column::Id.in_subquery(claimable))
        .filter(outbox::Column::SentAt.is_null())
        .filter(
            sea_orm::Condition::any()
                .add(outbox::Column::ClaimedUntil.is_null())
                .add(outbox::Column::ClaimedUntil.lt(now)),
        )
        .exec(db)
        .await?;
    Ok(outbox::Entity::find()
        .filter(outbox::Column::ClaimedBy.eq(me))
        .filter(outbox::Column::SentAt.is_null())
        .filter(outbox::Column::ClaimedUntil.gt(now))
        .order_by_asc(outbox::Column::Id)
        .limit(limit)
        .all(db)
        .await?)
}

/// Marks rows the broker confirmed as sent.
pub async fn mark_sent(
    db: &DatabaseConnection,
    ids: &[i64],
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    for chunk in ids.chunks(500) {
        outbox::Entity::update_many()
            .col_expr(outbox::Column::SentAt, Expr::value(Some(now)))
            .filter(outbox::Column::Id.is_in(chunk.iter().copied()))
            .exec(db)
            .await?;
    }
    Ok(())
}

/// Gives back rows the broker refused or the connection lost: unclaimed, due again after
/// [`RETRY_AFTER`], with `reason` kept.
pub async fn release(
    db: &DatabaseConnection,
    ids: &[i64],
    reason: &str,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    for chunk in ids.chunks(500) {
        outbox::Entity::update_many()
            .col_expr(
                outbox::Column::ClaimedBy,
                Expr::value(Option::<String>::None),
            )
            .col_expr(
                outbox::Column::ClaimedUntil,
                Expr::value(Option::<DateTime<Utc>>::None),
            )
            .col_expr(
                outbox::Column::Attempts,
                Expr::col(outbox::Column::Attempts).add(1),
            )
            .col_expr(
                outbox::Column::LastError,
                Expr::value(Some(reason.to_owned())),
            )
            .col_expr(outbox::Column::AvailableAt, Expr::value(now + RETRY_AFTER))
            .filter(outbox::Column::Id.is_in(chunk.iter().copied()))
            .exec(db)
            .await?;
    }
    Ok(())
}
