//! The caller's own login sessions (docs/operations.md, "Sessions"): listed with where each
//! came from, and signed out one by one.

use crate::error::UiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// One session as the page lists it: named by its handle, never by its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    pub handle: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub last_seen_at: chrono::DateTime<chrono::Utc>,
    pub expires_at: chrono::DateTime<chrono::Utc>,
    pub address: Option<String>,
    pub user_agent: Option<String>,
    /// The session this page was loaded with.
    pub current: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsView {
    pub rows: Vec<SessionRow>,
    pub now: chrono::DateTime<chrono::Utc>,
}

#[server(prefix = "/ui", endpoint = "list_sessions")]
pub async fn list_sessions() -> Result<SessionsView, UiError> {
    use super::ssr::*;
    let who = require(Operation::OwnAccess)?;
    let current = session_cookie_secret();
    let rows = am_services::accounts::sessions::list_own(&services()?, &who, current.as_deref())
        .await?
        .into_iter()
        .map(|s| SessionRow {
            handle: s.handle,
            created_at: s.created_at,
            last_seen_at: s.last_seen_at,
            expires_at: s.expires_at,
            address: s.address,
            user_agent: s.user_agent,
            current: s.current,
        })
        .collect();
    Ok(SessionsView {
        rows,
        now: chrono::Utc::now(),
    })
}

/// Signs out one of the caller's sessions.
#[server(prefix = "/ui", endpoint = "revoke_session", input = Json)]
pub async fn revoke_session(handle: String) -> Result<(), UiError> {
    use super::ssr::*;
    let who = require(Operation::OwnAccess)?;
    am_services::accounts::sessions::revoke_own(&services()?.db, &who, &handle).await?;
    Ok(())
}
