//! Bulk operations: `POST /api/v1/operations` starts one over a selection (re-run activations,
//! re-enable launch settings or groups, replay or delete dead letters), `GET` lists them and
//! shows one's progress, `POST …/{id}/cancel` stops one between two batches.

use crate::api::query::ApiQuery;
use crate::{
    api::json::ApiJson,
    auth::{Allowed, Caller, may},
    error::{ApiResult, AppError, ErrorBody},
    state::AppState,
};
use am_domain::read::operations::{OperationRequest, OperationView};
use am_services::{Principal, ServiceError, operations};
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use uuid::Uuid;

#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// How many, newest first (default 50, at most 500).
    #[serde(default, deserialize_with = "crate::api::query::limit")]
    #[param(minimum = 0, maximum = 1000)]
    pub limit: Option<u64>,
}

/// An operation's id from the address; anything but a UUID names no operation.
fn operation_id(id: &str) -> Result<Uuid, AppError> {
    Uuid::parse_str(id)
        .map_err(|_| AppError::Service(ServiceError::NotFound(format!("operation '{id}'"))))
}

/// Starts a bulk operation (operators). It runs in the background: poll
/// `GET /api/v1/operations/{id}` for its progress.
#[utoipa::path(post, path = "/api/v1/operations", tag = "operations",
    request_body = OperationRequest, responses(
    (status = 202, body = OperationView),
    (status = 401, body = ErrorBody),
    (status = 403, body = ErrorBody),
    (status = 409, body = ErrorBody, description = "a consistency sweep with no activation in progress"),
    (status = 422, body = ErrorBody, description = "the selection names unknown items or matches nothing"),
))]
pub async fn start(
    State(state): State<AppState>,
    Allowed(who, _): Allowed<may::Bulk>,
    ApiJson(request): ApiJson<OperationRequest>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    started(&state, &who, request).await
}

/// Starts an operation and answers 202 with it: every endpoint that starts one.
pub(super) async fn started(
    state: &AppState,
    who: &Principal,
    request: OperationRequest,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = operations::start(&state.services, who, request).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(operations::view(&state.services.db, op).await?),
    ))
}

/// The newest operations first.
#[utoipa::path(get, path = "/api/v1/operations", tag = "operations", params(ListQuery), responses(
    (status = 200, body = [OperationView]),
    (status = 401, body = ErrorBody),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<Vec<OperationView>>> {
    let rows = operations::list(
        &state.services.db,
        &who,
        q.limit.filter(|l| *l > 0).unwrap_or(50),
    )
    .await?;
    Ok(Json(operations::views(&state.services.db, rows).await?))
}

/// One operation: status, progress (done / failed / total) and the first errors.
#[utoipa::path(get, path = "/api/v1/operations/{id}", tag = "operations",
    params(("id" = Uuid, Path, description = "operation id")), responses(
    (status = 200, body = OperationView),
    (status = 401, body = ErrorBody),
    (status = 404, body = ErrorBody),
))]
pub async fn get(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<OperationView>> {
    let op = operations::get(&state.services.db, &who, operation_id(&id)?).await?;
    Ok(Json(operations::view(&state.services.db, op).await?))
}

/// Cancels an operation (operators): a queued one at once, a running one after its current
/// batch. 409 when it already ended.
#[utoipa::path(post, path = "/api/v1/operations/{id}/cancel", tag = "operations",
    params(("id" = Uuid, Path, description = "operation id")), responses(
    (status = 200, body = OperationView),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, body = ErrorBody),
))]
pub async fn cancel(
    State(state): State<AppState>,
    Allowed(who, _): Allowed<may::Bulk>,
    Path(id): Path<String>,
) -> ApiResult<Json<OperationView>> {
    let op = operations::cancel(&state.services.db, &who, operation_id(&id)?).await?;
    Ok(Json(operations::view(&state.services.db, op).await?))
}
