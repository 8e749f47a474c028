//! `GET /api/v1/broker`: the broker as the reconciler keeps it; `POST /api/v1/broker/reconcile`
//! asks for a full pass (docs/protocol.md, "Broker topology").

use crate::{auth::Caller, error::ApiResult, error::ErrorBody, state::AppState};
use am_domain::read::broker::BrokerView;
use am_services::topology;
use axum::{Json, extract::State, http::StatusCode};

/// Whether the broker is reconciled to the current catalog, when it last was, what the broker
/// refused on the last pass, how many objects the reconciler keeps and which queues are leaving.
#[utoipa::path(get, path = "/api/v1/broker", tag = "broker", responses(
    (status = 200, body = BrokerView),
    (status = 401, body = ErrorBody),
))]
pub async fn get(
    State(state): State<AppState>,
    Caller(who): Caller,
) -> ApiResult<Json<BrokerView>> {
    let s = &state.services;
    Ok(Json(topology::view(&s.db, &who, &s.broker_depths).await?))
}

/// Asks for a full reconciliation pass (operators): every object the catalog wants is declared
/// and bound again within a second, repairing what was removed by hand. Answers 202.
#[utoipa::path(post, path = "/api/v1/broker/reconcile", tag = "broker", responses(
    (status = 202, description = "the next pass is a full one"),
    (status = 401, body = ErrorBody),
    (status = 403, body = ErrorBody),
))]
pub async fn reconcile(
    State(state): State<AppState>,
    Caller(who): Caller,
) -> ApiResult<StatusCode> {
    topology::request_full_pass(&state.services.db, &who, chrono::Utc::now()).await?;
    Ok(StatusCode::ACCEPTED)
}
