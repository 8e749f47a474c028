//! `GET /api/v1/activations` (filtered, newest first) and `GET /api/v1/activations/{id}` (its
//! member runs, per-host timeline and failures).

use super::paging::PageQuery;
use crate::{auth::Caller, error::ApiResult, error::ErrorBody, state::AppState};
use am_services::activations::{self, ActivationDetail, ActivationFilter, ActivationPage};
use axum::{
    Json,
    extract::{Path, Query, State},
};

/// Activations matching the filters, newest first.
#[utoipa::path(get, path = "/api/v1/activations", tag = "activations",
    params(ActivationFilter, PageQuery), responses(
    (status = 200, body = ActivationPage),
    (status = 401, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "a filter is malformed (time, status)"),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    Query(filter): Query<ActivationFilter>,
    Query(page): Query<PageQuery>,
) -> ApiResult<Json<ActivationPage>> {
    let s = &state.services;
    Ok(Json(
        activations::list(&s.db, &who, &filter, page.page, page.limit).await?,
    ))
}

/// One activation: its member runs (for a group), its dispatch to each host with the last
/// heartbeat's counters, its timeline per host and its failures by error type.
#[utoipa::path(get, path = "/api/v1/activations/{id}", tag = "activations",
    params(("id" = String, Path, description = "activation id (UUID)")), responses(
    (status = 200, body = ActivationDetail),
    (status = 401, body = ErrorBody),
    (status = 404, body = ErrorBody),
))]
pub async fn get(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<ActivationDetail>> {
    Ok(Json(activations::get(&state.services.db, &who, &id).await?))
}
