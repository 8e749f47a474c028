//! Pools: named lists of hosts.
//!
//! Table `pools`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "pools")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub title: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::pool_hosts::Entity")]
    PoolHosts,
    #[sea_orm(has_many = "super::launch_settings::Entity")]
    LaunchSettings,
}

impl Related<super::pool_hosts::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::PoolHosts.def()
    }
}

impl Related<super::launch_settings::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::LaunchSettings.def()
    }
}

impl Related<super::hosts::Entity> for Entity {
    fn to() -> RelationDef {
        super::pool_hosts::Relation::Hosts.def()
    }

    fn via() -> Option<RelationDef> {
        Some(super::pool_hosts::Relation::Pools.def().rev())
    }
}

impl ActiveModelBehavior for ActiveModel {}
