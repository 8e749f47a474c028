//! Applications: namespaces of agents, each with a default pool.
//!
//! Table `applications`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "applications")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub title: String,
    pub default_pool_id: String,
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
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::agents::Entity")]
    Agents,
    #[sea_orm(has_many = "super::classifiers::Entity")]
    Classifiers,
    #[sea_orm(has_many = "super::schedule_groups::Entity")]
    ScheduleGroups,
}

impl Related<super::agents::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Agents.def()
    }
}

impl Related<super::classifiers::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Classifiers.def()
    }
}

impl Related<super::schedule_groups::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ScheduleGroups.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
