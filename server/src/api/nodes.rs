//! `GET /api/v1/nodes`: the nodes of the registry, live ones unless asked otherwise.

use crate::api::query::ApiQuery;
use crate::{auth::Caller, error::ApiResult, error::ErrorBody, state::AppState};
use am_domain::read::nodes::{NodeFilter, NodeView};
use am_services::registry;
use axum::{Json, extract::State};

/// Nodes (one application on one host) with their version, load, running activations,
/// capacity, last heartbeat and the agents they offer.
#[utoipa::path(get, path = "/api/v1/nodes", tag = "nodes", params(NodeFilter), responses(
    (status = 200, body = Vec<NodeView>),
    (status = 401, body = ErrorBody),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiQuery(filter): ApiQuery<NodeFilter>,
) -> ApiResult<Json<Vec<NodeView>>> {
    let s = &state.services;
    let nodes = registry::list(
        &s.db,
        &who,
        &filter,
        chrono::Utc::now(),
        s.settings.node_timeout,
    )
    .await?;
    Ok(Json(nodes))
}
