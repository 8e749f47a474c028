//! Launch settings: one way to run an agent, with its parameters, policies and runtime status.
//!
//! Table `launch_settings`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "launch_settings")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub title: String,
    pub application_id: String,
    pub agent_id: String,
    pub kind: String,
    pub enabled: bool,
    pub pool_id: Option<String>,
    pub parameters: Json,
    pub stream_mode: Option<String>,
    pub message_filter: Option<Json>,
    pub failure_threshold: i32,
    pub retry_initial_delay_ms: i64,
    pub retry_multiplier: f64,
    pub retry_max_delay_ms: i64,
    pub max_deliveries: i32,
    pub unavailable_for_ms: i64,
    pub dead_letter_policy: String,
    pub park_cooldown_ms: i64,
    pub dead_letter_notify_threshold: Option<i32>,
    pub dead_letter_forward_to: Option<String>,
    pub start_timeout_ms: i64,
    pub work_timeout_ms: i64,
    pub max_run_time_ms: Option<i64>,
    pub on_lost: String,
    pub idle_timeout_ms: Option<i64>,
    #[sea_orm(column_type = "Text")]
    pub webhook_url: Option<String>,
    /// Signs the webhook's body; never shown.
    #[sea_orm(column_type = "Text")]
    pub webhook_secret: Option<String>,
    /// `json` | `chat` (`am_domain::notify::WebhookFormat`).
    pub webhook_format: String,
    /// Addresses (comma-separated) that get notifications by e-mail.
    pub notify_email: Option<String>,
    /// The events the webhook is told, by name, separated by commas; `None`: every event.
    pub webhook_events: Option<String>,
    /// The events the e-mail addresses are told, likewise.
    pub email_events: Option<String>,
    /// Every failed activation is told (`activation_failed`).
    pub notify_on_failure: bool,
    /// `running` | `waiting` | `disabled`.
    pub current_status: String,
    /// `succeeded` | `failed` | `interrupted`; never `running`.
    pub last_result: Option<String>,
    pub last_result_at: Option<DateTimeUtc>,
    pub last_activation_id: Option<Uuid>,
    #[sea_orm(column_type = "Text")]
    pub disabled_reason: Option<String>,
    pub disabled_at: Option<DateTimeUtc>,
    /// Who disabled it: a user's name, `breaker` (the breaker policy), `cli`.
    pub disabled_by: Option<String>,
    /// The activation whose failures tripped the breaker that disabled it.
    pub disabled_activation: Option<Uuid>,
    /// When an activation of it last succeeded.
    pub last_success_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::agents::Entity",
        from = "(Column::ApplicationId, Column::AgentId)",
        to = "(super::agents::Column::ApplicationId, super::agents::Column::Id)"
    )]
    Agents,
    #[sea_orm(
        belongs_to = "super::pools::Entity",
        from = "Column::PoolId",
        to = "super::pools::Column::Id"
    )]
    Pools,
    #[sea_orm(has_many = "super::schedule_group_members::Entity")]
    ScheduleGroupMembers,
    #[sea_orm(has_many = "super::activations::Entity")]
    Activations,
}

impl Related<super::agents::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Agents.def()
    }
}

impl Related<super::pools::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Pools.def()
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

impl Related<super::schedule_groups::Entity> for Entity {
    fn to() -> RelationDef {
        super::schedule_group_members::Relation::ScheduleGroups.def()
    }

    fn via() -> Option<RelationDef> {
        Some(
            super::schedule_group_members::Relation::LaunchSettings
                .def()
                .rev(),
        )
    }
}

impl ActiveModelBehavior for ActiveModel {}
