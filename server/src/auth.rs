//! Who is calling, and may they: resolves the caller from a Bearer token or the session cookie,
//! enforces login on every page and API call, and checks the Origin of state-changing browser
//! requests (cookies are sent cross-site on top-level navigations; tokens are not).

use crate::{error::AppError, state::AppState};
use am_services::{
    Principal, ServiceError,
    accounts::{self, ClientAddr},
};
use app::api::SESSION_COOKIE;
use axum::{
    extract::{ConnectInfo, FromRequestParts, Request, State},
    http::{HeaderMap, Method, StatusCode, Uri, header, request::Parts},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};
use std::net::SocketAddr;

/// Paths anyone may reach: probes, the login page and its server function, static assets, and
/// `/metrics` when the configuration opens it (`AM_METRICS_PUBLIC`).
fn is_public(path: &str, metrics_public: bool) -> bool {
    matches!(
        path,
        "/login" | "/ui/login" | "/healthz" | "/readyz" | "/api/v1/openapi.json"
    ) || path.starts_with("/pkg/")
        || path == "/favicon.ico"
        || (metrics_public && path == "/metrics")
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|line| {
            line.split(';').find_map(|kv| {
                let (k, v) = kv.trim().split_once('=')?;
                (k == name).then_some(v)
            })
        })
}

fn is_state_changing(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The request's Origin must be this server (as the browser addressed it) or a configured one.
fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|origin| is_own_origin(origin, headers, allowed))
}

/// A server function called by a plain form post redirects back to the Referer: one naming
/// another site would make the manager an open redirect, so it is dropped (the redirect then
/// goes to `/`).
fn drop_foreign_referer(headers: &mut HeaderMap, allowed: &[String]) {
    let foreign = headers.get(header::REFERER).is_some_and(|referer| {
        !referer
            .to_str()
            .ok()
            .and_then(|r| url::Url::parse(r).ok())
            .is_some_and(|u| is_own_origin(&u.origin().ascii_serialization(), headers, allowed))
    });
    if foreign {
        headers.remove(header::REFERER);
    }
}

fn is_own_origin(origin: &str, headers: &HeaderMap, allowed: &[String]) -> bool {
    let origin = origin.trim_end_matches('/');
    if allowed.iter().any(|a| a == origin) {
        return true;
    }
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        == Some(host)
}

/// Callers that are programs (the API, server functions, a metrics scraper): they get a 401,
/// not a redirect to the login page.
fn wants_json(uri: &Uri) -> bool {
    uri.path().starts_with("/api/") || uri.path().starts_with("/ui/") || uri.path() == "/metrics"
}

pub async fn middleware(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let client = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip().to_string())
        .unwrap_or_default();
    req.extensions_mut().insert(ClientAddr(client.clone()));

    let path = req.uri().path().to_owned();
    let services = &state.services;
    if is_state_changing(req.method()) {
        drop_foreign_referer(req.headers_mut(), &state.http.allowed_origins);
    }

    let principal = if let Some(token) = bearer(req.headers()) {
        match accounts::resolve_token(&services.db, token, &client).await {
            Ok(Some(p)) => Some(p),
            Ok(None) => return AppError::BadToken.into_response(),
            Err(e) => return AppError::Service(e).into_response(),
        }
    } else {
        // The Origin check protects what a browser's cookie may do. An API call with neither a
        // token nor a session can do nothing: it is answered 401 (below), not 403.
        let credentialless_api = path.starts_with("/api/")
            && cookie(req.headers(), SESSION_COOKIE).is_none_or(str::is_empty);
        if is_state_changing(req.method())
            && !credentialless_api
            && !origin_allowed(req.headers(), &state.http.allowed_origins)
        {
            tracing::warn!(%path, origin = ?req.headers().get(header::ORIGIN), "state-changing request with a foreign or missing Origin refused");
            return AppError::BadOrigin.into_response();
        }
        match cookie(req.headers(), SESSION_COOKIE) {
            Some(secret) if !secret.is_empty() => {
                match accounts::resolve_session(services, secret).await {
                    Ok(p) => p,
                    Err(e) => return AppError::Service(e).into_response(),
                }
            }
            _ => None,
        }
    };

    match principal {
        Some(mut p) => {
            if path == "/login" && req.method() == Method::GET {
                return Redirect::to("/").into_response();
            }
            // What the caller changes is audited with the address it came from.
            p.address = (!client.is_empty()).then_some(client);
            req.extensions_mut().insert(p);
            // Whatever a signed-in caller is shown (a new token's secret included) stays out
            // of every cache on the way; public files (the browser bundle) stay cacheable.
            let public = is_public(&path, state.http.metrics_public);
            let mut res = next.run(req).await;
            if !public {
                res.headers_mut()
                    .entry(header::CACHE_CONTROL)
                    .or_insert(header::HeaderValue::from_static("no-store"));
            }
            return res;
        }
        None if is_public(&path, state.http.metrics_public) => {}
        None if wants_json(req.uri()) => {
            return AppError::Service(ServiceError::Unauthenticated).into_response();
        }
        None => {
            return if req.method() == Method::GET {
                Redirect::to("/login").into_response()
            } else {
                StatusCode::UNAUTHORIZED.into_response()
            };
        }
    }
    next.run(req).await
}

/// The authenticated caller of an API handler.
pub struct Caller(pub Principal);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Principal>()
            .cloned()
            .map(Caller)
            .ok_or(AppError::Service(ServiceError::Unauthenticated))
    }
}

/// An operation as a type, for [`Allowed`]: its one policy is
/// [`am_domain::roles::Operation::least_role`].
pub trait Door {
    const OPERATION: am_domain::roles::Operation;
}

/// The operations the API's handlers name at their door, one type each.
pub mod may {
    macro_rules! doors {
        ($($name:ident),* $(,)?) => {$(
            #[doc = concat!("[`am_domain::roles::Operation::", stringify!($name), "`].")]
            pub struct $name;
            impl super::Door for $name {
                const OPERATION: am_domain::roles::Operation =
                    am_domain::roles::Operation::$name;
            }
        )*};
    }
    doors!(
        Run,
        HandleDeadLetters,
        Bulk,
        Notify,
        EditCatalog,
        ManageUsers
    );
}

/// The caller, refused with 403 unless their role may do `O::OPERATION`. Handlers that read a
/// body take it before the body: axum reads the body last, so a viewer's write is refused as
/// such instead of having its body checked first (a `422` that would tell them what a valid
/// one looks like). The service checks the same operation again where the rule lives.
pub struct Allowed<O>(pub Principal, pub std::marker::PhantomData<O>);

impl<S: Send + Sync, O: Door> FromRequestParts<S> for Allowed<O> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Caller(who) = Caller::from_request_parts(parts, state).await?;
        who.require(O::OPERATION)?;
        Ok(Allowed(who, std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn origin_must_match_host_or_allow_list() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:3000"));
        assert!(!origin_allowed(&h, &[]), "missing origin");
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:3000"),
        );
        assert!(origin_allowed(&h, &[]));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        assert!(!origin_allowed(&h, &[]));
        assert!(origin_allowed(&h, &["http://evil.example".to_owned()]));
    }

    #[test]
    fn a_foreign_referer_is_dropped() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:3000"));
        h.insert(
            header::REFERER,
            HeaderValue::from_static("http://127.0.0.1:3000/launch-settings/x?tab=1"),
        );
        drop_foreign_referer(&mut h, &[]);
        assert!(h.contains_key(header::REFERER), "same origin stays");
        for foreign in [
            "http://evil.example/",
            "http://127.0.0.1:3000.evil.example/",
            "//evil.example/x",
            "not a url",
        ] {
            h.insert(header::REFERER, HeaderValue::from_static(foreign));
            drop_foreign_referer(&mut h, &[]);
            assert!(!h.contains_key(header::REFERER), "{foreign}");
        }
    }

    #[test]
    fn metrics_are_public_only_when_configured() {
        assert!(is_public("/healthz", false));
        assert!(!is_public("/metrics", false));
        assert!(is_public("/metrics", true));
        assert!(!is_public("/api/v1/nodes", true));
    }

    #[test]
    fn reads_bearer_and_cookies() {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer amt_x"),
        );
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; am_session=s3cret; b=2"),
        );
        assert_eq!(bearer(&h), Some("amt_x"));
        assert_eq!(cookie(&h, "am_session"), Some("s3cret"));
        assert_eq!(cookie(&h, "zz"), None);
    }
}
