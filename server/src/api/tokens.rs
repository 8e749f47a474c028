//! API tokens (docs/operations.md, Users and tokens): `GET /api/v1/tokens` (one's own; `all=true`
//! for admins), `POST /api/v1/tokens` (the secret in `token`, shown once) and `DELETE
//! /api/v1/tokens/{id}` (revoke).

use super::json::ApiJson;
use crate::api::query::ApiQuery;
use crate::{
    auth::Caller,
    error::{ApiResult, ErrorBody},
    state::AppState,
};
use am_domain::read::accounts::{CreatedToken, NewToken, TokenInfo};
use am_services::accounts::tokens;
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};

/// Which tokens a list shows.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TokensQuery {
    /// Everyone's tokens (admins); the caller's own otherwise.
    #[serde(default)]
    pub all: bool,
}

/// Tokens, newest first, never with their secret.
#[utoipa::path(get, path = "/api/v1/tokens", tag = "tokens", params(TokensQuery), responses(
    (status = 200, body = Vec<TokenInfo>),
    (status = 401, body = ErrorBody),
    (status = 403, body = ErrorBody, description = "`all` without the admin role"),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiQuery(q): ApiQuery<TokensQuery>,
) -> ApiResult<Json<Vec<TokenInfo>>> {
    Ok(Json(tokens::list(&state.services.db, &who, q.all).await?))
}

/// Creates a token for the caller (or, admins, for `user`); the answer's `token` is shown only
/// this once.
#[utoipa::path(post, path = "/api/v1/tokens", tag = "tokens", request_body = NewToken, responses(
    (status = 201, body = CreatedToken),
    (status = 400, body = ErrorBody, description = "not a JSON body"),
    (status = 403, body = ErrorBody, description = "another user's token without the admin role"),
    (status = 404, body = ErrorBody),
    (status = 422, body = ErrorBody, description = "a role above the user's or the caller's, an expiry in the past, a bad name or an unknown field"),
))]
pub async fn create(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiJson(new): ApiJson<NewToken>,
) -> ApiResult<(StatusCode, Json<CreatedToken>)> {
    Ok((
        StatusCode::CREATED,
        Json(tokens::create(&state.services.db, &who, new).await?),
    ))
}

/// Revokes a token (one's own; admins anyone's); it stops working at once.
#[utoipa::path(delete, path = "/api/v1/tokens/{id}", tag = "tokens",
    params(("id" = i64, Path, description = "token id")), responses(
    (status = 200, body = TokenInfo),
    (status = 401, body = ErrorBody),
    (status = 404, body = ErrorBody),
))]
pub async fn revoke(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<TokenInfo>> {
    let id = super::paging::path_id(&id, "token")?;
    Ok(Json(tokens::revoke(&state.services.db, &who, id).await?))
}
