//! The server functions' door, around every call under `/ui/` (the admin UI's, and anyone's
//! who calls them by hand): the role first, as the API checks it before reading a body (a
//! viewer calling an operator's function gets 403, not a list of its malformed arguments);
//! then the same refusal of control characters the API's door gives, so
//! that nothing the UI stores differs from what the API would store. A NUL or another control
//! character in any argument (query, form field or JSON string, login included) is answered
//! 400 naming the argument, before the function runs; tabs and line breaks pass, as free text
//! may hold them, and the catalog's own rules refuse them where a text is one line
//! (`am_domain::text`).

use am_domain::text::{self, Lines};
use am_services::{Principal, ServiceError};
use app::{
    api::server_fn_operations::{Caller, caller_of},
    error::UiError,
};
use axum::{
    body::{Body, Bytes},
    extract::Request,
    http::{StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

/// Server functions take form fields and small JSON documents; larger catalogs go through the
/// API. docs/operations.md, "Limits".
pub const SERVER_FN_BODY_LIMIT: usize = 1024 * 1024;

pub async fn middleware(req: Request, next: Next) -> Response {
    if !req.uri().path().starts_with("/ui/") {
        return next.run(req).await;
    }
    // The role first, before the arguments are read (app::api::server_fn_operations).
    if let Some(Caller::May(operation)) = caller_of(req.uri().path()) {
        match req.extensions().get::<Principal>() {
            Some(p) if p.role.may(operation) => {}
            Some(p) => {
                let refusal = ServiceError::Forbidden {
                    have: p.role,
                    need: operation.least_role(),
                };
                return answer(
                    StatusCode::FORBIDDEN,
                    UiError::Forbidden(refusal.to_string()),
                );
            }
            None => return answer(StatusCode::UNAUTHORIZED, UiError::Unauthenticated),
        }
    }
    if let Some(refusal) = req.uri().query().and_then(|q| in_form(q.as_bytes())) {
        return refuse(&refusal);
    }
    let kind = body_kind(&req);
    if kind == BodyKind::Other {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    // The body limit is enforced outside this door; this read stays within it.
    let bytes = match axum::body::to_bytes(body, SERVER_FN_BODY_LIMIT).await {
        Ok(b) => b,
        Err(e) => {
            return answer(
                StatusCode::BAD_REQUEST,
                UiError::BadRequest(format!("cannot read the request body: {e}")),
            );
        }
    };
    let refusal = match kind {
        BodyKind::Form => in_form(&bytes),
        BodyKind::Json => in_json(&bytes),
        BodyKind::Other => None,
    };
    match refusal {
        Some(r) => refuse(&r),
        None => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    Form,
    Json,
    Other,
}

fn body_kind(req: &Request) -> BodyKind {
    let ct = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ct.starts_with("application/x-www-form-urlencoded") {
        BodyKind::Form
    } else if ct.starts_with("application/json") {
        BodyKind::Json
    } else {
        BodyKind::Other
    }
}

/// An argument holding a character no argument may hold.
#[derive(Debug, PartialEq, Eq)]
struct Refusal {
    argument: String,
    character: char,
}

fn check(argument: impl FnOnce() -> String, value: &str) -> Option<Refusal> {
    text::forbidden(value, Lines::Many).map(|character| Refusal {
        argument: argument(),
        character,
    })
}

/// The first field of a URL-encoded form (or query string) that holds a forbidden character,
/// in its name or its value.
fn in_form(bytes: &[u8]) -> Option<Refusal> {
    url::form_urlencoded::parse(bytes).find_map(|(name, value)| {
        check(|| name.escape_default().to_string(), &name)
            .or_else(|| check(|| name.clone().into_owned(), &value))
    })
}

/// The first string (or key) of a JSON body that holds a forbidden character, by its path. A
/// body that is not JSON is left to the function, which answers that itself.
fn in_json(bytes: &Bytes) -> Option<Refusal> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    in_value(&value, &mut String::new())
}

fn in_value(v: &serde_json::Value, path: &mut String) -> Option<Refusal> {
    match v {
        serde_json::Value::String(s) => check(|| path.clone(), s),
        serde_json::Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let found = in_value(item, path);
            path.truncate(len);
            found
        }),
        serde_json::Value::Object(map) => map.iter().find_map(|(k, item)| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&k.escape_default().to_string());
            let found = check(|| path.clone(), k).or_else(|| in_value(item, path));
            path.truncate(len);
            found
        }),
        _ => None,
    }
}

fn refuse(r: &Refusal) -> Response {
    tracing::info!(argument = %r.argument, "server function call refused: control character");
    answer(
        StatusCode::BAD_REQUEST,
        UiError::BadRequest(format!(
            "the argument `{}` contains the control character U+{:04X}; arguments hold no \
             control characters but tabs and line breaks",
            r.argument,
            u32::from(r.character)
        )),
    )
}

/// A refusal in the server functions' own error encoding, so the UI shows its message.
fn answer(status: StatusCode, error: UiError) -> Response {
    let body = serde_json::to_string(&error)
        .unwrap_or_else(|_| format!("{{\"BadRequest\":{:?}}}", error.to_string()));
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_are_checked_field_by_field() {
        assert_eq!(in_form(b"name=admin&password=a%09b%0Ac"), None);
        let r = in_form(b"name=ghost%00user&password=x").expect("NUL found");
        assert_eq!((r.argument.as_str(), r.character), ("name", '\0'));
        let r = in_form(b"entity%5Btitle%5D=a%1Bb").expect("ESC found");
        assert_eq!(r.argument, "entity[title]");
        assert!(in_form(b"a%00b=1").is_some(), "a NUL in a field's name");
    }

    #[test]
    fn json_is_checked_with_paths() {
        let body = Bytes::from_static(br#"{"query":{"hosts":["a","b\u0000"]},"n":1}"#);
        let r = in_json(&body).expect("NUL found");
        assert_eq!(r.argument, "query.hosts[1]");
        assert_eq!(
            in_json(&Bytes::from_static(br#"{"text":"line\nbreak\ttab"}"#)),
            None
        );
        assert_eq!(in_json(&Bytes::from_static(b"not json")), None);
    }
}
