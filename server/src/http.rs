//! The whole HTTP surface in one router: probes, the JSON API, the admin UI (SSR pages and
//! server functions) and static assets, behind the authentication middleware.

use crate::{
    api, auth, browser_safety,
    error::AppError,
    host_check,
    state::AppState,
    ui_door::{self, SERVER_FN_BODY_LIMIT},
};
use app::{App, api::ssr::SecureCookies, shell};
use axum::{
    Router,
    body::Body,
    extract::Request,
    http::header,
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use leptos::prelude::provide_context;
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower_http::{catch_panic::CatchPanicLayer, trace::TraceLayer};

pub fn router(state: AppState) -> Router {
    let routes = generate_route_list(App);
    let services = state.services.clone();
    let secure = SecureCookies(state.http.secure_cookies);
    let leptos_options = state.leptos_options.clone();
    let context = move || {
        provide_context(services.clone());
        provide_context(secure);
    };
    Router::new()
        .merge(api::router())
        .leptos_routes_with_context(&state, routes, context.clone(), move || {
            shell(leptos_options.clone())
        })
        .fallback(leptos_axum::file_and_error_handler_with_context::<
            AppState,
            _,
        >(context, shell))
        .layer(middleware::from_fn(api::door::middleware))
        .layer(middleware::from_fn(ui_door::middleware))
        .layer(middleware::from_fn(limit_server_fn_bodies))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::middleware,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            host_check::middleware,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            browser_safety::middleware,
        ))
        .layer(CatchPanicLayer::custom(answer_panic))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::metrics::record_request,
        ))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// The last line, not the fix: a request that panics a handler is logged with what it
/// panicked with and answered 500 in the API's error shape instead of a dropped connection.
/// Inputs are checked before they reach code that could panic; a panic here is a bug.
fn answer_panic(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic without a message");
    tracing::error!(panic = what, "a request handler panicked");
    AppError::Service(am_services::ServiceError::Internal(
        "a request handler panicked".into(),
    ))
    .into_response()
}

/// Answers 413 for a server-function call whose body is over [`SERVER_FN_BODY_LIMIT`], declared
/// or sent: left to the server function, it would be a 500.
async fn limit_server_fn_bodies(req: Request, next: Next) -> Response {
    if !req.uri().path().starts_with("/ui/") {
        return next.run(req).await;
    }
    let too_large = AppError::TooLarge {
        limit: SERVER_FN_BODY_LIMIT,
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(n) if n > SERVER_FN_BODY_LIMIT as u64 => too_large.into_response(),
        Some(_) => next.run(req).await,
        // A chunked body: read it here, up to the limit.
        None => {
            let (parts, body) = req.into_parts();
            match axum::body::to_bytes(body, SERVER_FN_BODY_LIMIT).await {
                Ok(bytes) => {
                    next.run(Request::from_parts(parts, Body::from(bytes)))
                        .await
                }
                Err(e) if is_length_limit(&e) => too_large.into_response(),
                Err(e) => AppError::BadRequest(format!("cannot read the request body: {e}"))
                    .into_response(),
            }
        }
    }
}

fn is_length_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = err.source();
    }
    false
}
