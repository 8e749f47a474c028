//! Agents of an application, declared by operators or published by nodes.
//!
//! Table `agents`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "agents")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub application_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub title: String,
    pub input_kind: String,
    pub data_queue_id: Option<String>,
    pub concurrency: String,
    pub overlap_policy: String,
    pub parameter_schema: Json,
    pub suggested_defaults: Option<Json>,
    /// `operator` (declared in the catalog) or `node` (first published by a node).
    pub declared_by: String,
    pub published_at: Option<DateTimeUtc>,
    pub published_by_host: Option<String>,
    pub published_version: Option<String>,
    /// The last parameter schema a node published, to show disagreements with saved parameters.
    pub published_schema: Option<Json>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::applications::Entity",
        from = "Column::ApplicationId",
        to = "super::applications::Column::Id"
    )]
    Applications,
    #[sea_orm(
        belongs_to = "super::data_queues::Entity",
        from = "Column::DataQueueId",
        to = "super::data_queues::Column::Id"
    )]
    DataQueues,
    #[sea_orm(has_many = "super::launch_settings::Entity")]
    LaunchSettings,
}

impl Related<super::applications::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Applications.def()
    }
}

impl Related<super::data_queues::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::DataQueues.def()
    }
}

impl Related<super::launch_settings::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::LaunchSettings.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
