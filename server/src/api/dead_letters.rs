//! Dead letters: `GET /api/v1/dead-letters` (filtered, newest first, by cursor) and
//! `/dead-letters/{id}` (headers, body, failure history) for viewers; `POST
//! /api/v1/dead-letters/replay` and `/delete` for operators, which start a background operation
//! over the selected dead letters and answer with it at once.

use super::paging::AfterQuery;
use crate::api::query::ApiQuery;
use crate::{
    api::json::ApiJson,
    auth::{Allowed, Caller, may},
    error::{ApiResult, ErrorBody},
    state::AppState,
};
use am_domain::read::{
    dead_letters::{DeadLetterDetail, DeadLetterFilter, DeadLetterPage, Selection},
    operations::{OperationRequest, OperationView},
};
use am_services::dead_letters;
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};

/// Dead letters matching the filters, newest first, with how many match in all.
#[utoipa::path(get, path = "/api/v1/dead-letters", tag = "dead-letters",
    params(DeadLetterFilter, AfterQuery), responses(
    (status = 200, body = DeadLetterPage),
    (status = 401, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "a filter or the cursor is malformed"),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiQuery(filter): ApiQuery<DeadLetterFilter>,
    ApiQuery(paging): ApiQuery<AfterQuery>,
) -> ApiResult<Json<DeadLetterPage>> {
    let after = paging.id_after("dead-letter")?;
    Ok(Json(
        dead_letters::list(&state.services.db, &who, &filter, after, paging.limit).await?,
    ))
}

/// One dead letter: its headers and properties, its body (pretty-printed JSON, UTF-8 text or
/// base64, as `body.encoding` says), its launch setting's dead-letter policy and the failures
/// reported for its message, newest first.
#[utoipa::path(get, path = "/api/v1/dead-letters/{id}", tag = "dead-letters",
    params(("id" = i64, Path, description = "dead-letter id")), responses(
    (status = 200, body = DeadLetterDetail),
    (status = 401, body = ErrorBody),
    (status = 404, body = ErrorBody),
))]
pub async fn get(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<DeadLetterDetail>> {
    let id = super::paging::path_id(&id, "dead letter")?;
    Ok(Json(dead_letters::get(&state.services.db, &who, id).await?))
}

/// What to replay, and how.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ReplayBody {
    /// Non-empty: exactly these dead letters (at most 10,000).
    pub ids: Vec<i64>,
    /// Used when `ids` is empty: every `dead` dead letter matching it.
    pub filter: DeadLetterFilter,
    /// Replay this many first and go on only once every one was processed.
    pub canary: Option<u32>,
    /// At most this many per second.
    pub rate_per_second: Option<u32>,
}

/// Replays dead letters (operators): `{"ids": [...]}` or `{"filter": {...}}` (every `dead` one
/// matching), optionally `"canary": n` and `"rate_per_second": r`. Each goes back to its launch
/// setting's own subscription as a fresh start (attempt 1), marked as replayed by the caller.
/// Runs in the background: `GET /api/v1/operations/{id}` shows its progress and
/// `replay_outcomes` (processed, failed again, waiting behind a disabled launch setting).
#[utoipa::path(post, path = "/api/v1/dead-letters/replay", tag = "dead-letters",
    request_body = ReplayBody, responses(
    (status = 202, body = OperationView),
    (status = 401, body = ErrorBody),
    (status = 403, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "the selection is malformed or matches nothing"),
))]
pub async fn replay(
    State(state): State<AppState>,
    Allowed(who, _): Allowed<may::HandleDeadLetters>,
    ApiJson(body): ApiJson<ReplayBody>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    super::operations::started(
        &state,
        &who,
        OperationRequest::ReplayDeadLetters {
            selection: Selection {
                ids: body.ids,
                filter: body.filter,
            },
            canary: body.canary,
            rate_per_second: body.rate_per_second,
        },
    )
    .await
}

/// Deletes dead letters (operators): `{"ids": [...]}` or `{"filter": {...}}` (every `dead` one
/// matching). Runs in the background like a replay.
#[utoipa::path(post, path = "/api/v1/dead-letters/delete", tag = "dead-letters",
    request_body = Selection, responses(
    (status = 202, body = OperationView),
    (status = 401, body = ErrorBody),
    (status = 403, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "the selection is malformed or matches nothing"),
))]
pub async fn delete(
    State(state): State<AppState>,
    Allowed(who, _): Allowed<may::HandleDeadLetters>,
    ApiJson(selection): ApiJson<Selection>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    super::operations::started(
        &state,
        &who,
        OperationRequest::DeleteDeadLetters { selection },
    )
    .await
}
