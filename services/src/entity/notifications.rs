//! Webhook notifications to operators and their delivery status.
//!
//! Table `notifications`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "notifications")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub application_id: Option<String>,
    pub launch_setting_id: Option<String>,
    pub kind: String,
    #[sea_orm(column_type = "Text")]
    pub url: String,
    pub payload: Json,
    pub status: String,
    pub attempts: i32,
    #[sea_orm(column_type = "Text")]
    pub last_error: Option<String>,
    pub created_at: DateTimeUtc,
    pub next_attempt_at: Option<DateTimeUtc>,
    pub delivered_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
