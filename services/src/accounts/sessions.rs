//! Login sessions (docs/operations.md, "Sessions"). A session ends when it has not been used
//! for the idle time (`AM_SESSION_IDLE`), when it reaches its absolute age
//! (`AM_SESSION_MAX_AGE`) however busy it is, when its user logs out or revokes it, and at once
//! when its user is disabled or gets a new password.
//!
//! A session is stored under the SHA-256 of its cookie secret. Pages and the API name it by a
//! *handle*, a hash of that id, so what a page shows can neither log in nor be turned back
//! into the stored id.

use super::{AuthMethod, Principal, parse_role, random_secret, sha256_hex};
use crate::{
    ServiceError, Services,
    audit::{self, AuditEntry},
    entity::{sessions, users},
    error::ServiceResult,
};
use am_domain::{read::accounts::SessionInfo, roles::Operation};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, Set,
};

/// Longest `User-Agent` kept with a session.
const USER_AGENT_CHARS: usize = 200;
/// Characters of a session handle (64 bits: unique among one user's sessions).
const HANDLE_CHARS: usize = 16;

/// The handle of the session stored under `id`.
fn handle(id: &str) -> String {
    sha256_hex(id)[..HANDLE_CHARS].to_owned()
}

/// When a session last seen at `seen` and started at `created` ends: after the idle time,
/// never past its absolute age.
pub fn ends_at(
    created: DateTime<Utc>,
    seen: DateTime<Utc>,
    idle: Duration,
    max_age: Duration,
) -> DateTime<Utc> {
    (seen + idle).min(created + max_age)
}

/// Starts a login session for `principal` (from its address, with the browser's
/// `user_agent`); returns the cookie secret.
pub async fn create_session(
    services: &Services,
    principal: &Principal,
    user_agent: Option<&str>,
) -> ServiceResult<String> {
    let secret = random_secret();
    let now = Utc::now();
    let s = &services.settings;
    sessions::ActiveModel {
        id: Set(sha256_hex(&secret)),
        user_id: Set(principal.user_id),
        created_at: Set(now),
        expires_at: Set(ends_at(now, now, s.session_ttl, s.session_max_age)),
        last_seen_at: Set(now),
        address: Set(principal.address.clone()),
        user_agent: Set(user_agent
            .map(|ua| ua.chars().take(USER_AGENT_CHARS).collect::<String>())
            .filter(|ua| !ua.is_empty())),
    }
    .insert(&services.db)
    .await?;
    // Expired sessions are cleaned up opportunistically at login, which is rare enough.
    sessions::Entity::delete_many()
        .filter(sessions::Column::ExpiresAt.lt(now))
        .exec(&services.db)
        .await?;
    Ok(secret)
}

/// The principal of a session cookie, sliding its expiry forward (never past its absolute
/// age).
pub async fn resolve_session(
    services: &Services,
    secret: &str,
) -> ServiceResult<Option<Principal>> {
    let now = Utc::now();
    let s = &services.settings;
    let Some(session) = sessions::Entity::find_by_id(sha256_hex(secret))
        .one(&services.db)
        .await?
    else {
        return Ok(None);
    };
    if session.expires_at < now || session.created_at + s.session_max_age < now {
        return Ok(None);
    }
    let Some(user) = users::Entity::find_by_id(session.user_id)
        .one(&services.db)
        .await?
    else {
        return Ok(None);
    };
    if user.disabled {
        return Ok(None);
    }
    // Refresh at most once a minute to keep page loads from writing on every request.
    if now - session.last_seen_at > Duration::minutes(1) {
        let expires = ends_at(session.created_at, now, s.session_ttl, s.session_max_age);
        let mut active: sessions::ActiveModel = session.into();
        active.last_seen_at = Set(now);
        active.expires_at = Set(expires);
        active.update(&services.db).await?;
    }
    Ok(Some(Principal {
        user_id: user.id,
        name: user.name,
        role: parse_role(&user.role)?,
        via: AuthMethod::Session,
        address: None,
    }))
}

/// Ends the session of `secret` (logout).
pub async fn delete_session(db: &impl ConnectionTrait, secret: &str) -> ServiceResult<()> {
    sessions::Entity::delete_by_id(sha256_hex(secret))
        .exec(db)
        .await?;
    Ok(())
}

/// Ends every session of user `user_id` but the one of `keep` (a cookie secret); returns how
/// many ended.
pub async fn end_sessions(
    db: &impl ConnectionTrait,
    user_id: i64,
    keep: Option<&str>,
) -> ServiceResult<u64> {
    let mut delete = sessions::Entity::delete_many().filter(sessions::Column::UserId.eq(user_id));
    if let Some(secret) = keep {
        delete = delete.filter(sessions::Column::Id.ne(sha256_hex(secret)));
    }
    Ok(delete.exec(db).await?.rows_affected)
}

/// The caller's live sessions, the most recently used first; `current` is the cookie secret
/// of this request, if it came with one.
pub async fn list_own(
    services: &Services,
    who: &Principal,
    current: Option<&str>,
) -> ServiceResult<Vec<SessionInfo>> {
    who.require(Operation::OwnAccess)?;
    let now = Utc::now();
    let max_age = services.settings.session_max_age;
    let current = current.map(sha256_hex);
    let rows = sessions::Entity::find()
        .filter(sessions::Column::UserId.eq(who.user_id))
        .filter(sessions::Column::ExpiresAt.gte(now))
        .filter(sessions::Column::CreatedAt.gte(now - max_age))
        .order_by_desc(sessions::Column::LastSeenAt)
        .all(&services.db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|s| SessionInfo {
            handle: handle(&s.id),
            current: current.as_deref() == Some(s.id.as_str()),
            created_at: s.created_at,
            last_seen_at: s.last_seen_at,
            // Stored before a shorter absolute age was configured, it may say later.
            expires_at: s.expires_at.min(s.created_at + max_age),
            address: s.address,
            user_agent: s.user_agent,
        })
        .collect())
}

/// Ends one of the caller's own sessions, named by its handle; audited. Another user's
/// session is not found, whoever asks.
pub async fn revoke_own(
    db: &DatabaseConnection,
    who: &Principal,
    session: &str,
) -> ServiceResult<()> {
    who.require(Operation::OwnAccess)?;
    let txn = crate::db::begin_write(db).await?;
    let found = sessions::Entity::find()
        .filter(sessions::Column::UserId.eq(who.user_id))
        .all(&txn)
        .await?
        .into_iter()
        .find(|s| handle(&s.id) == session)
        .ok_or_else(|| ServiceError::NotFound(format!("session '{session}'")))?;
    let address = found.address.clone();
    sessions::Entity::delete_by_id(found.id).exec(&txn).await?;
    audit::record(
        &txn,
        AuditEntry::new(who, "revoke_session", "user", &who.name)
            .after(&serde_json::json!({ "session": session, "address": address })),
    )
    .await?;
    txn.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_ends_when_idle_and_never_after_its_absolute_age() {
        let t0 = DateTime::<Utc>::UNIX_EPOCH;
        let (idle, max) = (Duration::hours(12), Duration::days(7));
        assert_eq!(ends_at(t0, t0, idle, max), t0 + idle);
        let late = t0 + Duration::days(6) + Duration::hours(20);
        assert_eq!(ends_at(t0, late, idle, max), t0 + max, "capped by the age");
        let id = sha256_hex("a cookie secret");
        assert_eq!(handle(&id).len(), HANDLE_CHARS);
        assert!(
            !id.starts_with(&handle(&id)),
            "a handle is not a piece of the id"
        );
    }
}
