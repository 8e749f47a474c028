//! The audit log: who changed what, when, with the state before and after. Entries are written
//! inside the transaction of the change they describe, so there is never one without the other.

use crate::{Principal, entity::audit_log, error::ServiceResult};
use chrono::Utc;
use sea_orm::{ActiveModelTrait, ConnectionTrait, EntityTrait, Set};
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

impl AuditEntry {
    fn row(self, at: chrono::DateTime<Utc>) -> audit_log::ActiveModel {
        audit_log::ActiveModel {
            at: Set(at),
            actor: Set(self.actor),
            action: Set(self.action),
            entity_type: Set(self.entity_type),
            entity_id: Set(self.entity_id),
            before: Set(self.before),
            after: Set(self.after),
            cause: Set(self.cause),
            ..Default::default()
        }
    }
}

pub async fn record(db: &impl ConnectionTrait, entry: AuditEntry) -> ServiceResult<()> {
    entry.row(Utc::now()).insert(db).await?;
    Ok(())
}

/// Entries per INSERT: 8 columns each, far below either database's parameter limit.
const BATCH: usize = 500;

/// Records every entry of one change (e.g. a catalog import), in multi-row statements.
pub async fn record_all(db: &impl ConnectionTrait, entries: Vec<AuditEntry>) -> ServiceResult<()> {
    let at = Utc::now();
    let mut rows = entries.into_iter().map(|e| e.row(at)).peekable();
    while rows.peek().is_some() {
        let chunk: Vec<_> = rows.by_ref().take(BATCH).collect();
        audit_log::Entity::insert_many(chunk)
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}
