//! Refuses a request for a host name the manager does not answer to (`allowed_hosts` holds the
//! rule and why: DNS rebinding).

use crate::{error::AppError, state::AppState};
use axum::{
    extract::{Request, State},
    http::header,
    middleware::Next,
    response::{IntoResponse, Response},
};

/// Probes stay reachable under any name: load balancers address them by IP or by a name of
/// their own, and they show no more than up or down without a token.
fn is_probe(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz")
}

/// Refuses a request whose `Host` the manager does not answer to (400, the JSON error body).
/// A request without `Host` is an HTTP/1.0 client or an in-process call, not a browser.
pub async fn middleware(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if !is_probe(req.uri().path())
        && let Some(host) = req.headers().get(header::HOST)
    {
        let host = host.to_str().unwrap_or("");
        if !state.http.allowed_hosts.allows(host) {
            tracing::warn!(
                host,
                path = req.uri().path(),
                "request for a host this manager does not answer to refused"
            );
            return AppError::BadHost(host.chars().take(100).collect()).into_response();
        }
    }
    next.run(req).await
}
