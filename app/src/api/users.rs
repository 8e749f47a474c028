//! Server functions of the Users page: the list and every change an admin makes (create, role,
//! disable/enable, reset password), and each user's own password change.

use crate::error::UiError;
use am_domain::{
    read::accounts::{TokenInfo, UserInfo},
    roles::Role,
};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsersView {
    /// The caller's own name.
    pub me: String,
    /// Whether the caller manages users; the list is empty otherwise.
    pub is_admin: bool,
    pub users: Vec<UserInfo>,
    pub now: chrono::DateTime<chrono::Utc>,
}

#[server(prefix = "/ui", endpoint = "users", input = Json)]
pub async fn list_users() -> Result<UsersView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let is_admin = who.role.may(Operation::ManageUsers);
    let users = if is_admin {
        am_services::accounts::list_users(&services()?.db, &who).await?
    } else {
        Vec::new()
    };
    Ok(UsersView {
        me: who.name,
        is_admin,
        users,
        now: chrono::Utc::now(),
    })
}

/// Creates a user; an empty password is generated and returned, to be shown this once.
#[server(prefix = "/ui", endpoint = "create_user", input = Json)]
pub async fn create_user(
    name: String,
    role: Role,
    password: String,
) -> Result<Option<String>, UiError> {
    use super::ssr::*;
    let who = require(Operation::ManageUsers)?;
    let name = name.trim().to_owned();
    let generated = password
        .is_empty()
        .then(am_services::accounts::generate_password);
    let password = generated.clone().unwrap_or(password);
    am_services::accounts::create_user(&services()?.db, &who, &name, &password, role).await?;
    Ok(generated)
}

/// Changes a user's role or enabled state.
#[server(prefix = "/ui", endpoint = "update_user", input = Json)]
pub async fn update_user(
    name: String,
    role: Option<Role>,
    disabled: Option<bool>,
) -> Result<(), UiError> {
    use super::ssr::*;
    use am_services::accounts::people::{self, UserChange};
    let who = require(Operation::ManageUsers)?;
    let change = UserChange {
        role,
        disabled,
        password: None,
    };
    people::update_user(&services()?.db, &who, &name, change).await?;
    Ok(())
}

/// Gives a user a new generated password, returned to be shown this once.
#[server(prefix = "/ui", endpoint = "reset_password", input = Json)]
pub async fn reset_password(name: String) -> Result<String, UiError> {
    use super::ssr::*;
    let who = require(Operation::ManageUsers)?;
    Ok(am_services::accounts::people::reset_password(&services()?.db, &who, &name).await?)
}

/// Changes the caller's own password.
#[server(prefix = "/ui", endpoint = "change_password", input = Json)]
pub async fn change_password(current: String, new: String) -> Result<(), UiError> {
    use super::ssr::*;
    let who = require(Operation::OwnAccess)?;
    // The session that asks stays signed in; every other one of the user's ends.
    let keep = session_cookie_secret();
    am_services::accounts::people::change_own_password(
        &services()?,
        &who,
        &current,
        &new,
        keep.as_deref(),
    )
    .await?;
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokensView {
    pub rows: Vec<TokenInfo>,
    /// Everyone's tokens (the caller is an admin), not only their own.
    pub all: bool,
    /// The caller's role: a new token's role is at most this.
    pub role: Role,
    pub now: chrono::DateTime<chrono::Utc>,
}

#[server(prefix = "/ui", endpoint = "tokens", input = Json)]
pub async fn list_tokens() -> Result<TokensView, UiError> {
    use super::ssr::*;
    use am_services::accounts::tokens;
    let who = require(Operation::OwnAccess)?;
    let all = who.role.may(Operation::ManageUsers);
    let rows = tokens::list(&services()?.db, &who, all).await?;
    Ok(TokensView {
        rows,
        all,
        role: who.role,
        now: chrono::Utc::now(),
    })
}

/// Creates a token for the caller; returns it, to be shown this once.
#[server(prefix = "/ui", endpoint = "create_token", input = Json)]
pub async fn create_token(
    name: String,
    role: Option<Role>,
    expires_in_days: Option<u32>,
) -> Result<String, UiError> {
    use super::ssr::*;
    use am_domain::read::accounts::NewToken;
    use am_services::accounts::tokens;
    let who = require(Operation::OwnAccess)?;
    let new = NewToken {
        user: None,
        name,
        role,
        expires_at: expires_in_days
            .map(|d| chrono::Utc::now() + chrono::Duration::days(i64::from(d))),
    };
    Ok(tokens::create(&services()?.db, &who, new).await?.token)
}

/// Revokes a token (one's own; admins anyone's).
#[server(prefix = "/ui", endpoint = "revoke_token", input = Json)]
pub async fn revoke_token(id: i64) -> Result<(), UiError> {
    use super::ssr::*;
    let who = require(Operation::OwnAccess)?;
    am_services::accounts::tokens::revoke(&services()?.db, &who, id).await?;
    Ok(())
}
