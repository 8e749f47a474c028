//! Notifications to operators, one row per event and channel endpoint, and their delivery.
//!
//! Table `notifications` (migration 17; docs/notifications.md).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "notifications")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// `am_domain::notify::Event`'s serde name.
    pub event: String,
    /// What makes repeats of it (`Notice::fold_key`).
    #[sea_orm(column_type = "Text")]
    pub fold_key: String,
    pub application_id: Option<String>,
    pub launch_setting_id: Option<String>,
    pub group_id: Option<String>,
    /// `am_domain::notify::ChannelKind`'s serde name.
    pub channel: String,
    /// Where it is sent: the webhook's URL.
    #[sea_orm(column_type = "Text")]
    pub endpoint: String,
    /// The key that signs the body; never shown.
    #[sea_orm(column_type = "Text")]
    pub secret: Option<String>,
    /// The `Notice`.
    pub payload: Json,
    /// How many times the event happened within the folding window.
    pub count: i32,
    /// `am_domain::notify::Delivery`'s serde name.
    pub status: String,
    pub attempts: i32,
    #[sea_orm(column_type = "Text")]
    pub last_error: Option<String>,
    pub created_at: DateTimeUtc,
    /// The newest repeat folded into it.
    pub last_event_at: DateTimeUtc,
    pub next_attempt_at: DateTimeUtc,
    pub claimed_by: Option<String>,
    pub claimed_until: Option<DateTimeUtc>,
    pub delivered_at: Option<DateTimeUtc>,
    /// When an operator last asked to send it again; its retry budget counts from then.
    pub resent_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
