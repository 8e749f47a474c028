//! Activations: one run of a launch setting or of a schedule group.
//!
//! Table `activations`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "activations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub launch_setting_id: Option<String>,
    pub group_id: Option<String>,
    /// For a member run of a group activation: the group activation.
    pub parent_id: Option<Uuid>,
    pub position: Option<i32>,
    pub trigger: String,
    /// Unique, e.g. `group:<id>:<fire time>`, so a fire is never doubled across replicas.
    #[sea_orm(unique)]
    pub fire_key: Option<String>,
    pub status: String,
    pub requested_by: Option<String>,
    pub created_at: DateTimeUtc,
    pub started_at: Option<DateTimeUtc>,
    pub finished_at: Option<DateTimeUtc>,
    #[sea_orm(column_type = "Text")]
    pub error: Option<String>,
    pub application_id: Option<String>,
    /// The token of the latest dispatch; reports with an older one are ignored.
    pub fencing_token: i64,
    /// Group activations in `ANY` mode: the node every member runs on.
    pub pinned_host: Option<String>,
    /// A `waiting` activation (no live node) fails when no node appeared by then.
    pub wait_until: Option<DateTimeUtc>,
    /// The W3C `traceparent` of the span that created it, for later dispatches to link to.
    pub trace_parent: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::launch_settings::Entity",
        from = "Column::LaunchSettingId",
        to = "super::launch_settings::Column::Id",
        on_delete = "Cascade"
    )]
    LaunchSettings,
    #[sea_orm(
        belongs_to = "super::schedule_groups::Entity",
        from = "Column::GroupId",
        to = "super::schedule_groups::Column::Id",
        on_delete = "Cascade"
    )]
    ScheduleGroups,
    /// The group activation a member run belongs to.
    #[sea_orm(
        belongs_to = "Entity",
        from = "Column::ParentId",
        to = "Column::Id",
        on_delete = "Cascade"
    )]
    Parent,
    #[sea_orm(has_many = "super::activation_hosts::Entity")]
    ActivationHosts,
    #[sea_orm(has_many = "super::activation_events::Entity")]
    ActivationEvents,
}

impl Related<super::launch_settings::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::LaunchSettings.def()
    }
}

impl Related<super::schedule_groups::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ScheduleGroups.def()
    }
}

impl Related<super::activation_hosts::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ActivationHosts.def()
    }
}

impl Related<super::activation_events::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ActivationEvents.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
