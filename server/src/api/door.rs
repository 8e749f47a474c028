//! The API's door, around every route under `/api/`: it refuses what no handler can hold (a
//! NUL character in the address, which PostgreSQL cannot store or compare), and gives every
//! refusal the JSON error shape, including those answered before a handler runs (axum's
//! path and query extractors, an unknown path, a method a route does not serve), which would
//! otherwise be plain text or the admin UI's HTML page.

use crate::error::AppError;
use axum::{
    extract::Request,
    http::{Method, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

/// Longest refusal text carried over into the JSON error (axum's are one line).
const MAX_TEXT: usize = 16 * 1024;

pub async fn middleware(req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path != "/api" && !path.starts_with("/api/") {
        return next.run(req).await;
    }
    if req
        .uri()
        .path_and_query()
        .is_some_and(|pq| pq.as_str().contains("%00"))
    {
        return AppError::BadRequest(
            "the address contains a NUL character (%00), which no id, name or filter can hold"
                .into(),
        )
        .into_response();
    }
    let (method, path) = (req.method().clone(), path.to_owned());
    let res = next.run(req).await;
    if !res.status().is_client_error() || is_json(&res) {
        return res;
    }
    reshape(res, &method, &path).await
}

fn is_json(res: &Response) -> bool {
    res.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"))
}

/// The same refusal as `{"error": "..."}`: what axum said, or what the status means here.
async fn reshape(res: Response, method: &Method, path: &str) -> Response {
    let (parts, body) = res.into_parts();
    let text = axum::body::to_bytes(body, MAX_TEXT)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let error = match parts.status {
        StatusCode::NOT_FOUND if text.is_empty() || text.starts_with('<') => {
            format!(
                "no such API endpoint: {method} {path} (the OpenAPI document is at /api/v1/openapi.json)"
            )
        }
        StatusCode::METHOD_NOT_ALLOWED => {
            let allowed = parts
                .headers
                .get(header::ALLOW)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            format!("{method} is not served on {path}; it takes: {allowed}")
        }
        _ if text.is_empty() || text.starts_with('<') => parts
            .status
            .canonical_reason()
            .unwrap_or("refused")
            .to_owned(),
        _ => text,
    };
    let mut out = (
        parts.status,
        axum::Json(crate::error::ErrorBody {
            error,
            errors: vec![],
        }),
    )
        .into_response();
    for name in [header::ALLOW, header::WWW_AUTHENTICATE] {
        if let Some(v) = parts.headers.get(&name) {
            out.headers_mut().insert(name, v.clone());
        }
    }
    out
}
