//! Server functions of the catalog lists' bulk actions: *Run now*, *Disable* and *Enable* on
//! the launch settings or schedule groups an operator selected. Each entity is acted on as its
//! row's own action does (its own transaction and audit entry), so one that cannot be (deleted
//! meanwhile, already disabled) is said on its row and does not stop the others.

use super::catalog::Kind;
use crate::error::UiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// Most entities one bulk action takes: a list page's largest.
pub const MAX_SELECTED: usize = 200;

/// What a bulk action did to one entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BulkDone {
    /// The entity's id as its row shows it.
    pub id: String,
    /// *Run now*: the activation it started.
    pub activation: Option<String>,
    /// Why this one was not acted on.
    pub error: Option<String>,
}

/// The keys of `ids` of `kind`, if it has bulk actions and the count is in bounds.
#[cfg(feature = "ssr")]
fn keys(kind: Kind, ids: &[String]) -> Result<Vec<am_domain::usage::EntityRef>, UiError> {
    if ids.is_empty() || ids.len() > MAX_SELECTED {
        return Err(UiError::BadRequest(format!(
            "ids: select between 1 and {MAX_SELECTED} entities, not {}",
            ids.len()
        )));
    }
    ids.iter()
        .map(|id| {
            kind.switch_key(id).map(Into::into).ok_or_else(|| {
                UiError::BadRequest(format!("kind: {} have no bulk actions", kind.title()))
            })
        })
        .collect()
}

/// Enables or disables the entities `ids` of `kind` (operators and admins), each with the
/// cause the row's own action gives its audit entry.
#[server(prefix = "/ui", endpoint = "bulk_set_enabled", input = Json)]
pub async fn bulk_set_enabled(
    kind: Kind,
    ids: Vec<String>,
    enabled: bool,
) -> Result<Vec<BulkDone>, UiError> {
    use super::ssr::*;
    use am_domain::roles::Role;
    let who = require(Role::Operator)?;
    let keys = keys(kind, &ids)?;
    let s = services()?;
    let cause = format!(
        "{} by {} in the UI, one of {} selected",
        if enabled { "enabled" } else { "disabled" },
        who.name,
        ids.len()
    );
    let mut out = Vec::with_capacity(ids.len());
    for (id, key) in ids.into_iter().zip(keys) {
        let done = am_services::catalog::set_enabled(&s.db, &who, &key, enabled, &cause).await;
        out.push(BulkDone {
            id,
            activation: None,
            error: done.err().map(|e| UiError::from(e).detail()),
        });
    }
    Ok(out)
}

/// *Run now* of the entities `ids` of `kind` (operators and admins): the activations started.
#[server(prefix = "/ui", endpoint = "bulk_run_now", input = Json)]
pub async fn bulk_run_now(kind: Kind, ids: Vec<String>) -> Result<Vec<BulkDone>, UiError> {
    use super::ssr::*;
    use am_domain::roles::Role;
    let who = require(Role::Operator)?;
    let keys = keys(kind, &ids)?;
    let s = services()?;
    let mut out = Vec::with_capacity(ids.len());
    for (id, key) in ids.into_iter().zip(keys) {
        let started = am_services::runtime::run::run_now(&s.db, &s.runtime, &who, &key).await;
        let (activation, error) = match started {
            Ok(a) => (Some(a.to_string()), None),
            Err(e) => (None, Some(UiError::from(e).detail())),
        };
        out.push(BulkDone {
            id,
            activation,
            error,
        });
    }
    Ok(out)
}
