//! One's own login sessions (docs/operations.md, "Sessions"): `GET /api/v1/sessions` lists
//! them, `DELETE /api/v1/sessions/{handle}` signs one out.

use crate::{
    auth::Caller,
    error::{ApiResult, ErrorBody},
    state::AppState,
};
use am_domain::read::accounts::SessionInfo;
use am_services::{AuthMethod, accounts::sessions};
use app::api::SESSION_COOKIE;
use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
};

/// The caller's live sessions, the most recently used first; `current` marks the one whose
/// cookie came with the request (none for a token).
#[utoipa::path(get, path = "/api/v1/sessions", tag = "sessions", responses(
    (status = 200, body = Vec<SessionInfo>),
    (status = 401, body = ErrorBody),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    headers: HeaderMap,
) -> ApiResult<Json<Vec<SessionInfo>>> {
    let current = match who.via {
        AuthMethod::Session => crate::auth::cookie(&headers, SESSION_COOKIE),
        _ => None,
    };
    Ok(Json(
        sessions::list_own(&state.services, &who, current).await?,
    ))
}

/// Signs out one of the caller's sessions; another user's is not found.
#[utoipa::path(delete, path = "/api/v1/sessions/{handle}", tag = "sessions",
    params(("handle" = String, Path, description = "the session's handle, from the list")), responses(
    (status = 204),
    (status = 401, body = ErrorBody),
    (status = 404, body = ErrorBody),
))]
pub async fn revoke(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(handle): Path<String>,
) -> ApiResult<StatusCode> {
    sessions::revoke_own(&state.services.db, &who, handle.trim()).await?;
    Ok(StatusCode::NO_CONTENT)
}
