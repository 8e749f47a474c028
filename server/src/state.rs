//! What every handler can reach.

use crate::config::HttpConfig;
use am_services::Services;
use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub services: Services,
    pub leptos_options: LeptosOptions,
    pub http: Arc<HttpConfig>,
    /// The dashboard's live figures, shared by every open dashboard.
    pub dashboard: crate::live::DashboardFeed,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}
