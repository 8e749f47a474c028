//! One dispatch of an activation to one host (one row per attempt), with its fencing token and counters.
//!
//! Table `activation_hosts`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "activation_hosts")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub activation_id: Uuid,
    pub host: String,
    pub application_id: String,
    /// Answers carrying an older token than the current one are ignored.
    pub fencing_token: i64,
    pub status: String,
    pub attempt: i32,
    pub dispatched_at: DateTimeUtc,
    pub accepted_at: Option<DateTimeUtc>,
    pub started_at: Option<DateTimeUtc>,
    pub last_heartbeat_at: Option<DateTimeUtc>,
    pub finished_at: Option<DateTimeUtc>,
    /// When the watchdog acts if nothing was heard (start or work timeout).
    pub recovery_deadline: Option<DateTimeUtc>,
    pub processed: i64,
    pub failed: i64,
    pub retried: i64,
    pub dead_lettered: i64,
    #[sea_orm(column_type = "Text")]
    pub error: Option<String>,
    /// When the manager asked the node to stop (disabled, breaker elsewhere, interrupt).
    pub stop_requested_at: Option<DateTimeUtc>,
    /// The queue this dispatch of a messages activation was told to consume.
    pub consumes: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::activations::Entity",
        from = "Column::ActivationId",
        to = "super::activations::Column::Id",
        on_delete = "Cascade"
    )]
    Activations,
}

impl Related<super::activations::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Activations.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
