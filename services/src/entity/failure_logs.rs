//! Failure reports of nodes (no foreign keys: fast inserts, cheap retention deletes).
//!
//! Table `failure_logs`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "failure_logs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub launch_setting_id: String,
    pub activation_id: Uuid,
    pub host: String,
    pub application_id: String,
    pub agent_id: String,
    pub error_type: String,
    #[sea_orm(column_type = "Text")]
    pub message: String,
    #[sea_orm(column_type = "Text")]
    pub details: Option<String>,
    pub data_message_id: Option<String>,
    pub attempt: Option<i32>,
    pub occurred_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
