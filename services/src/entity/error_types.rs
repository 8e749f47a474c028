//! The error types each launch setting's failures reported and when the latest occurred: the
//! global search's index of error types (`failure_logs` has none led by the error type).
//!
//! Table `error_types`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "error_types")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub launch_setting_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub error_type: String,
    pub last_seen: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
