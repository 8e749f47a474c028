//! API tokens (docs/operations.md, Users and tokens): each user creates, lists and revokes their
//! own; admins see and revoke everyone's. A token may carry a role lower than its user's (a
//! viewer token for a metrics scraper) and an expiry; it is shown once, stored as its SHA-256,
//! and records when and from where it was last used.

use super::{AuthMethod, Principal, TOKEN_PREFIX, parse_role, random_secret, sha256_hex};
use crate::{
    ServiceError,
    audit::{self, AuditEntry},
    db::begin_write,
    entity::{api_tokens, users},
    error::ServiceResult,
};
use am_domain::{
    read::accounts::{CreatedToken, NewToken, TokenInfo},
    roles::{Operation, Role},
};
use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, Set,
};

/// The lower of two roles.
fn lower(a: Role, b: Role) -> Role {
    if a.allows(b) { b } else { a }
}

fn info(t: &api_tokens::Model, user: &users::Model) -> ServiceResult<TokenInfo> {
    let user_role = parse_role(&user.role)?;
    let own = t.role.as_deref().map(parse_role).transpose()?;
    Ok(TokenInfo {
        id: t.id,
        user: user.name.clone(),
        name: t.name.clone(),
        prefix: t.prefix.clone(),
        role: own.map_or(user_role, |r| lower(r, user_role)),
        created_at: t.created_at,
        expires_at: t.expires_at,
        last_used_at: t.last_used_at,
        last_used_from: t.last_used_from.clone(),
        revoked_at: t.revoked_at,
    })
}

/// Creates an API token for a user with their role and no expiry (the command line's `token
/// create` without options); returns the token, shown only this once.
pub async fn create_token(
    db: &DatabaseConnection,
    actor: &Principal,
    user_name: &str,
    token_name: &str,
) -> ServiceResult<String> {
    let new = NewToken {
        user: Some(user_name.to_owned()),
        name: token_name.to_owned(),
        role: None,
        expires_at: None,
    };
    Ok(create(db, actor, new).await?.token)
}

/// Creates a token: the caller's own, or (admins) another user's.
pub async fn create(
    db: &DatabaseConnection,
    actor: &Principal,
    new: NewToken,
) -> ServiceResult<CreatedToken> {
    actor.require(Operation::OwnAccess)?;
    let user_name = new.user.clone().unwrap_or_else(|| actor.name.clone());
    if user_name != actor.name {
        actor.require(Operation::ManageUsers)?;
    }
    let name = new.name.trim();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(ServiceError::invalid(
            "name",
            "a token's name must be 1–64 characters, e.g. grafana",
        ));
    }
    let now = Utc::now();
    if new.expires_at.is_some_and(|e| e <= now) {
        return Err(ServiceError::invalid(
            "expires_at",
            "the expiry must be in the future",
        ));
    }
    let txn = begin_write(db).await?;
    let user = users::Entity::find()
        .filter(users::Column::Name.eq(&user_name))
        .one(&txn)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("user '{user_name}'")))?;
    let user_role = parse_role(&user.role)?;
    if let Some(r) = new.role
        && !(actor.role.allows(r) && user_role.allows(r))
    {
        return Err(ServiceError::invalid(
            "role",
            format!(
                "a token's role is at most its user's ({user_role}) and yours ({})",
                actor.role
            ),
        ));
    }
    let token = format!("{TOKEN_PREFIX}{}", random_secret());
    let prefix: String = token.chars().take(TOKEN_PREFIX.len() + 6).collect();
    let row = api_tokens::ActiveModel {
        user_id: Set(user.id),
        name: Set(name.to_owned()),
        token_hash: Set(sha256_hex(&token)),
        prefix: Set(prefix),
        created_at: Set(now),
        last_used_at: Set(None),
        expires_at: Set(new.expires_at),
        revoked_at: Set(None),
        role: Set(new.role.map(|r| r.as_str().to_owned())),
        last_used_from: Set(None),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    let info = info(&row, &user)?;
    audit::record(
        &txn,
        AuditEntry::new(actor, "create", "token", &row.id.to_string()).after(&info),
    )
    .await?;
    txn.commit().await?;
    Ok(CreatedToken { token, info })
}

/// The caller's tokens, or with `all` (admins) everyone's, newest first.
pub async fn list(
    db: &impl ConnectionTrait,
    actor: &Principal,
    all: bool,
) -> ServiceResult<Vec<TokenInfo>> {
    actor.require(Operation::OwnAccess)?;
    if all {
        actor.require(Operation::ManageUsers)?;
    }
    let mut q = api_tokens::Entity::find()
        .find_also_related(users::Entity)
        .order_by_desc(api_tokens::Column::Id);
    if !all {
        q = q.filter(users::Column::Name.eq(actor.name.as_str()));
    }
    q.all(db)
        .await?
        .iter()
        .filter_map(|(t, u)| u.as_ref().map(|u| info(t, u)))
        .collect()
}

/// Revokes a token: the caller's own, or (admins) anyone's. Revoking a revoked token changes
/// nothing.
pub async fn revoke(
    db: &DatabaseConnection,
    actor: &Principal,
    id: i64,
) -> ServiceResult<TokenInfo> {
    actor.require(Operation::OwnAccess)?;
    let txn = begin_write(db).await?;
    let not_found = || ServiceError::NotFound(format!("token {id}"));
    let (token, user) = api_tokens::Entity::find_by_id(id)
        .find_also_related(users::Entity)
        .one(&txn)
        .await?
        .ok_or_else(not_found)?;
    let user = user.ok_or_else(not_found)?;
    if user.name != actor.name && !actor.role.may(Operation::ManageUsers) {
        // Someone else's token is not shown to exist.
        return Err(not_found());
    }
    if token.revoked_at.is_some() {
        return info(&token, &user);
    }
    let before = info(&token, &user)?;
    let mut row: api_tokens::ActiveModel = token.into();
    row.revoked_at = Set(Some(Utc::now()));
    let after = info(&row.update(&txn).await?, &user)?;
    audit::record(
        &txn,
        AuditEntry::new(actor, "revoke", "token", &id.to_string())
            .before(&before)
            .after(&after),
    )
    .await?;
    txn.commit().await?;
    Ok(after)
}

/// The principal of a Bearer token, if the token is valid: acting with the lower of the token's
/// and its user's role. `client` is recorded as where it was last used.
pub async fn resolve_token(
    db: &impl ConnectionTrait,
    token: &str,
    client: &str,
) -> ServiceResult<Option<Principal>> {
    if !token.starts_with(TOKEN_PREFIX) {
        return Ok(None);
    }
    let now = Utc::now();
    let Some(row) = api_tokens::Entity::find()
        .filter(api_tokens::Column::TokenHash.eq(sha256_hex(token)))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    if row.revoked_at.is_some() || row.expires_at.is_some_and(|e| e < now) {
        return Ok(None);
    }
    let Some(user) = users::Entity::find_by_id(row.user_id).one(db).await? else {
        return Ok(None);
    };
    if user.disabled {
        return Ok(None);
    }
    let role = info(&row, &user)?.role;
    let from = (!client.is_empty()).then(|| client.to_owned());
    // Written at most once a minute per token (or when the address changes), not per request.
    if row
        .last_used_at
        .is_none_or(|t| now - t > chrono::Duration::minutes(1))
        || row.last_used_from != from
    {
        let mut active: api_tokens::ActiveModel = row.into();
        active.last_used_at = Set(Some(now));
        active.last_used_from = Set(from.clone());
        active.update(db).await?;
    }
    Ok(Some(Principal {
        user_id: user.id,
        name: user.name,
        role,
        via: AuthMethod::Token,
        address: from,
    }))
}
