//! Hosts a `MANY` launch setting's breaker took out of its rotation (docs/runtime.md,
//! Breaker policy).
//!
//! Table `host_quarantines`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "host_quarantines")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub launch_setting_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub host: String,
    pub since: DateTimeUtc,
    pub cause: String,
    pub activation_id: Option<Uuid>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
