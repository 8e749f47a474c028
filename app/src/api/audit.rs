//! Server function of the audit log page: entries matching the filters in the URL, newest first,
//! each with the fields it changed (am_domain::read::audit).

use crate::error::UiError;
use am_domain::read::audit::{AuditFilter, AuditPage};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The filters of the page, as in its URL
/// (`?actor=&entity_type=&entity_id=&action=&from=&to=&after=`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditQuery {
    #[serde(flatten)]
    pub filter: AuditFilter,
    /// The cursor: the `next` of the previous page.
    pub after: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditView {
    pub page: AuditPage,
    /// When the server read the list: the base of its relative times.
    pub now: chrono::DateTime<chrono::Utc>,
}

#[server(prefix = "/ui", endpoint = "audit", input = Json)]
pub async fn list_audit(query: AuditQuery) -> Result<AuditView, UiError> {
    use super::ssr::*;
    use am_services::audit;
    let who = require(Operation::Read)?;
    let after = match query.after.trim() {
        "" => None,
        a => Some(a.parse::<i64>().map_err(|_| {
            am_services::ServiceError::invalid("after", format!("`{a}` is not an audit entry id"))
        })?),
    };
    let page = audit::list(&services()?.db, &who, &query.filter, after, audit::PAGE).await?;
    Ok(AuditView {
        page,
        now: chrono::Utc::now(),
    })
}
