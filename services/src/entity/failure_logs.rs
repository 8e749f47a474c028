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
    /// The id the node gave the report (protocol version 2): unique, so a report delivered
    /// twice is stored once. None for version-1 nodes.
    pub report_id: Option<String>,
    /// The agent said the condition is temporary.
    pub temporary: bool,
    /// What became of the data message: `retry`, `dead-letter`, `park`.
    pub disposition: Option<String>,
    /// `failed`, `retried` or `unavailable` (am_domain::dashboard::failure_kind), from
    /// `temporary` and `disposition` when stored: what every count of failures filters on.
    pub kind: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
