//! Notifications (docs/notifications.md): `GET /api/v1/notifications` (filtered, newest first,
//! by cursor) and `/notifications/{id}` for viewers, with each one's delivery status; `POST
//! /api/v1/notifications/{id}/resend` for operators.

use super::paging::AfterQuery;
use crate::{
    auth::Caller,
    error::{ApiResult, ErrorBody},
    state::AppState,
};
use am_services::{
    ServiceError,
    notifications::{self, NotificationEntry, NotificationFilter, NotificationPage},
};
use axum::{
    Json,
    extract::{Path, Query, State},
    http::StatusCode,
};

fn id_of(raw: &str) -> Result<i64, ServiceError> {
    raw.trim()
        .parse::<i64>()
        .map_err(|_| ServiceError::NotFound(format!("notification '{raw}'")))
}

/// Notifications matching the filters, newest first (default 50 per page, at most 500).
#[utoipa::path(get, path = "/api/v1/notifications", tag = "notifications",
    params(NotificationFilter, AfterQuery), responses(
    (status = 200, body = NotificationPage),
    (status = 401, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "an unknown event or status, or a malformed cursor"),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    Query(filter): Query<NotificationFilter>,
    Query(paging): Query<AfterQuery>,
) -> ApiResult<Json<NotificationPage>> {
    let after = paging.id_after("notification")?;
    Ok(Json(
        notifications::list(&state.services.db, &who, &filter, after, paging.limit).await?,
    ))
}

/// One notification: what it says, where it goes and how its delivery went.
#[utoipa::path(get, path = "/api/v1/notifications/{id}", tag = "notifications",
    params(("id" = i64, Path, description = "notification id")), responses(
    (status = 200, body = NotificationEntry),
    (status = 401, body = ErrorBody),
    (status = 404, body = ErrorBody),
))]
pub async fn get(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<NotificationEntry>> {
    let id = id_of(&id)?;
    Ok(Json(
        notifications::get(&state.services.db, &who, id).await?,
    ))
}

/// Sends a delivered or failed notification again (operators): pending and due at once, with
/// a fresh retry budget.
#[utoipa::path(post, path = "/api/v1/notifications/{id}/resend", tag = "notifications",
    params(("id" = i64, Path, description = "notification id")), responses(
    (status = 202, body = NotificationEntry),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, body = ErrorBody, description = "it is still pending"),
))]
pub async fn resend(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<NotificationEntry>)> {
    let id = id_of(&id)?;
    let db = &state.services.db;
    notifications::resend(db, &who, id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(notifications::get(db, &who, id).await?),
    ))
}
