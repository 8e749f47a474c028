//! Server function of the global search: one call per search page.

use crate::error::UiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// One hit as the search page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitView {
    /// `launch setting`, `activation`, `dead letter`, ...
    pub kind: String,
    pub id: String,
    pub label: String,
    pub href: String,
    /// The text named it whole; the page goes to the one such hit.
    pub exact: bool,
}

/// Everything matching `q`.
#[server(prefix = "/ui", endpoint = "search", input = Json)]
pub async fn search(q: String) -> Result<Vec<HitView>, UiError> {
    use super::ssr::*;
    use am_services::search::{self, Found};
    let who = require(Operation::Read)?;
    let hits = search::find(&services()?.db, &who, &q).await?;
    Ok(hits
        .into_iter()
        .map(|h| {
            let (kind, id, href) = match &h.found {
                Found::Activation { id } => {
                    ("activation", id.to_string(), format!("/activations/{id}"))
                }
                Found::DeadLetter { id } => (
                    "dead letter",
                    format!("#{id}"),
                    format!("/dead-letters/{id}"),
                ),
                // A host leads to what ran there.
                Found::Host { name } => ("host", name.clone(), format!("/activations?host={name}")),
                // An error type leads to its failures.
                Found::ErrorType { name } => (
                    "error type",
                    name.clone(),
                    am_domain::links::href("/failures", &[("error_type", name)]),
                ),
                found => {
                    let entity = found.entity();
                    let href = entity
                        .as_ref()
                        .map(super::catalog::entity_href)
                        .unwrap_or_default();
                    let (kind, id) = match found {
                        Found::Application { id } => ("application", id.clone()),
                        Found::Pool { id } => ("pool", id.clone()),
                        Found::DataQueue { id } => ("data queue", id.clone()),
                        Found::Agent { application, id } => {
                            ("agent", format!("{application}/{id}"))
                        }
                        Found::LaunchSetting { id } => ("launch setting", id.clone()),
                        Found::ScheduleGroup { id } => ("schedule group", id.clone()),
                        Found::Host { .. }
                        | Found::ErrorType { .. }
                        | Found::Activation { .. }
                        | Found::DeadLetter { .. } => ("", String::new()),
                    };
                    (kind, id, href)
                }
            };
            HitView {
                kind: kind.to_owned(),
                id,
                label: h.label,
                href,
                exact: h.exact,
            }
        })
        .collect())
}
