//! Broker commands waiting to be published (written in the same transaction as the change that needs them).
//!
//! Table `outbox`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "outbox")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub exchange: String,
    pub routing_key: String,
    #[sea_orm(column_type = "Blob")]
    pub payload: Vec<u8>,
    pub headers: Option<Json>,
    pub message_id: String,
    pub created_at: DateTimeUtc,
    pub available_at: DateTimeUtc,
    pub attempts: i32,
    #[sea_orm(column_type = "Text")]
    pub last_error: Option<String>,
    pub sent_at: Option<DateTimeUtc>,
    /// The manager replica relaying the row, until `claimed_until`.
    pub claimed_by: Option<String>,
    pub claimed_until: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
