//! The audit log: who changed what, when, before and after.
//!
//! Table `audit_log`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "audit_log")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub at: DateTimeUtc,
    pub actor: String,
    /// The client address of the request that made the change (none from the command line or
    /// the manager itself).
    pub address: Option<String>,
    pub action: String,
    pub entity_type: String,
    pub entity_id: String,
    pub before: Option<Json>,
    pub after: Option<Json>,
    #[sea_orm(column_type = "Text")]
    pub cause: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
