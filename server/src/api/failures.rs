//! The failure logs: `GET /api/v1/failures` (entries and counts by error type) and the levels
//! of the drill-down: launch settings with failures, the activations of one, the hosts of one
//! activation.

use super::paging::{AfterQuery, PageQuery};
use crate::api::query::ApiQuery;
use crate::{auth::Caller, error::ApiResult, error::ErrorBody, state::AppState};
use am_domain::read::failures::{
    ActivationFailuresPage, ActivationHostFailures, FailureFilter, FailureList,
    LaunchSettingFailuresPage,
};
use am_services::failures;
use axum::{
    Json,
    extract::{Path, State},
};

/// Failures matching the filters, newest first (50 per page, at most 200), with their counts
/// by error type over all pages.
#[utoipa::path(get, path = "/api/v1/failures", tag = "failures",
    params(FailureFilter, AfterQuery), responses(
    (status = 200, body = FailureList),
    (status = 401, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "a filter or the cursor is malformed"),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiQuery(filter): ApiQuery<FailureFilter>,
    ApiQuery(paging): ApiQuery<AfterQuery>,
) -> ApiResult<Json<FailureList>> {
    let after = paging.id_after("failure")?;
    Ok(Json(
        failures::list(&state.services.db, &who, &filter, after, paging.limit).await?,
    ))
}

/// Launch settings with failures matching the filters, by id (20 per page), each with its
/// counts by error type and its first and last failure.
#[utoipa::path(get, path = "/api/v1/failures/launch-settings", tag = "failures",
    params(FailureFilter, AfterQuery), responses(
    (status = 200, body = LaunchSettingFailuresPage),
    (status = 401, body = ErrorBody),
    (status = 422, body = ErrorBody),
))]
pub async fn launch_settings(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiQuery(filter): ApiQuery<FailureFilter>,
    ApiQuery(paging): ApiQuery<AfterQuery>,
) -> ApiResult<Json<LaunchSettingFailuresPage>> {
    Ok(Json(
        failures::launch_settings(
            &state.services.db,
            &who,
            &filter,
            paging.after.as_deref(),
            paging.limit,
        )
        .await?,
    ))
}

/// The activations of a launch setting with failures matching the filters, the most recently
/// failing first (20 per page), with counts by host and error type.
#[utoipa::path(get, path = "/api/v1/failures/launch-settings/{id}/activations", tag = "failures",
    params(("id" = String, Path, description = "launch setting id"), FailureFilter, PageQuery),
    responses(
    (status = 200, body = ActivationFailuresPage),
    (status = 401, body = ErrorBody),
    (status = 422, body = ErrorBody),
))]
pub async fn activations(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    ApiQuery(filter): ApiQuery<FailureFilter>,
    ApiQuery(paging): ApiQuery<PageQuery>,
) -> ApiResult<Json<ActivationFailuresPage>> {
    Ok(Json(
        failures::activations(
            &state.services.db,
            &who,
            &id,
            &filter,
            paging.page,
            paging.limit,
        )
        .await?,
    ))
}

/// The hosts of an activation that reported failures matching the filters, with counts by
/// error type and the status of their dispatch.
#[utoipa::path(get, path = "/api/v1/failures/activations/{id}/hosts", tag = "failures",
    params(("id" = uuid::Uuid, Path, description = "activation id"), FailureFilter),
    responses(
    (status = 200, body = ActivationHostFailures),
    (status = 401, body = ErrorBody),
    (status = 422, body = ErrorBody),
))]
pub async fn hosts(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    ApiQuery(filter): ApiQuery<FailureFilter>,
) -> ApiResult<Json<ActivationHostFailures>> {
    Ok(Json(
        failures::hosts(&state.services.db, &who, &id, &filter).await?,
    ))
}
