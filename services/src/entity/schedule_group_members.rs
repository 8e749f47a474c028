//! Members of a schedule group, in `position` order (unique per group).
//!
//! Table `schedule_group_members`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "schedule_group_members")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub group_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub launch_setting_id: String,
    pub position: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::schedule_groups::Entity",
        from = "Column::GroupId",
        to = "super::schedule_groups::Column::Id",
        on_delete = "Cascade"
    )]
    ScheduleGroups,
    #[sea_orm(
        belongs_to = "super::launch_settings::Entity",
        from = "Column::LaunchSettingId",
        to = "super::launch_settings::Column::Id"
    )]
    LaunchSettings,
}

impl Related<super::schedule_groups::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ScheduleGroups.def()
    }
}

impl Related<super::launch_settings::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::LaunchSettings.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
