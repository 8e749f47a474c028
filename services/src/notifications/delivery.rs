//! The database side of delivering notifications: claim due ones for one replica (a claim that
//! outlives its replica expires, so another takes over), then record what the endpoint made of
//! each — delivered, or tried again after a growing delay until the retry budget is spent.
//! Every write is a compare-and-set on the claim, so a replica whose claim expired cannot
//! overwrite what the next one recorded.

use crate::{entity::notifications, error::ServiceResult};
use am_domain::notify::{Delivery, give_up, retry_delay};
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use sea_orm::{
    ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait, Query},
};
use sha2::Sha256;

/// How long a claim holds: longer than a delivery's timeout, so a slow endpoint's notification
/// is not taken by another replica while it is still being sent.
pub const CLAIM: Duration = Duration::seconds(60);

/// Claims up to `limit` due notifications for `me` and returns them, oldest due first (with
/// those `me` claimed before and still holds).
pub async fn claim(
    db: &DatabaseConnection,
    me: &str,
    now: DateTime<Utc>,
    limit: u64,
) -> ServiceResult<Vec<notifications::Model>> {
    use notifications::Column as C;
    let claimable = Query::select()
        .column(C::Id)
        .from(notifications::Entity)
        .and_where(C::Status.eq(Delivery::Pending.as_str()))
        .and_where(C::NextAttemptAt.lte(now))
        .cond_where(
            Condition::any()
                .add(C::ClaimedUntil.is_null())
                .add(C::ClaimedUntil.lt(now)),
        )
        .order_by(C::NextAttemptAt, sea_orm::Order::Asc)
        .limit(limit)
        .to_owned();
    // The claimability is checked again on each row, not only in the subquery: on PostgreSQL
    // a replica whose update waited for another's re-checks the row's own conditions (not the
    // subquery's, computed before), so a row the other just claimed is not claimed twice.
    notifications::Entity::update_many()
        .col_expr(C::ClaimedBy, Expr::value(Some(me.to_owned())))
        .col_expr(C::ClaimedUntil, Expr::value(Some(now + CLAIM)))
        .filter(C::Id.in_subquery(claimable))
        .filter(C::Status.eq(Delivery::Pending.as_str()))
        .filter(
            Condition::any()
                .add(C::ClaimedUntil.is_null())
                .add(C::ClaimedUntil.lt(now)),
        )
        .exec(db)
        .await?;
    Ok(notifications::Entity::find()
        .filter(C::ClaimedBy.eq(me))
        .filter(C::Status.eq(Delivery::Pending.as_str()))
        .filter(C::ClaimedUntil.gt(now))
        .order_by_asc(C::NextAttemptAt)
        .limit(limit)
        .all(db)
        .await?)
}

/// Whether `me` still holds the claim of pending notification `id`: checked right before a
/// try, since a claim round that read the table before the previous try was recorded returns
/// a row that is no longer due.
pub async fn holds(
    db: &DatabaseConnection,
    id: i64,
    me: &str,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    use notifications::Column as C;
    Ok(notifications::Entity::find_by_id(id)
        .filter(C::ClaimedBy.eq(me))
        .filter(C::Status.eq(Delivery::Pending.as_str()))
        .filter(C::ClaimedUntil.gt(now))
        .one(db)
        .await?
        .is_some())
}

/// The endpoint accepted notification `id`. False when `me` no longer held its claim.
pub async fn delivered(
    db: &DatabaseConnection,
    id: i64,
    me: &str,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    use notifications::Column as C;
    let r = notifications::Entity::update_many()
        .col_expr(C::Status, Expr::value(Delivery::Delivered.as_str()))
        .col_expr(C::Attempts, Expr::col(C::Attempts).add(1))
        .col_expr(C::DeliveredAt, Expr::value(Some(now)))
        .col_expr(C::ClaimedBy, Expr::value(Option::<String>::None))
        .col_expr(C::ClaimedUntil, Expr::value(Option::<DateTime<Utc>>::None))
        .filter(C::Id.eq(id))
        .filter(C::ClaimedBy.eq(me))
        .filter(C::Status.eq(Delivery::Pending.as_str()))
        .exec(db)
        .await?;
    Ok(r.rows_affected == 1)
}

/// When a failed delivery is tried again and when it is given up.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    /// The wait after the first failed try; it doubles with each (see [`retry_delay`]).
    pub first: Duration,
    /// Given up once this long has passed since it was raised (or last resent).
    pub budget: Duration,
}

/// A try of `n` failed with `error`: tried again after [`retry_delay`], or `failed` for good
/// once the budget is spent. Returns the new status.
pub async fn attempt_failed(
    db: &DatabaseConnection,
    n: &notifications::Model,
    me: &str,
    error: &str,
    retry: Retry,
    now: DateTime<Utc>,
) -> ServiceResult<Delivery> {
    use notifications::Column as C;
    let attempts = u32::try_from(n.attempts).unwrap_or(0).saturating_add(1);
    let since = n.resent_at.unwrap_or(n.created_at);
    let status = if give_up(since, now, retry.budget) {
        Delivery::Failed
    } else {
        Delivery::Pending
    };
    notifications::Entity::update_many()
        .col_expr(C::Status, Expr::value(status.as_str()))
        .col_expr(C::Attempts, Expr::col(C::Attempts).add(1))
        .col_expr(C::LastError, Expr::value(Some(error.to_owned())))
        .col_expr(
            C::NextAttemptAt,
            Expr::value(now + retry_delay(attempts, retry.first)),
        )
        .col_expr(C::ClaimedBy, Expr::value(Option::<String>::None))
        .col_expr(C::ClaimedUntil, Expr::value(Option::<DateTime<Utc>>::None))
        .filter(C::Id.eq(n.id))
        .filter(C::ClaimedBy.eq(me))
        .filter(C::Status.eq(Delivery::Pending.as_str()))
        .exec(db)
        .await?;
    Ok(status)
}

/// Hands a claimed notification back unsent, due at `at` (the endpoint's rate cap was reached).
pub async fn postpone(
    db: &DatabaseConnection,
    id: i64,
    me: &str,
    at: DateTime<Utc>,
) -> ServiceResult<()> {
    use notifications::Column as C;
    notifications::Entity::update_many()
        .col_expr(C::NextAttemptAt, Expr::value(at))
        .col_expr(C::ClaimedBy, Expr::value(Option::<String>::None))
        .col_expr(C::ClaimedUntil, Expr::value(Option::<DateTime<Utc>>::None))
        .filter(C::Id.eq(id))
        .filter(C::ClaimedBy.eq(me))
        .exec(db)
        .await?;
    Ok(())
}

/// `sha256=<hex HMAC-SHA256 of body>` with `secret` as the key: the value of the
/// `X-Agent-Manager-Signature` header.
pub fn signature(secret: &str, body: &[u8]) -> String {
    // HMAC takes a key of any length.
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(m) => m,
        Err(_) => return String::new(),
    };
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_rfc_4231_hmac_sha256() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
