//! The operator summary at the top of a launch setting's page: newest runs, the last hour's
//! failures and dead letters, the dead letters waiting, and the figures per minute.

use crate::error::UiError;
use am_domain::read::overview::Overview;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;

/// The summary of launch setting `id`.
#[server(prefix = "/ui", endpoint = "launch_setting_overview", input = Json)]
pub async fn launch_setting_overview(id: String) -> Result<Overview, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    Ok(am_services::ls_overview::of(&s.db, &who, &id, chrono::Utc::now()).await?)
}
