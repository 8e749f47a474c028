//! Membership of hosts in pools.
//!
//! Table `pool_hosts`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "pool_hosts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub pool_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub host_name: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::pools::Entity",
        from = "Column::PoolId",
        to = "super::pools::Column::Id",
        on_delete = "Cascade"
    )]
    Pools,
    #[sea_orm(
        belongs_to = "super::hosts::Entity",
        from = "Column::HostName",
        to = "super::hosts::Column::Name"
    )]
    Hosts,
}

impl Related<super::pools::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Pools.def()
    }
}

impl Related<super::hosts::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Hosts.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
