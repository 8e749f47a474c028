//! Server function of the audit log page: entries matching the filters in the URL, newest first,
//! each with the fields it changed.

use crate::error::UiError;
use am_domain::audit::Change;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The filters of the page, as in its URL
/// (`?actor=&entity_type=&entity_id=&action=&from=&to=&after=`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditQuery {
    pub actor: String,
    pub entity_type: String,
    pub entity_id: String,
    pub action: String,
    pub from: String,
    pub to: String,
    /// The cursor: the `next` of the previous page.
    pub after: String,
}

/// One entry as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRow {
    pub id: i64,
    pub at: chrono::DateTime<chrono::Utc>,
    pub actor: String,
    pub address: Option<String>,
    pub action: String,
    pub entity_type: String,
    pub entity_id: String,
    pub cause: Option<String>,
    /// The fields the entry changed, secrets masked.
    pub changes: Vec<Change>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditView {
    pub rows: Vec<AuditRow>,
    pub next: Option<i64>,
    /// When the server read the list: the base of its relative times.
    pub now: chrono::DateTime<chrono::Utc>,
}

#[server(prefix = "/ui", endpoint = "audit", input = Json)]
pub async fn list_audit(query: AuditQuery) -> Result<AuditView, UiError> {
    use super::ssr::*;
    use am_domain::audit::changes;
    use am_services::audit::{self, AuditFilter};
    let who = require(Operation::Read)?;
    let opt = |s: &str| Some(s.to_owned());
    let filter = AuditFilter {
        actor: opt(&query.actor),
        entity_type: opt(&query.entity_type),
        entity_id: opt(&query.entity_id),
        action: opt(&query.action),
        from: opt(&query.from),
        to: opt(&query.to),
    };
    let after = match query.after.trim() {
        "" => None,
        a => Some(a.parse::<i64>().map_err(|_| {
            am_services::ServiceError::invalid("after", format!("`{a}` is not an audit entry id"))
        })?),
    };
    let page = audit::list(&services()?.db, &who, &filter, after, audit::PAGE).await?;
    Ok(AuditView {
        rows: page
            .entries
            .into_iter()
            .map(|e| AuditRow {
                changes: changes(e.before.as_ref(), e.after.as_ref()),
                id: e.id,
                at: e.at,
                actor: e.actor,
                address: e.address,
                action: e.action,
                entity_type: e.entity_type,
                entity_id: e.entity_id,
                cause: e.cause,
            })
            .collect(),
        next: page.next,
        now: chrono::Utc::now(),
    })
}
