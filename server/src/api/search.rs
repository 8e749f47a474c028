//! `GET /api/v1/search?q=`: the global search (docs/concepts.md, Finding anything).

use crate::api::query::ApiQuery;
use crate::{auth::Caller, error::ApiResult, error::ErrorBody, state::AppState};
use am_domain::read::search::Hit;
use am_services::search;
use axum::{Json, extract::State};

/// Query of `GET /api/v1/search`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Part of an id or title of a catalog entity, of a host name or of an error type, an
    /// activation's id (whole, its first digits or shortened), a dead letter's message id or
    /// `#number`.
    #[serde(default)]
    pub q: String,
}

/// What matches: catalog entities whose id or title contains the text, hosts and error types
/// whose name does (at most 10 of each kind), the activations that id names, the dead letters
/// with that message id or number.
#[utoipa::path(get, path = "/api/v1/search", tag = "search", params(SearchQuery), responses(
    (status = 200, body = Vec<Hit>),
    (status = 401, body = ErrorBody),
))]
pub async fn find(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiQuery(q): ApiQuery<SearchQuery>,
) -> ApiResult<Json<Vec<Hit>>> {
    Ok(Json(search::find(&state.services.db, &who, &q.q).await?))
}
