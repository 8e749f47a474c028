//! The agents each node offers (from its last publication), to show agents no live node offers.
//!
//! Table `node_agents`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "node_agents")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub application_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub host: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub agent_id: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
