//! Server function of the dashboard: the figures now, for the page the server renders (complete
//! without JavaScript). Once hydrated, the page follows `/api/v1/dashboard/events` instead.

use crate::error::UiError;
use am_domain::dashboard::Dashboard;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;

/// Where the browser receives the live figures (server-sent events of [`Dashboard`] JSON).
pub const EVENTS: &str = "/api/v1/dashboard/events";

#[server(prefix = "/ui", endpoint = "dashboard", input = Json)]
pub async fn dashboard_figures() -> Result<Dashboard, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let d = am_services::dashboard::snapshot(&s.db, &who, &s.runtime, chrono::Utc::now()).await?;
    Ok(am_services::dashboard::with_broker(d, &s).await?)
}
