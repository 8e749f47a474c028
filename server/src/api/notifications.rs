//! Notifications (docs/notifications.md): `GET /api/v1/notifications` (filtered, newest first,
//! by cursor) and `/notifications/{id}` for viewers, with each one's delivery status; `POST
//! /api/v1/notifications/{id}/resend` and `POST /api/v1/notifications/test` for operators.

use super::{json::ApiJson, paging::AfterQuery};
use crate::api::query::ApiQuery;
use crate::{
    auth::{Allowed, Caller, may},
    error::{ApiResult, ErrorBody},
    state::AppState,
};
use am_domain::read::notifications::{NotificationEntry, NotificationFilter, NotificationPage};
use am_services::{ServiceError, notifications};
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};

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
    ApiQuery(filter): ApiQuery<NotificationFilter>,
    ApiQuery(paging): ApiQuery<AfterQuery>,
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
    let id = super::paging::path_id(&id, "notification")?;
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
    Allowed(who, _): Allowed<may::Notify>,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<NotificationEntry>)> {
    let id = super::paging::path_id(&id, "notification")?;
    let db = &state.services.db;
    notifications::resend(db, &who, id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(notifications::get(db, &who, id).await?),
    ))
}

/// Whose channel a test goes to: exactly one of `application`, `launch_setting` and
/// `schedule_group`.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TestTarget {
    pub application: Option<String>,
    pub launch_setting: Option<String>,
    pub schedule_group: Option<String>,
    /// `email` for the e-mail addresses, `webhook` (or `chat`) for the webhook; without it,
    /// the webhook when there is one, else e-mail.
    pub channel: Option<am_domain::notify::Channel>,
}

/// *Send test* (operators): a `test` notification to a channel of an application, launch
/// setting or schedule group (the launch setting's or group's own, or its application's), queued at once; poll
/// `GET /api/v1/notifications/{id}` for the endpoint's answer.
#[utoipa::path(post, path = "/api/v1/notifications/test", tag = "notifications",
    request_body = TestTarget, responses(
    (status = 202, body = NotificationEntry),
    (status = 400, body = ErrorBody, description = "not a JSON body"),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "neither or both targets named, or no such channel to test"),
))]
pub async fn test(
    State(state): State<AppState>,
    Allowed(who, _): Allowed<may::Notify>,
    ApiJson(target): ApiJson<TestTarget>,
) -> ApiResult<(StatusCode, Json<NotificationEntry>)> {
    use am_domain::usage::EntityRef;
    let key = match (
        target.application,
        target.launch_setting,
        target.schedule_group,
    ) {
        (Some(a), None, None) => EntityRef::Application(a),
        (None, Some(l), None) => EntityRef::LaunchSetting(l),
        (None, None, Some(g)) => EntityRef::ScheduleGroup(g),
        _ => {
            return Err(ServiceError::invalid(
                "",
                "name exactly one of `application`, `launch_setting` and `schedule_group`",
            )
            .into());
        }
    };
    let db = &state.services.db;
    let id = notifications::send_test(db, &who, &key, target.channel).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(notifications::get(db, &who, id).await?),
    ))
}
