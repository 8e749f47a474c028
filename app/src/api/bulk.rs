//! The server function of the catalog lists' bulk actions: *Run now*, *Interrupt*, *Disable*
//! and *Enable* on the launch settings or schedule groups an operator selected. The rule (role,
//! bounds, one transaction and audit entry per entity, causes) is `am_services::bulk`; this maps
//! the list's ids to entities and each outcome back to its row.

use super::catalog::Kind;
use crate::error::UiError;
pub use am_domain::bulk::BulkAction;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// What a bulk action did to one entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BulkDone {
    /// The entity's id as its row shows it.
    pub id: String,
    /// *Run now*: the activation it started.
    pub activation: Option<String>,
    /// *Interrupt*: how many of its runs were asked to stop.
    pub interrupted: Option<u64>,
    /// Why this one was not acted on.
    pub error: Option<String>,
}

/// Acts with `action` on the entities `ids` of `kind` (operators and admins), each as its row's
/// own action would, and says per id what came of it.
#[server(prefix = "/ui", endpoint = "bulk_act", input = Json)]
pub async fn bulk_act(
    kind: Kind,
    ids: Vec<String>,
    action: BulkAction,
) -> Result<Vec<BulkDone>, UiError> {
    use super::ssr::{Operation, require};
    use am_services::bulk::{self, Done};
    let who = require(Operation::Bulk)?;
    let keys = ids
        .iter()
        .map(|id| {
            kind.switch_key(id).map(Into::into).ok_or_else(|| {
                UiError::bad_request(format!("kind: {} have no bulk actions", kind.title()))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let s = super::ssr::services()?;
    let done = bulk::act(&s.db, &s.runtime, &who, &keys, action, "in the UI").await?;
    Ok(ids
        .into_iter()
        .zip(done)
        .map(|(id, one)| {
            let mut row = BulkDone {
                id,
                activation: None,
                interrupted: None,
                error: None,
            };
            match one {
                Ok(Done::Switched) => {}
                Ok(Done::Started(a)) => row.activation = Some(a.to_string()),
                Ok(Done::Interrupted(runs)) => row.interrupted = Some(runs.len() as u64),
                Err(e) => row.error = Some(UiError::item_detail(e)),
            }
            row
        })
        .collect())
}
