//! Dead-lettered data messages, with their headers, body and replay state.
//!
//! Table `dead_letters`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "dead_letters")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Unique: the same dead-lettered delivery is stored once.
    #[sea_orm(unique)]
    pub dedupe_key: String,
    pub launch_setting_id: Option<String>,
    pub data_queue_id: Option<String>,
    pub message_id: Option<String>,
    pub routing_key: Option<String>,
    pub headers: Json,
    #[sea_orm(column_type = "Blob")]
    pub body: Vec<u8>,
    pub content_type: Option<String>,
    pub error_type: Option<String>,
    #[sea_orm(column_type = "Text")]
    pub error_message: Option<String>,
    pub attempts: i32,
    pub first_failure_at: Option<DateTimeUtc>,
    pub last_failure_at: Option<DateTimeUtc>,
    pub host: Option<String>,
    pub received_at: DateTimeUtc,
    pub status: String,
    pub park_until: Option<DateTimeUtc>,
    pub replay_count: i32,
    pub replayed_at: Option<DateTimeUtc>,
    pub replayed_by: Option<String>,
    /// AMQP properties besides message id and content type (correlation id, timestamp, type,
    /// ...), so that a replay publishes the message as it was.
    pub properties: Option<Json>,
    /// Dead-letter policy `forward`: the exchange that gets a copy.
    pub forward_to: Option<String>,
    /// When the copy is tried next; `None` once it is confirmed (or none is owed).
    pub forward_next_at: Option<DateTimeUtc>,
    pub forwarded_at: Option<DateTimeUtc>,
    pub forward_attempts: i32,
    /// Why the last try failed.
    #[sea_orm(column_type = "Text")]
    pub forward_error: Option<String>,
    /// The operation that replayed it last.
    pub replay_operation: Option<Uuid>,
    /// What became of its last replay (`am_domain::recovery::ReplayResult`'s serde name).
    pub replay_result: Option<String>,
    pub replay_result_at: Option<DateTimeUtc>,
    /// The replay failed: `error type: message`.
    #[sea_orm(column_type = "Text")]
    pub replay_error: Option<String>,
    /// The replay was dead-lettered again: the new dead letter.
    pub replay_dead_letter: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
