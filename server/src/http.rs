//! The whole HTTP surface in one router: probes, the JSON API, the admin UI (SSR pages and
//! server functions) and static assets, behind the authentication middleware.

use crate::{api, auth, state::AppState};
use app::{App, api::ssr::SecureCookies, shell};
use axum::{Router, middleware};
use leptos::prelude::provide_context;
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower_http::trace::TraceLayer;

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
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::middleware,
        ))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}
