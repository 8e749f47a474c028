//! `GET /api/v1/nodes`: the nodes of the registry, live ones unless asked otherwise.

use crate::api::query::ApiQuery;
use crate::{auth::Caller, error::ApiResult, error::ErrorBody, state::AppState};
use am_services::registry::{self, NodeFilter, NodeView};
use axum::{Json, extract::State};

/// Query of `GET /api/v1/nodes`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct NodesQuery {
    /// Only nodes of this application.
    pub application: Option<String>,
    /// Lost nodes too (no heartbeat within the node timeout); by default only live ones.
    #[serde(default)]
    pub include_lost: bool,
}

/// Nodes (one application on one host) with their version, load, running activations,
/// capacity, last heartbeat and the agents they offer.
#[utoipa::path(get, path = "/api/v1/nodes", tag = "nodes", params(NodesQuery), responses(
    (status = 200, body = Vec<NodeView>),
    (status = 401, body = ErrorBody),
))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    ApiQuery(q): ApiQuery<NodesQuery>,
) -> ApiResult<Json<Vec<NodeView>>> {
    let s = &state.services;
    let filter = NodeFilter {
        application: q.application,
        include_lost: q.include_lost,
    };
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
