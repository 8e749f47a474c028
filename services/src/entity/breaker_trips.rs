//! Breaker trips reported by nodes.
//!
//! Table `breaker_trips`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "breaker_trips")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub launch_setting_id: String,
    pub activation_id: Option<Uuid>,
    pub host: String,
    pub consecutive_failures: i32,
    pub last_errors: Json,
    pub tripped_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
