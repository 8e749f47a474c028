//! Pages of the admin UI.

pub mod activations;
pub mod audit;
pub mod broker;
pub mod catalog_list;
pub mod dashboard;
pub mod dead_letters;
pub mod drift;
pub mod entities;
pub mod failures;
pub mod launch_settings;
pub mod login;
pub mod nodes;
pub mod notifications;
pub mod operations;
pub mod published;
pub mod schedule_groups;
pub mod search;
pub mod sessions;
pub mod tokens;
pub mod users;

use leptos::prelude::*;

#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        resp.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <main class="content">
            <h1>"Page not found"</h1>
            <p><a href="/">"Back to the dashboard"</a></p>
        </main>
    }
}
