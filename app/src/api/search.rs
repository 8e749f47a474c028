//! Server function of the global search: one call per search page.

use crate::error::UiError;
use am_domain::read::search::Hit;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;

/// Everything matching `q`.
#[server(prefix = "/ui", endpoint = "search", input = Json)]
pub async fn search(q: String) -> Result<Vec<Hit>, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    Ok(am_services::search::find(&services()?.db, &who, &q).await?)
}
