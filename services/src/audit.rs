//! The audit log: who changed what, when, from where, with the state before and after. Entries
//! are written inside the transaction of the change they describe, so there is never one without
//! the other; [`list`] reads them back for the Audit log page and `GET /api/v1/audit`.

use crate::{Principal, entity::audit_log, error::ServiceResult, filters};
use am_domain::{
    audit::{LOGIN_FAILED, masked, masked_for_reader},
    read::audit::{AuditFilter, AuditPage, AuditRecord},
    roles::Operation,
};
use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use serde::Serialize;

#[derive(Debug, Clone)]
pub struct AuditEntry {
    pub actor: String,
    pub address: Option<String>,
    pub action: String,
    pub entity_type: String,
    pub entity_id: String,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
    pub cause: Option<String>,
}

impl AuditEntry {
    pub fn new(actor: &Principal, action: &str, entity_type: &str, entity_id: &str) -> Self {
        Self::by(
            &actor.name,
            actor.address.clone(),
            action,
            entity_type,
            entity_id,
        )
    }

    /// An entry of someone who proved nothing yet (a failed login): named as they said, from
    /// where they came.
    pub fn by(
        actor: &str,
        address: Option<String>,
        action: &str,
        entity_type: &str,
        entity_id: &str,
    ) -> Self {
        Self {
            actor: actor.to_owned(),
            address,
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
            address: Set(self.address),
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

/// Entries per page unless the caller asks for fewer.
pub const PAGE: u64 = 100;

/// Entries per page of an export.
pub const EXPORT_PAGE: u64 = 1000;

/// Entries matching `filter`, newest first, `limit` (at most [`PAGE`]) after the cursor
/// `after` (an entry id from the page before). Anyone signed in may read the log: it never holds
/// a secret, and what only admins read (names typed at failed logins, whole webhook URLs) is
/// hidden from the others (see `Reader`).
pub async fn list(
    db: &impl ConnectionTrait,
    actor: &Principal,
    filter: &AuditFilter,
    after: Option<i64>,
    limit: u64,
) -> ServiceResult<AuditPage> {
    actor.require(Operation::Read)?;
    read(db, Reader::of(actor), filter, after, limit.clamp(1, PAGE)).await
}

/// A page of an export: as [`list`], [`EXPORT_PAGE`] entries at a time.
pub async fn export_page(
    db: &impl ConnectionTrait,
    actor: &Principal,
    filter: &AuditFilter,
    after: Option<i64>,
) -> ServiceResult<AuditPage> {
    actor.require(Operation::Read)?;
    read(db, Reader::of(actor), filter, after, EXPORT_PAGE).await
}

/// Who reads the log: admins see every entry whole; anyone else sees no name typed at a failed
/// login nor why it failed (which would tell whether that user exists), and webhook URLs only
/// up to their host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    Admin,
    Other,
}

impl Reader {
    fn of(actor: &Principal) -> Self {
        if actor.role.may(Operation::ReadHidden) {
            Reader::Admin
        } else {
            Reader::Other
        }
    }
}

/// What stands for a name only admins read.
const HIDDEN: &str = "(hidden)";

async fn read(
    db: &impl ConnectionTrait,
    reader: Reader,
    filter: &AuditFilter,
    after: Option<i64>,
    limit: u64,
) -> ServiceResult<AuditPage> {
    let (from, to) = filters::range(&filter.from, &filter.to)?;
    let mut query = audit_log::Entity::find().order_by_desc(audit_log::Column::Id);
    for (column, value) in [
        (audit_log::Column::Actor, &filter.actor),
        (audit_log::Column::EntityType, &filter.entity_type),
        (audit_log::Column::EntityId, &filter.entity_id),
        (audit_log::Column::Action, &filter.action),
    ] {
        if let Some(v) = filters::text(value) {
            query = query.filter(column.eq(v));
            // A name typed at a failed login is no key others may probe with.
            if reader == Reader::Other
                && matches!(
                    column,
                    audit_log::Column::Actor | audit_log::Column::EntityId
                )
            {
                query = query.filter(audit_log::Column::Action.ne(LOGIN_FAILED));
            }
        }
    }
    if let Some(v) = from {
        query = query.filter(audit_log::Column::At.gte(v));
    }
    if let Some(v) = to {
        query = query.filter(audit_log::Column::At.lt(v));
    }
    if let Some(v) = after {
        query = query.filter(audit_log::Column::Id.lt(v));
    }
    let rows = query.limit(limit + 1).all(db).await?;
    let more = rows.len() as u64 > limit;
    let entries: Vec<AuditRecord> = rows
        .into_iter()
        .take(limit as usize)
        .map(|r| {
            let hide = reader == Reader::Other && r.action == LOGIN_FAILED;
            let shown = |v: serde_json::Value| match reader {
                Reader::Admin => masked(&v, false),
                Reader::Other => masked_for_reader(&v),
            };
            AuditRecord {
                id: r.id,
                at: r.at,
                actor: if hide { HIDDEN.to_owned() } else { r.actor },
                address: r.address,
                action: r.action,
                entity_type: r.entity_type,
                entity_id: if hide { HIDDEN.to_owned() } else { r.entity_id },
                before: r.before.map(shown),
                after: r.after.map(shown),
                cause: if hide { None } else { r.cause },
            }
        })
        .collect();
    let next = if more {
        entries.last().map(|e| e.id)
    } else {
        None
    };
    Ok(AuditPage { entries, next })
}
