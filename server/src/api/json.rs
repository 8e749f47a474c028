//! JSON request bodies whose mistakes come back as API errors with the path of the bad field
//! (`launch_settings[2].kind: unknown variant ...`), not as a bare parser message.

use crate::error::AppError;
use am_domain::{FieldError, ValidationErrors, catalog::Channels};
use am_services::ServiceError;
use axum::{
    body::Bytes,
    extract::{FromRequest, Request},
    http::header,
};
use serde::de::DeserializeOwned;

pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("application/json") || ct.contains("+json"));
        if !is_json {
            return Err(AppError::BadRequest(
                "expected a JSON body (Content-Type: application/json)".into(),
            ));
        }
        let limit = body_limit(&req);
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                AppError::TooLarge { limit }
            } else {
                AppError::BadRequest(format!("cannot read the request body: {e}"))
            }
        })?;
        parse(&bytes).map(ApiJson)
    }
}

/// A launch setting or schedule group as written: what a GET returned may be sent back, so its
/// read-only `status` is dropped before the entity is read (which refuses unknown fields).
pub struct EntityJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for EntityJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let ApiJson(mut value) = ApiJson::<serde_json::Value>::from_request(req, state).await?;
        if let Some(fields) = value.as_object_mut() {
            fields.remove("status");
        }
        from_value(value).map(EntityJson)
    }
}

/// As [`parse`], from a document already parsed.
fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, AppError> {
    serde_path_to_error::deserialize(value)
        .map_err(|e| shape_error(e.path(), &e.inner().to_string()))
}

/// A document (a body, or a query string: `query.rs`) of the wrong shape: the error at its path
/// (`launch_settings[2].kind`).
pub(crate) fn shape_error(path: &serde_path_to_error::Path, message: &str) -> AppError {
    let path = path.to_string();
    let (path, message) = flattened_field(
        if path == "." { String::new() } else { path },
        strip_position(message),
    );
    let mut errors = ValidationErrors::new();
    errors.0.push(FieldError::new(path, message));
    AppError::Service(ServiceError::Invalid(errors))
}

/// An entity's channels are flattened into it (`am_domain::catalog::Channels`): serde reads
/// them from a buffer the path tracker does not follow, so their errors, and the unknown
/// fields the entity finds left over, stop at the entity's path. The field they name goes
/// back on the path (`applications[0]` and `webhook_format: unknown variant` become
/// `applications[0].webhook_format` and `unknown variant`).
fn flattened_field(path: String, message: String) -> (String, String) {
    let at = |field: &str| {
        if path.is_empty() {
            field.to_owned()
        } else {
            format!("{path}.{field}")
        }
    };
    if let Some((field, rest)) = Channels::field_of_error(&message) {
        return (at(field), rest.to_owned());
    }
    let unknown = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(field, _)| field);
    match unknown {
        Some(field) if !path.ends_with(&format!(".{field}")) && path != field => {
            (at(field), message)
        }
        _ => (path, message),
    }
}

/// The body limit in force for this request: the route's `DefaultBodyLimit`, else axum's
/// default. Only for the error message; axum enforces it.
fn body_limit(req: &Request) -> usize {
    req.extensions()
        .get::<BodyLimit>()
        .map_or(DEFAULT_BODY_LIMIT, |l| l.0)
}

/// axum's own limit when a route sets none (2 MiB).
pub const DEFAULT_BODY_LIMIT: usize = 2 * 1024 * 1024;

/// Names the body limit a route set, so the 413 can say it (axum keeps its own private).
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

/// Parses JSON, locating a type mismatch or unknown field by its path in the document. Every
/// body of the API is an object: serde would also read a struct from an array of its fields
/// in order, so `[]` would be a catalog with every field defaulted (an empty one).
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, AppError> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(_) if serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok() => {
            return Err(AppError::BadRequest(
                "the body must be a JSON object ({...})".into(),
            ));
        }
        _ => {}
    }
    if has_nul(bytes) {
        return Err(AppError::BadRequest(
            "a text in the body contains a NUL character (\\u0000), which cannot be stored".into(),
        ));
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let inner = e.inner();
        if inner.is_syntax() || inner.is_eof() || inner.is_io() {
            AppError::BadRequest(format!("the body is not valid JSON: {inner}"))
        } else {
            shape_error(e.path(), &inner.to_string())
        }
    })
}

/// Whether a string (or key) of the JSON document holds a NUL character, which PostgreSQL
/// cannot store. JSON writes one only as the escape `\u0000`, so a body without it is read no
/// further.
fn has_nul(bytes: &[u8]) -> bool {
    bytes.windows(6).any(|w| w == b"\\u0000")
        && serde_json::from_slice::<serde_json::Value>(bytes)
            .is_ok_and(|v| am_domain::text::json_has_nul(&v))
}

/// serde_json appends "at line L column C", which the path already says better.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use am_domain::catalog::Catalog;

    #[test]
    fn shape_errors_carry_their_path() {
        let body = br#"{"version":1,"launch_settings":[{"id":"a","application":"x","agent":"y","kind":"sometimes"}]}"#;
        let Err(AppError::Service(ServiceError::Invalid(errors))) = parse::<Catalog>(body) else {
            panic!("expected a validation error");
        };
        assert_eq!(errors.0[0].path, "launch_settings[0].kind");
        assert!(
            errors.0[0].message.contains("sometimes"),
            "{}",
            errors.0[0].message
        );
    }

    #[test]
    fn the_channels_errors_carry_their_field_on_the_path() {
        let cases = [
            (
                r#"{"applications":[{"id":"a","default_pool":"p","webhook_format":"xml"}]}"#,
                "applications[0].webhook_format",
                "unknown variant `xml`",
            ),
            (
                r#"{"schedule_groups":[{"id":"g","application":"a","cron":"0 2 * * *","webhook_events":[3]}]}"#,
                "schedule_groups[0].webhook_events",
                "invalid type",
            ),
            (
                r#"{"applications":[{"id":"a","default_pool":"p","colour":"red"}]}"#,
                "applications[0].colour",
                "unknown field `colour`",
            ),
            (
                r#"{"applications":[{"id":"a","default_pool":"p"}],"colour":1}"#,
                "colour",
                "unknown field `colour`",
            ),
        ];
        for (body, path, message) in cases {
            let Err(AppError::Service(ServiceError::Invalid(errors))) =
                parse::<Catalog>(body.as_bytes())
            else {
                panic!("{body} was accepted");
            };
            assert_eq!(errors.0[0].path, path, "{body}");
            assert!(
                errors.0[0].message.starts_with(message),
                "{body}: {}",
                errors.0[0].message
            );
        }
    }

    #[test]
    fn only_objects_are_bodies() {
        for body in [&b"[]"[..], b" [1, 2]", b"\"catalog\"", b"42", b"null"] {
            let Err(AppError::BadRequest(m)) = parse::<Catalog>(body) else {
                panic!("{} was accepted", String::from_utf8_lossy(body));
            };
            assert!(m.contains("JSON object"), "{m}");
        }
        assert!(parse::<Catalog>(b" {}").is_ok());
    }

    #[test]
    fn nul_characters_are_refused_but_their_spelling_is_not() {
        let Err(AppError::BadRequest(m)) =
            parse::<serde_json::Value>(br#"{"title": ["a\u0000b"]}"#)
        else {
            panic!("a NUL was accepted");
        };
        assert!(m.contains("NUL"), "{m}");
        // An escaped backslash followed by the text u0000 is no NUL.
        assert!(parse::<serde_json::Value>(br#"{"title": "\\u0000"}"#).is_ok());
    }

    #[test]
    fn syntax_errors_are_bad_requests() {
        assert!(matches!(
            parse::<Catalog>(b"{nope"),
            Err(AppError::BadRequest(_))
        ));
    }
}
