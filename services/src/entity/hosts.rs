//! Host names known to pools.
//!
//! Table `hosts`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "hosts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub name: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::pool_hosts::Entity")]
    PoolHosts,
}

impl Related<super::pool_hosts::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::PoolHosts.def()
    }
}

impl Related<super::pools::Entity> for Entity {
    fn to() -> RelationDef {
        super::pool_hosts::Relation::Pools.def()
    }

    fn via() -> Option<RelationDef> {
        Some(super::pool_hosts::Relation::Hosts.def().rev())
    }
}

impl ActiveModelBehavior for ActiveModel {}
