//! Liveness and readiness probes.

use crate::state::AppState;
use am_services::Principal;
use axum::{Extension, Json, extract::State, http::StatusCode};
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
    /// What was seen (e.g. the connection error), for an authenticated caller only: the
    /// probe is public and the detail names the manager's infrastructure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The process is alive.
#[utoipa::path(get, path = "/healthz", tag = "probes", security(()), responses((status = 200, description = "alive")))]
pub async fn healthz() -> &'static str {
    "ok"
}

/// The database and the broker are reachable. Anyone sees up or down; a caller with a token
/// or a session (any role) also sees each component's detail.
#[utoipa::path(get, path = "/readyz", tag = "probes", security((), ("bearer" = [])), responses(
    (status = 200, body = Ready, description = "ready"),
    (status = 503, body = Ready, description = "a dependency is down"),
))]
pub async fn readyz(
    State(state): State<AppState>,
    caller: Option<Extension<Principal>>,
) -> (StatusCode, Json<Ready>) {
    let h = am_services::health::check(&state.services.db, &state.services.broker).await;
    let ready = h.ready();
    let shown = |detail: String| caller.is_some().then_some(detail);
    // Objects another manager holds under a name of ours: no reason to be unready, but said.
    let mut broker_detail = h.broker.detail;
    if caller.is_some()
        && let Ok(conflicts) = am_services::topology::conflicts(&state.services.db).await
        && !conflicts.is_empty()
    {
        broker_detail.push_str(&format!(
            "; held with other arguments (another manager on the broker?), left alone: {}",
            conflicts.join(", ")
        ));
    }
    let body = Ready {
        ready,
        database: Component {
            up: h.database.up,
            detail: shown(h.database.detail),
        },
        broker: Component {
            up: h.broker.up,
            detail: shown(broker_detail),
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
