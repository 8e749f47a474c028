//! The audit log as the API and the page read it: which entries, and each entry with the
//! entity before and after the change.

use crate::audit::{Change, changes};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Which entries to show; empty fields do not filter, and they combine with AND.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::IntoParams),
    into_params(parameter_in = Query)
)]
#[serde(default)]
pub struct AuditFilter {
    /// Who acted: a user name, or the part of the manager (`breaker`, `cli`, …).
    pub actor: Option<String>,
    /// The kind of entity (`launch_setting`, `schedule_group`, `user`, …).
    pub entity_type: Option<String>,
    /// One entity's id: with `entity_type`, its history.
    pub entity_id: Option<String>,
    /// What was done (`update`, `disable`, `login`, …).
    pub action: Option<String>,
    /// Entries at or after this time (RFC 3339, `YYYY-MM-DDTHH:MM` or `YYYY-MM-DD`, UTC).
    pub from: Option<String>,
    /// Entries before this time.
    pub to: Option<String>,
}

/// One audit entry as pages and the API show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditRecord {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    /// The client address the change came from, when it came over HTTP.
    pub address: Option<String>,
    pub action: String,
    pub entity_type: String,
    pub entity_id: String,
    /// The entity before the change (`null` when it was created), secrets masked.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub before: Option<serde_json::Value>,
    /// The entity after the change (`null` when it was deleted), secrets masked.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub after: Option<serde_json::Value>,
    /// Why, when the actor gave (or the manager recorded) a reason.
    pub cause: Option<String>,
}

impl AuditRecord {
    /// The fields the entry changed, secrets masked.
    pub fn changes(&self) -> Vec<Change> {
        changes(self.before.as_ref(), self.after.as_ref())
    }
}

/// A page of entries, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditPage {
    pub entries: Vec<AuditRecord>,
    /// Pass as `after` for the next (older) page; `null` on the last.
    pub next: Option<i64>,
}
