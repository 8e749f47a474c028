//! Liveness and readiness probes.

use crate::state::AppState;
use axum::{Json, extract::State, http::StatusCode};
use serde::Serialize;

#[derive(Serialize, utoipa::ToSchema)]
pub struct Ready {
    pub ready: bool,
    pub database: Component,
    pub broker: Component,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Component {
    pub up: bool,
    pub detail: String,
}

/// The process is alive.
#[utoipa::path(get, path = "/healthz", tag = "probes", security(()), responses((status = 200, description = "alive")))]
pub async fn healthz() -> &'static str {
    "ok"
}

/// The database and the broker are reachable.
#[utoipa::path(get, path = "/readyz", tag = "probes", security(()), responses(
    (status = 200, body = Ready, description = "ready"),
    (status = 503, body = Ready, description = "a dependency is down"),
))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Ready>) {
    let h = am_services::health::check(&state.services.db, &state.services.broker).await;
    let ready = h.ready();
    let body = Ready {
        ready,
        database: Component {
            up: h.database.up,
            detail: h.database.detail,
        },
        broker: Component {
            up: h.broker.up,
            detail: h.broker.detail,
        },
    };
    (
        if ready {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        Json(body),
    )
}
