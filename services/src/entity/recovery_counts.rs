//! Per launch setting, how often the runtime recovered it, by kind (docs/runtime.md, Recovery
//! counters).
//!
//! Table `recovery_counts`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "recovery_counts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub launch_setting_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub kind: String,
    pub count: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
