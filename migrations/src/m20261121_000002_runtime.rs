//! Runtime state: nodes, activations (with their per-host attempts and events), failure logs,
//! dead letters, the outbox of broker commands, webhook notifications and breaker trips.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{
    big_integer, big_pk_auto, blob, double, integer, integer_null, json, json_null, string,
    string_null, text, text_null, uuid, uuid_null,
};

use crate::m20261121_000001_catalog::{LaunchSettings, ScheduleGroups};
use crate::util::{drop, foreign_key, index, primary_key, table, ts, ts_null, unique};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_nodes(manager).await?;
        create_activations(manager).await?;
        create_failure_logs(manager).await?;
        create_dead_letters(manager).await?;
        create_delivery(manager).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(drop(BreakerTrips::Table)).await?;
        manager.drop_table(drop(Notifications::Table)).await?;
        manager.drop_table(drop(Outbox::Table)).await?;
        manager.drop_table(drop(DeadLetters::Table)).await?;
        manager.drop_table(drop(FailureLogs::Table)).await?;
        manager.drop_table(drop(ActivationEvents::Table)).await?;
        manager.drop_table(drop(ActivationHosts::Table)).await?;
        manager.drop_table(drop(Activations::Table)).await?;
        manager.drop_table(drop(Nodes::Table)).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

async fn create_nodes(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            table(Nodes::Table)
                .col(string(Nodes::ApplicationId))
                .col(string(Nodes::Host))
                .col(string(Nodes::Version))
                .col(integer(Nodes::Capacity))
                .col(integer(Nodes::Running))
                .col(double(Nodes::Load))
                .col(ts(Nodes::StartedAt))
                .col(ts(Nodes::LastHeartbeatAt))
                .col(string(Nodes::Status))
                .primary_key(&mut primary_key(
                    "pk_nodes",
                    [Nodes::ApplicationId, Nodes::Host],
                ))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_nodes_last_heartbeat_at",
            Nodes::Table,
            [Nodes::LastHeartbeatAt],
        ))
        .await
}

/// Activations, their per-host attempts and their timeline events.
async fn create_activations(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    use ActivationEvents as Ev;
    use ActivationHosts as Ah;
    use Activations as A;
    manager
        .create_table(
            table(A::Table)
                .col(uuid(A::Id).primary_key())
                .col(string_null(A::LaunchSettingId))
                .col(string_null(A::GroupId))
                .col(uuid_null(A::ParentId))
                .col(integer_null(A::Position))
                .col(string(A::Trigger))
                .col(string_null(A::FireKey))
                .col(string(A::Status))
                .col(string_null(A::RequestedBy))
                .col(ts(A::CreatedAt))
                .col(ts_null(A::StartedAt))
                .col(ts_null(A::FinishedAt))
                .col(text_null(A::Error))
                .index(&mut unique("uq_activations_fire_key", [A::FireKey]))
                .foreign_key(&mut foreign_key(
                    "fk_activations_launch_setting_id",
                    (A::Table, A::LaunchSettingId),
                    (LaunchSettings::Table, LaunchSettings::Id),
                    ForeignKeyAction::Cascade,
                ))
                .foreign_key(&mut foreign_key(
                    "fk_activations_group_id",
                    (A::Table, A::GroupId),
                    (ScheduleGroups::Table, ScheduleGroups::Id),
                    ForeignKeyAction::Cascade,
                ))
                .foreign_key(&mut foreign_key(
                    "fk_activations_parent_id",
                    (A::Table, A::ParentId),
                    (A::Table, A::Id),
                    ForeignKeyAction::Cascade,
                ))
                .take(),
        )
        .await?;
    for (name, cols) in [
        (
            "idx_activations_launch_setting_created",
            vec![A::LaunchSettingId, A::CreatedAt],
        ),
        ("idx_activations_status", vec![A::Status]),
        (
            "idx_activations_group_created",
            vec![A::GroupId, A::CreatedAt],
        ),
        ("idx_activations_parent_id", vec![A::ParentId]),
    ] {
        manager.create_index(index(name, A::Table, cols)).await?;
    }

    manager
        .create_table(
            table(Ah::Table)
                .col(big_pk_auto(Ah::Id))
                .col(uuid(Ah::ActivationId))
                .col(string(Ah::Host))
                .col(string(Ah::ApplicationId))
                .col(big_integer(Ah::FencingToken))
                .col(string(Ah::Status))
                .col(integer(Ah::Attempt))
                .col(ts(Ah::DispatchedAt))
                .col(ts_null(Ah::AcceptedAt))
                .col(ts_null(Ah::StartedAt))
                .col(ts_null(Ah::LastHeartbeatAt))
                .col(ts_null(Ah::FinishedAt))
                .col(ts_null(Ah::RecoveryDeadline))
                .col(big_integer(Ah::Processed).default(0i64))
                .col(big_integer(Ah::Failed).default(0i64))
                .col(big_integer(Ah::Retried).default(0i64))
                .col(big_integer(Ah::DeadLettered).default(0i64))
                .col(text_null(Ah::Error))
                .index(&mut unique(
                    "uq_activation_hosts_attempt",
                    [Ah::ActivationId, Ah::Host, Ah::Attempt],
                ))
                .foreign_key(&mut foreign_key(
                    "fk_activation_hosts_activation_id",
                    (Ah::Table, Ah::ActivationId),
                    (A::Table, A::Id),
                    ForeignKeyAction::Cascade,
                ))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_activation_hosts_status_deadline",
            Ah::Table,
            [Ah::Status, Ah::RecoveryDeadline],
        ))
        .await?;
    manager
        .create_index(index("idx_activation_hosts_host", Ah::Table, [Ah::Host]))
        .await?;

    manager
        .create_table(
            table(Ev::Table)
                .col(big_pk_auto(Ev::Id))
                .col(uuid(Ev::ActivationId))
                .col(string_null(Ev::Host))
                .col(ts(Ev::At))
                .col(string(Ev::Kind))
                .col(text_null(Ev::Detail))
                .foreign_key(&mut foreign_key(
                    "fk_activation_events_activation_id",
                    (Ev::Table, Ev::ActivationId),
                    (A::Table, A::Id),
                    ForeignKeyAction::Cascade,
                ))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_activation_events_activation_at",
            Ev::Table,
            [Ev::ActivationId, Ev::At],
        ))
        .await
}

/// Failure logs: no foreign keys, so reports insert fast and retention deletes cheaply.
async fn create_failure_logs(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    use FailureLogs as F;
    manager
        .create_table(
            table(F::Table)
                .col(big_pk_auto(F::Id))
                .col(string(F::LaunchSettingId))
                .col(uuid(F::ActivationId))
                .col(string(F::Host))
                .col(string(F::ApplicationId))
                .col(string(F::AgentId))
                .col(string(F::ErrorType))
                .col(text(F::Message))
                .col(text_null(F::Details))
                .col(string_null(F::DataMessageId))
                .col(integer_null(F::Attempt))
                .col(ts(F::OccurredAt))
                .take(),
        )
        .await?;
    for (name, cols) in [
        (
            "idx_failure_logs_drill_down",
            vec![F::LaunchSettingId, F::ActivationId, F::Host, F::OccurredAt],
        ),
        (
            "idx_failure_logs_ls_error_type",
            vec![F::LaunchSettingId, F::ErrorType],
        ),
        (
            "idx_failure_logs_activation_host_error_type",
            vec![F::ActivationId, F::Host, F::ErrorType],
        ),
        (
            "idx_failure_logs_ls_occurred_at",
            vec![F::LaunchSettingId, F::OccurredAt],
        ),
        ("idx_failure_logs_occurred_at", vec![F::OccurredAt]),
    ] {
        manager.create_index(index(name, F::Table, cols)).await?;
    }
    Ok(())
}

async fn create_dead_letters(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    use DeadLetters as D;
    manager
        .create_table(
            table(D::Table)
                .col(big_pk_auto(D::Id))
                .col(string(D::DedupeKey))
                .col(string_null(D::LaunchSettingId))
                .col(string_null(D::DataQueueId))
                .col(string_null(D::MessageId))
                .col(string_null(D::RoutingKey))
                .col(json(D::Headers))
                .col(blob(D::Body))
                .col(string_null(D::ContentType))
                .col(string_null(D::ErrorType))
                .col(text_null(D::ErrorMessage))
                .col(integer(D::Attempts))
                .col(ts_null(D::FirstFailureAt))
                .col(ts_null(D::LastFailureAt))
                .col(string_null(D::Host))
                .col(ts(D::ReceivedAt))
                .col(string(D::Status))
                .col(ts_null(D::ParkUntil))
                .col(integer(D::ReplayCount).default(0))
                .col(ts_null(D::ReplayedAt))
                .col(string_null(D::ReplayedBy))
                .index(&mut unique("uq_dead_letters_dedupe_key", [D::DedupeKey]))
                .take(),
        )
        .await?;
    for (name, cols) in [
        (
            "idx_dead_letters_ls_received_at",
            vec![D::LaunchSettingId, D::ReceivedAt],
        ),
        (
            "idx_dead_letters_status_park_until",
            vec![D::Status, D::ParkUntil],
        ),
        ("idx_dead_letters_error_type", vec![D::ErrorType]),
    ] {
        manager.create_index(index(name, D::Table, cols)).await?;
    }
    Ok(())
}

/// The outbox of broker commands, webhook notifications and breaker trips.
async fn create_delivery(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            table(Outbox::Table)
                .col(big_pk_auto(Outbox::Id))
                .col(string(Outbox::Exchange))
                .col(string(Outbox::RoutingKey))
                .col(blob(Outbox::Payload))
                .col(json_null(Outbox::Headers))
                .col(string(Outbox::MessageId))
                .col(ts(Outbox::CreatedAt))
                .col(ts(Outbox::AvailableAt))
                .col(integer(Outbox::Attempts).default(0))
                .col(text_null(Outbox::LastError))
                .col(ts_null(Outbox::SentAt))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_outbox_sent_available",
            Outbox::Table,
            [Outbox::SentAt, Outbox::AvailableAt],
        ))
        .await?;

    manager
        .create_table(
            table(Notifications::Table)
                .col(big_pk_auto(Notifications::Id))
                .col(string_null(Notifications::ApplicationId))
                .col(string_null(Notifications::LaunchSettingId))
                .col(string(Notifications::Kind))
                .col(text(Notifications::Url))
                .col(json(Notifications::Payload))
                .col(string(Notifications::Status))
                .col(integer(Notifications::Attempts).default(0))
                .col(text_null(Notifications::LastError))
                .col(ts(Notifications::CreatedAt))
                .col(ts_null(Notifications::NextAttemptAt))
                .col(ts_null(Notifications::DeliveredAt))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_notifications_status_next_attempt",
            Notifications::Table,
            [Notifications::Status, Notifications::NextAttemptAt],
        ))
        .await?;

    manager
        .create_table(
            table(BreakerTrips::Table)
                .col(big_pk_auto(BreakerTrips::Id))
                .col(string(BreakerTrips::LaunchSettingId))
                .col(uuid_null(BreakerTrips::ActivationId))
                .col(string(BreakerTrips::Host))
                .col(integer(BreakerTrips::ConsecutiveFailures))
                .col(json(BreakerTrips::LastErrors))
                .col(ts(BreakerTrips::TrippedAt))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_breaker_trips_ls_tripped_at",
            BreakerTrips::Table,
            [BreakerTrips::LaunchSettingId, BreakerTrips::TrippedAt],
        ))
        .await
}

#[derive(DeriveIden)]
pub enum Nodes {
    Table,
    ApplicationId,
    Host,
    Version,
    Capacity,
    Running,
    Load,
    StartedAt,
    LastHeartbeatAt,
    Status,
}

#[derive(DeriveIden)]
pub enum Activations {
    Table,
    Id,
    LaunchSettingId,
    GroupId,
    ParentId,
    Position,
    Trigger,
    FireKey,
    Status,
    RequestedBy,
    CreatedAt,
    StartedAt,
    FinishedAt,
    Error,
}

#[derive(DeriveIden)]
pub enum ActivationHosts {
    Table,
    Id,
    ActivationId,
    Host,
    ApplicationId,
    FencingToken,
    Status,
    Attempt,
    DispatchedAt,
    AcceptedAt,
    StartedAt,
    LastHeartbeatAt,
    FinishedAt,
    RecoveryDeadline,
    Processed,
    Failed,
    Retried,
    DeadLettered,
    Error,
}

#[derive(DeriveIden)]
pub enum ActivationEvents {
    Table,
    Id,
    ActivationId,
    Host,
    At,
    Kind,
    Detail,
}

#[derive(DeriveIden)]
pub enum FailureLogs {
    Table,
    Id,
    LaunchSettingId,
    ActivationId,
    Host,
    ApplicationId,
    AgentId,
    ErrorType,
    Message,
    Details,
    DataMessageId,
    Attempt,
    OccurredAt,
}

#[derive(DeriveIden)]
pub enum DeadLetters {
    Table,
    Id,
    DedupeKey,
    LaunchSettingId,
    DataQueueId,
    MessageId,
    RoutingKey,
    Headers,
    Body,
    ContentType,
    ErrorType,
    ErrorMessage,
    Attempts,
    FirstFailureAt,
    LastFailureAt,
    Host,
    ReceivedAt,
    Status,
    ParkUntil,
    ReplayCount,
    ReplayedAt,
    ReplayedBy,
}

#[derive(DeriveIden)]
pub enum Outbox {
    Table,
    Id,
    Exchange,
    RoutingKey,
    Payload,
    Headers,
    MessageId,
    CreatedAt,
    AvailableAt,
    Attempts,
    LastError,
    SentAt,
}

#[derive(DeriveIden)]
pub enum Notifications {
    Table,
    Id,
    ApplicationId,
    LaunchSettingId,
    Kind,
    Url,
    Payload,
    Status,
    Attempts,
    LastError,
    CreatedAt,
    NextAttemptAt,
    DeliveredAt,
}

#[derive(DeriveIden)]
pub enum BreakerTrips {
    Table,
    Id,
    LaunchSettingId,
    ActivationId,
    Host,
    ConsecutiveFailures,
    LastErrors,
    TrippedAt,
}
