//! Nodes: one application instance on one host, as last heard from.
//!
//! Table `nodes`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "nodes")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub application_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub host: String,
    pub version: String,
    pub capacity: i32,
    pub running: i32,
    pub load: f64,
    pub started_at: DateTimeUtc,
    pub last_heartbeat_at: DateTimeUtc,
    pub status: String,
    /// The newest protocol version the node speaks (its publication says; 1 until then).
    pub protocol_version: i32,
    /// The node's last publication (JSON) while its application is not in the catalog.
    #[sea_orm(column_type = "Text")]
    pub waiting_publication: Option<String>,
    /// What of its last publication the catalog could not take, with why
    /// (`am_domain::publication::Refused` list as JSON); `None` when everything was taken.
    #[sea_orm(column_type = "Text")]
    pub refused_changes: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
