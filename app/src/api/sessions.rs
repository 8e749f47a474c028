//! The caller's own login sessions (docs/operations.md, "Sessions"): listed with where each
//! came from, and signed out one by one.

use crate::error::UiError;
use am_domain::read::accounts::SessionInfo;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsView {
    pub rows: Vec<SessionInfo>,
    pub now: chrono::DateTime<chrono::Utc>,
}

#[server(prefix = "/ui", endpoint = "list_sessions")]
pub async fn list_sessions() -> Result<SessionsView, UiError> {
    use super::ssr::*;
    let who = require(Operation::OwnAccess)?;
    let current = session_cookie_secret();
    let rows =
        am_services::accounts::sessions::list_own(&services()?, &who, current.as_deref()).await?;
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
