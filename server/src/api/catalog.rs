//! `GET/PUT /api/v1/catalog`: the whole catalog as one document.

use super::json::ApiJson;
use crate::{
    auth::{Allowed, Caller, may},
    error::{ApiResult, ErrorBody},
    state::AppState,
};
use am_domain::catalog::Catalog;
use am_services::catalog::{self, ChangeSummary};
use axum::{Json, extract::State};

/// Exports the whole catalog.
#[utoipa::path(get, path = "/api/v1/catalog", tag = "catalog", responses(
    (status = 200, body = Catalog),
    (status = 401, body = ErrorBody),
))]
pub async fn export(
    State(state): State<AppState>,
    Caller(who): Caller,
) -> ApiResult<Json<Catalog>> {
    Ok(Json(catalog::export(&state.services.db, &who).await?))
}

/// Replaces the whole catalog. Everything is validated first; on any error nothing changes and
/// the 422 answer lists every error with its path.
#[utoipa::path(put, path = "/api/v1/catalog", tag = "catalog", request_body = Catalog, responses(
    (status = 200, body = ChangeSummary, description = "what was created, updated and deleted"),
    (status = 401, body = ErrorBody),
    (status = 403, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "every error, with its path"),
))]
pub async fn import(
    State(state): State<AppState>,
    Allowed(who, _): Allowed<may::EditCatalog>,
    ApiJson(doc): ApiJson<Catalog>,
) -> ApiResult<Json<ChangeSummary>> {
    Ok(Json(catalog::import(&state.services.db, &who, doc).await?))
}
