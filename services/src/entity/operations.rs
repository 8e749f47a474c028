//! Bulk operations run as background jobs, with progress and a resume cursor.
//!
//! Table `operations`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "operations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub kind: String,
    pub status: String,
    pub requested_by: String,
    pub params: Json,
    pub total: i64,
    pub done: i64,
    pub failed: i64,
    pub errors: Json,
    /// Where a resumed operation continues.
    #[sea_orm(column_type = "Text")]
    pub cursor: Option<String>,
    pub cancel_requested: bool,
    pub created_at: DateTimeUtc,
    pub started_at: Option<DateTimeUtc>,
    pub finished_at: Option<DateTimeUtc>,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
