//! Managing people (admins) and one's own password: roles, disabling, password resets, and the
//! rule that the manager always keeps one active admin (docs/operations.md, Users and tokens).
//!
//! A user who is disabled, or whose password an admin resets, is signed out at once: their
//! sessions are deleted in the same transaction, and their API tokens stop working because
//! every request checks that the user is still enabled.

use super::{
    Principal, generate_password, hash_password, user_info, validate_password, verify_password,
};
use crate::{
    ServiceError, Services,
    audit::{self, AuditEntry},
    db::begin_write,
    entity::users,
    error::ServiceResult,
    login_limit::Attempt,
};
use am_domain::{
    read::accounts::UserInfo,
    roles::{Operation, Role},
};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DatabaseTransaction,
    DbBackend, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde::{Deserialize, Serialize};

/// What an admin changes about a user; fields left out stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct UserChange {
    pub role: Option<Role>,
    pub disabled: Option<bool>,
    /// A new password (the policy applies); the user's sessions end.
    #[schema(min_length = 12, max_length = 1024)]
    pub password: Option<String>,
}

/// Begins a user change. Two admins demoting each other at once must not both pass the
/// last-admin check: on SQLite the transaction holds the write lock from its start; on
/// PostgreSQL the active admins' rows are locked first, always in id order (so two changes
/// wait for each other instead of deadlocking).
async fn begin_change(db: &DatabaseConnection) -> ServiceResult<DatabaseTransaction> {
    let txn = begin_write(db).await?;
    if txn.get_database_backend() == DbBackend::Postgres {
        let _: Vec<i64> = users::Entity::find()
            .select_only()
            .column(users::Column::Id)
            .filter(users::Column::Role.eq(Role::Admin.as_str()))
            .filter(users::Column::Disabled.eq(false))
            .order_by_asc(users::Column::Id)
            .lock_exclusive()
            .into_tuple()
            .all(&txn)
            .await?;
    }
    Ok(txn)
}

async fn find(db: &impl ConnectionTrait, name: &str) -> ServiceResult<users::Model> {
    users::Entity::find()
        .filter(users::Column::Name.eq(name))
        .one(db)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("user '{name}'")))
}

/// Refuses a change that would leave no active admin.
async fn keep_an_admin(db: &impl ConnectionTrait, user: &users::Model) -> ServiceResult<()> {
    let others = users::Entity::find()
        .filter(users::Column::Role.eq(Role::Admin.as_str()))
        .filter(users::Column::Disabled.eq(false))
        .filter(users::Column::Id.ne(user.id))
        .count(db)
        .await?;
    if others == 0 {
        return Err(ServiceError::Conflict(format!(
            "'{}' is the last active admin; make another user admin first",
            user.name
        )));
    }
    Ok(())
}

async fn sign_out(db: &impl ConnectionTrait, user_id: i64) -> ServiceResult<u64> {
    super::sessions::end_sessions(db, user_id, None).await
}

/// Changes a user's role, enabled state or password (admins); audited with the state before and
/// after (never the password).
pub async fn update_user(
    db: &DatabaseConnection,
    actor: &Principal,
    name: &str,
    change: UserChange,
) -> ServiceResult<UserInfo> {
    actor.require(Operation::ManageUsers)?;
    let hash = match &change.password {
        Some(p) => {
            validate_password(name, p)?;
            Some(hash_password(p.clone()).await?)
        }
        None => None,
    };
    let txn = begin_change(db).await?;
    let user = find(&txn, name).await?;
    let before = user_info(&user)?;
    let demoted = before.role == Role::Admin && change.role.is_some_and(|r| r != Role::Admin);
    let disabled = !before.disabled && change.disabled == Some(true);
    if before.role == Role::Admin && !before.disabled && (demoted || disabled) {
        keep_an_admin(&txn, &user).await?;
    }
    let user_id = user.id;
    let mut row: users::ActiveModel = user.into();
    if let Some(role) = change.role {
        row.role = Set(role.as_str().to_owned());
    }
    if let Some(d) = change.disabled {
        row.disabled = Set(d);
    }
    let password_set = hash.is_some();
    if let Some(h) = hash {
        row.password_hash = Set(h);
    }
    let after = user_info(&row.update(&txn).await?)?;
    if disabled || password_set {
        sign_out(&txn, user_id).await?;
    }
    let mut entry = AuditEntry::new(actor, "update", "user", name)
        .before(&before)
        .after(&after);
    if password_set {
        entry = entry.cause("password set by an admin");
    }
    audit::record(&txn, entry).await?;
    txn.commit().await?;
    Ok(after)
}

/// Gives a user a new generated password (admins), shown only in the answer, and signs them
/// out.
pub async fn reset_password(
    db: &DatabaseConnection,
    actor: &Principal,
    name: &str,
) -> ServiceResult<String> {
    actor.require(Operation::ManageUsers)?;
    let password = generate_password();
    let hash = hash_password(password.clone()).await?;
    let txn = begin_write(db).await?;
    let user = find(&txn, name).await?;
    let user_id = user.id;
    let mut row: users::ActiveModel = user.into();
    row.password_hash = Set(hash);
    row.update(&txn).await?;
    sign_out(&txn, user_id).await?;
    audit::record(&txn, AuditEntry::new(actor, "reset_password", "user", name)).await?;
    txn.commit().await?;
    Ok(password)
}

/// Changes the caller's own password and ends their other sessions (`keep` is the cookie
/// secret of the session that asks, if any); the current one is required, and wrong guesses count
/// against the login limit.
pub async fn change_own_password(
    services: &Services,
    who: &Principal,
    current: &str,
    new: &str,
    keep: Option<&str>,
) -> ServiceResult<()> {
    // The same count as a login of this user from this address: a session left open is no
    // way around the limit, and guessing here locks no one else out.
    let attempt = Attempt {
        user: &who.name,
        address: who.address.as_deref().unwrap_or_default(),
    };
    let now = std::time::Instant::now();
    if let Err(retry_after_secs) = services.login_limiter.reserve(attempt, now) {
        return Err(ServiceError::RateLimited { retry_after_secs });
    }
    let user = users::Entity::find_by_id(who.user_id)
        .one(&services.db)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("user '{}'", who.name)))?;
    if !verify_password(current.to_owned(), user.password_hash.clone()).await {
        // Someone at an open session guessing its owner's password leaves a trace.
        audit::record(
            &services.db,
            AuditEntry::new(who, "change_password_failed", "user", &who.name)
                .cause("wrong current password"),
        )
        .await?;
        return Err(ServiceError::invalid(
            "current_password",
            "the current password is not right",
        ));
    }
    services.login_limiter.succeeded(attempt);
    validate_password(&user.name, new)?;
    let hash = hash_password(new.to_owned()).await?;
    let txn = begin_write(&services.db).await?;
    let mut row: users::ActiveModel = user.into();
    row.password_hash = Set(hash);
    row.update(&txn).await?;
    let ended = super::sessions::end_sessions(&txn, who.user_id, keep).await?;
    audit::record(
        &txn,
        AuditEntry::new(who, "change_password", "user", &who.name)
            .cause(format!("{ended} other session(s) signed out")),
    )
    .await?;
    txn.commit().await?;
    Ok(())
}
