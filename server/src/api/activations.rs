//! `GET /api/v1/activations` (filtered, newest first), `GET /api/v1/activations/{id}` (its
//! member runs, per-host timeline and failures), `POST /api/v1/activations/{id}/rerun` and
//! `POST /api/v1/activations/{id}/interrupt`.

use super::json::ApiJson;
use super::paging::PageQuery;
use crate::api::query::ApiQuery;
use crate::{
    auth::{Allowed, Caller, may},
    error::{ApiResult, ErrorBody},
    state::AppState,
};
use am_domain::read::activations::{ActivationDetail, ActivationFilter, ActivationPage};
use am_services::{
    activations,
    runtime::{
        interrupt,
        run::{self, Rerun},
    },
};
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
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
    ApiQuery(filter): ApiQuery<ActivationFilter>,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> ApiResult<Json<ActivationPage>> {
    let s = &state.services;
    Ok(Json(
        activations::list(&s.db, &who, &filter, page.page, page.limit).await?,
    ))
}

/// One activation: its member runs (for a group), its dispatch to each host with the last
/// heartbeat's counters, its timeline per host and its failures by error type.
#[utoipa::path(get, path = "/api/v1/activations/{id}", tag = "activations",
    params(("id" = uuid::Uuid, Path, description = "activation id")), responses(
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

/// What a re-run started.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct RerunStarted {
    /// The new activation.
    pub id: String,
    /// The activation it re-runs.
    pub rerun_of: String,
}

/// Re-runs a finished activation from where it broke (operators): a group from its first
/// member that did not succeed, or from `from_member`; a member run, its group from that
/// member; a launch setting's run on the hosts that failed (`only_failed_hosts`) or on `host`.
/// Send `{}` for the defaults.
#[utoipa::path(post, path = "/api/v1/activations/{id}/rerun", tag = "activations",
    params(("id" = uuid::Uuid, Path, description = "activation id")), request_body = Rerun,
    responses(
    (status = 202, body = RerunStarted),
    (status = 400, body = ErrorBody, description = "not a JSON body"),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, body = ErrorBody, description = "still running, disabled, nothing failed, or no live node on the hosts asked for"),
    (status = 422, body = ErrorBody, description = "an option that does not fit the activation"),
))]
pub async fn rerun(
    State(state): State<AppState>,
    Allowed(who, _): Allowed<may::Run>,
    Path(id): Path<String>,
    ApiJson(how): ApiJson<Rerun>,
) -> ApiResult<(StatusCode, Json<RerunStarted>)> {
    let s = &state.services;
    let started = run::rerun(&s.db, &s.runtime, &who, &id, &how).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(RerunStarted {
            id: started.to_string(),
            rerun_of: id.trim().to_owned(),
        }),
    ))
}

/// What an interrupt asked for.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct InterruptRequested {
    /// The activation being interrupted.
    pub id: String,
}

/// Interrupts an activation still waiting or running (operators). A waiting one ends at once;
/// a running one gets *interrupt* on each host still running it and ends `interrupted` when
/// they confirm; a group's run ends at once and its running member is interrupted.
#[utoipa::path(post, path = "/api/v1/activations/{id}/interrupt", tag = "activations",
    params(("id" = uuid::Uuid, Path, description = "activation id")),
    responses(
    (status = 202, body = InterruptRequested),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, body = ErrorBody, description = "the activation has already ended"),
))]
pub async fn interrupt(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<InterruptRequested>)> {
    let s = &state.services;
    interrupt::interrupt(&s.db, &s.runtime, &who, &id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(InterruptRequested {
            id: id.trim().to_owned(),
        }),
    ))
}
