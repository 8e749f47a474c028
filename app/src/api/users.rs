//! Server functions of the Users page: the list and every change an admin makes (create, role,
//! disable/enable, reset password), and each user's own password change.

use crate::error::UiError;
use am_domain::roles::Role;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// One user as the page lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRow {
    pub name: String,
    pub role: Role,
    pub disabled: bool,
    pub last_login_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsersView {
    /// The caller's own name.
    pub me: String,
    /// Whether the caller manages users; the list is empty otherwise.
    pub is_admin: bool,
    pub users: Vec<UserRow>,
    pub now: chrono::DateTime<chrono::Utc>,
}

#[server(prefix = "/ui", endpoint = "users", input = Json)]
pub async fn list_users() -> Result<UsersView, UiError> {
    use super::ssr::*;
    let who = require(Role::Viewer)?;
    let is_admin = who.role.allows(Role::Admin);
    let users = if is_admin {
        am_services::accounts::list_users(&services()?.db, &who)
            .await?
            .into_iter()
            .map(|u| UserRow {
                name: u.name,
                role: u.role,
                disabled: u.disabled,
                last_login_at: u.last_login_at,
            })
            .collect()
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
    let who = require(Role::Admin)?;
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
    let who = require(Role::Admin)?;
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
    let who = require(Role::Admin)?;
    Ok(am_services::accounts::people::reset_password(&services()?.db, &who, &name).await?)
}

/// Changes the caller's own password.
#[server(prefix = "/ui", endpoint = "change_password", input = Json)]
pub async fn change_password(current: String, new: String) -> Result<(), UiError> {
    use super::ssr::*;
    let who = require(Role::Viewer)?;
    am_services::accounts::people::change_own_password(&services()?, &who, &current, &new).await?;
    Ok(())
}
