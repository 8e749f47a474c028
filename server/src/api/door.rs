//! The API's door, around every route under `/api/`: it refuses what no handler can hold (a
//! NUL character in the address, which PostgreSQL cannot store or compare), and gives every
//! refusal the JSON error shape, including those answered before a handler runs (axum's
//! path and query extractors, a method a route does not serve), which would otherwise be
//! plain text. An address under `/api/` that no route serves is answered by
//! [`no_such_endpoint`], the API router's own fallback.

use crate::error::{AppError, ErrorBody};
use axum::{
    extract::Request,
    http::{Method, StatusCode, Uri, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use std::sync::LazyLock;
use utoipa::OpenApi;

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

fn no_such(method: &Method, path: &str) -> String {
    format!(
        "no such API endpoint: {method} {path} (the OpenAPI document is at /api/v1/openapi.json)"
    )
}

/// An address under `/api/` that no route serves: 404 in the API's error shape.
pub async fn no_such_endpoint(method: Method, uri: Uri) -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(ErrorBody {
            error: no_such(&method, uri.path()),
            errors: vec![],
        }),
    )
        .into_response()
}

fn is_json(res: &Response) -> bool {
    res.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"))
}

/// The same refusal as `{"error": "..."}`: what axum said, or what the status means here.
async fn reshape(res: Response, method: &Method, path: &str) -> Response {
    let (mut parts, body) = res.into_parts();
    let text = axum::body::to_bytes(body, MAX_TEXT)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let error = match parts.status {
        StatusCode::NOT_FOUND if text.is_empty() => no_such(method, path),
        StatusCode::METHOD_NOT_ALLOWED => {
            let allowed = allowed_methods(path).join(", ");
            if !allowed.is_empty()
                && let Ok(v) = header::HeaderValue::from_str(&allowed)
            {
                parts.headers.insert(header::ALLOW, v);
            }
            format!("{method} is not served on {path}; it takes: {allowed}")
        }
        _ if text.is_empty() => parts
            .status
            .canonical_reason()
            .unwrap_or("refused")
            .to_owned(),
        _ => text,
    };
    let mut out = (
        parts.status,
        axum::Json(ErrorBody {
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

/// The methods the API serves on `path`, read from the OpenAPI document: the one list of the
/// API's routes (a test keeps it equal to the router).
fn allowed_methods(path: &str) -> Vec<&'static str> {
    static ROUTES: LazyLock<Vec<(String, Vec<&'static str>)>> = LazyLock::new(|| {
        super::ApiDoc::openapi()
            .paths
            .paths
            .iter()
            .map(|(template, item)| {
                let methods = [
                    ("GET", item.get.is_some()),
                    ("PUT", item.put.is_some()),
                    ("POST", item.post.is_some()),
                    ("DELETE", item.delete.is_some()),
                    ("PATCH", item.patch.is_some()),
                ];
                let served = methods.into_iter().filter(|m| m.1).map(|m| m.0).collect();
                (template.clone(), served)
            })
            .collect()
    });
    // As the router matches: a literal segment wins over a parameter (`/dead-letters/delete`
    // is not an instance of `/dead-letters/{id}` when both exist).
    let fitting: Vec<_> = ROUTES
        .iter()
        .filter(|(template, _)| fits(template, path))
        .collect();
    let literal = |template: &str| -> Vec<bool> {
        template.split('/').map(|s| !s.starts_with('{')).collect()
    };
    let best = fitting.iter().map(|(t, _)| literal(t)).max();
    let mut out: Vec<&'static str> = fitting
        .iter()
        .filter(|(t, _)| Some(literal(t)) == best)
        .flat_map(|(_, methods)| methods.iter().copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether `path` is an instance of the document's path `template` (`/api/v1/pools/{id}`).
fn fits(template: &str, path: &str) -> bool {
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len()
        && t.iter()
            .zip(&p)
            .all(|(t, p)| t == p || (t.starts_with('{') && t.ends_with('}') && !p.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fit_their_instances_only() {
        assert!(fits("/api/v1/pools/{id}", "/api/v1/pools/p1"));
        assert!(!fits("/api/v1/pools/{id}", "/api/v1/pools/"));
        assert!(!fits("/api/v1/pools/{id}", "/api/v1/pools/p1/run"));
        assert!(!fits("/api/v1/pools", "/api/v1/nodes"));
    }

    #[test]
    fn allowed_methods_come_from_the_document() {
        assert_eq!(allowed_methods("/api/v1/catalog"), ["GET", "PUT"]);
        assert!(allowed_methods("/api/v1/nodes").contains(&"GET"));
        assert!(allowed_methods("/api/v1/nope").is_empty());
        // The literal route, not the dead letter named `delete`.
        assert_eq!(allowed_methods("/api/v1/dead-letters/delete"), ["POST"]);
        assert_eq!(allowed_methods("/api/v1/dead-letters/12"), ["GET"]);
    }
}
