//! Schedule groups: a cron schedule and an ordered list of scheduled launch settings.
//!
//! Table `schedule_groups`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "schedule_groups")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub title: String,
    pub application_id: String,
    pub cron: String,
    pub time_zone: String,
    pub misfire_policy: String,
    pub enabled: bool,
    /// Run the remaining members after a member failed (default: stop the group).
    pub continue_on_failure: bool,
    pub current_status: String,
    pub last_result: Option<String>,
    pub last_result_at: Option<DateTimeUtc>,
    pub last_fire_at: Option<DateTimeUtc>,
    pub next_fire_at: Option<DateTimeUtc>,
    #[sea_orm(column_type = "Text")]
    pub disabled_reason: Option<String>,
    pub disabled_at: Option<DateTimeUtc>,
    /// Who disabled it: a user's name, `breaker` (the breaker policy), `cli`.
    pub disabled_by: Option<String>,
    /// The activation whose failures tripped the breaker that disabled it.
    pub disabled_activation: Option<Uuid>,
    /// Dead man's switch: a run should succeed within this many milliseconds.
    pub expect_success_within_ms: Option<i64>,
    /// When a run of the group last succeeded.
    pub last_success_at: Option<DateTimeUtc>,
    /// Since when the switch watches: the group's creation or its last enabling.
    pub watch_from: Option<DateTimeUtc>,
    /// When the switch last told that no run succeeded (once per silence).
    pub silence_told_at: Option<DateTimeUtc>,
    /// The group's own webhook, replacing its application's for what is told about it.
    pub webhook_url: Option<String>,
    pub webhook_secret: Option<String>,
    /// `json` | `chat` (`am_domain::notify::WebhookFormat`).
    pub webhook_format: String,
    /// Addresses (comma-separated), replacing its application's.
    pub notify_email: Option<String>,
    /// The events its own webhook is told, by name, separated by commas; `None`: every event.
    pub webhook_events: Option<String>,
    /// The events its own addresses are told, likewise.
    pub email_events: Option<String>,
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
    #[sea_orm(has_many = "super::schedule_group_members::Entity")]
    ScheduleGroupMembers,
    #[sea_orm(has_many = "super::activations::Entity")]
    Activations,
}

impl Related<super::applications::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Applications.def()
    }
}

impl Related<super::schedule_group_members::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ScheduleGroupMembers.def()
    }
}

impl Related<super::activations::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Activations.def()
    }
}

impl Related<super::launch_settings::Entity> for Entity {
    fn to() -> RelationDef {
        super::schedule_group_members::Relation::LaunchSettings.def()
    }

    fn via() -> Option<RelationDef> {
        Some(
            super::schedule_group_members::Relation::ScheduleGroups
                .def()
                .rev(),
        )
    }
}

impl ActiveModelBehavior for ActiveModel {}
