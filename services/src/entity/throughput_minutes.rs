//! Per scope (a launch setting, or `*` for the broker's total) and minute, the messages
//! processed and the backlog sampled (`am_domain::throughput`).
//!
//! Table `throughput_minutes`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "throughput_minutes")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub scope: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub minute: DateTimeUtc,
    pub processed: i64,
    pub backlog: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
