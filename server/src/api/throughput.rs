//! `GET /api/v1/launch-settings/{id}/throughput`: a launch setting's messages processed,
//! failures, retries and backlog per minute over the last hour (the dashboard carries the same
//! figures for every launch setting together).

use crate::{auth::Caller, error::ApiResult, error::ErrorBody, state::AppState};
use am_domain::throughput::Throughput;
use axum::{
    Json,
    extract::{Path, State},
};

/// Sixty minutes, oldest first, each present (zero when nothing happened): `processed` from
/// the nodes' counters, `failed` and `retried` as the failure logs list them, `backlog` from
/// the manager's broker samples (`null` for a minute without one).
#[utoipa::path(get, path = "/api/v1/launch-settings/{id}/throughput", tag = "launch-settings",
    params(("id" = String, Path)),
    responses(
        (status = 200, body = Throughput),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such launch setting"),
    ))]
pub async fn of_launch_setting(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Throughput>> {
    let s = &state.services;
    Ok(Json(
        am_services::throughput::of_launch_setting(&s.db, &who, &id, chrono::Utc::now()).await?,
    ))
}
