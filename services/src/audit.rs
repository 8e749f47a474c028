//! The audit log: who changed what, when, with the state before and after. Entries are written
//! inside the transaction of the change they describe, so there is never one without the other.

use crate::{Principal, entity::audit_log, error::ServiceResult};
use chrono::Utc;
use sea_orm::{ActiveModelTrait, ConnectionTrait, Set};
use serde::Serialize;

#[derive(Debug, Clone)]
pub struct AuditEntry {
    pub actor: String,
    pub action: String,
    pub entity_type: String,
    pub entity_id: String,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
    pub cause: Option<String>,
}

impl AuditEntry {
    pub fn new(actor: &Principal, action: &str, entity_type: &str, entity_id: &str) -> Self {
        Self {
            actor: actor.name.clone(),
            action: action.to_owned(),
            entity_type: entity_type.to_owned(),
            entity_id: entity_id.to_owned(),
            before: None,
            after: None,
            cause: None,
        }
    }

    pub fn before(mut self, value: &impl Serialize) -> Self {
        self.before = serde_json::to_value(value).ok();
        self
    }

    pub fn after(mut self, value: &impl Serialize) -> Self {
        self.after = serde_json::to_value(value).ok();
        self
    }

    pub fn cause(mut self, cause: impl Into<String>) -> Self {
        self.cause = Some(cause.into());
        self
    }
}

pub async fn record(db: &impl ConnectionTrait, entry: AuditEntry) -> ServiceResult<()> {
    audit_log::ActiveModel {
        at: Set(Utc::now()),
        actor: Set(entry.actor),
        action: Set(entry.action),
        entity_type: Set(entry.entity_type),
        entity_id: Set(entry.entity_id),
        before: Set(entry.before),
        after: Set(entry.after),
        cause: Set(entry.cause),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(())
}
