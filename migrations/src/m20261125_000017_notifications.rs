//! Notifications as an outbox of their own (docs/notifications.md): each row is one event for
//! one channel endpoint, written in the transaction of the event, folded with its repeats
//! (`fold_key`, `count`), claimed by one replica at a time (`claimed_by`, `claimed_until`) and
//! retried until delivered or given up. The first table of that name was never written to, so
//! it is replaced. Applications and launch settings gain the secret that signs their webhook.

use sea_orm_migration::{
    prelude::*,
    schema::{big_pk_auto, integer, json, string, string_null, text, text_null},
};

use crate::{
    m20261121_000001_catalog::{Applications, LaunchSettings},
    m20261121_000002_runtime::Notifications as OldNotifications,
    util::{drop, index, table, ts, ts_null},
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
pub enum Notifications {
    Table,
    Id,
    Event,
    FoldKey,
    ApplicationId,
    LaunchSettingId,
    GroupId,
    Channel,
    Endpoint,
    Secret,
    Payload,
    Count,
    Status,
    Attempts,
    LastError,
    CreatedAt,
    LastEventAt,
    NextAttemptAt,
    ClaimedBy,
    ClaimedUntil,
    DeliveredAt,
    ResentAt,
}

#[derive(DeriveIden)]
enum Added {
    WebhookSecret,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(drop(OldNotifications::Table)).await?;
        manager
            .create_table(
                table(Notifications::Table)
                    .col(big_pk_auto(Notifications::Id))
                    .col(string(Notifications::Event))
                    .col(text(Notifications::FoldKey))
                    .col(string_null(Notifications::ApplicationId))
                    .col(string_null(Notifications::LaunchSettingId))
                    .col(string_null(Notifications::GroupId))
                    .col(string(Notifications::Channel))
                    .col(text(Notifications::Endpoint))
                    .col(text_null(Notifications::Secret))
                    .col(json(Notifications::Payload))
                    .col(integer(Notifications::Count).default(1))
                    .col(string(Notifications::Status))
                    .col(integer(Notifications::Attempts).default(0))
                    .col(text_null(Notifications::LastError))
                    .col(ts(Notifications::CreatedAt))
                    .col(ts(Notifications::LastEventAt))
                    .col(ts(Notifications::NextAttemptAt))
                    .col(string_null(Notifications::ClaimedBy))
                    .col(ts_null(Notifications::ClaimedUntil))
                    .col(ts_null(Notifications::DeliveredAt))
                    .col(ts_null(Notifications::ResentAt))
                    .take(),
            )
            .await?;
        for (name, cols) in [
            (
                "idx_notifications_status_next",
                vec![Notifications::Status, Notifications::NextAttemptAt],
            ),
            (
                "idx_notifications_fold",
                vec![
                    Notifications::FoldKey,
                    Notifications::Endpoint,
                    Notifications::CreatedAt,
                ],
            ),
            (
                "idx_notifications_created",
                vec![Notifications::CreatedAt, Notifications::Id],
            ),
            (
                "idx_notifications_launch_setting",
                vec![Notifications::LaunchSettingId, Notifications::CreatedAt],
            ),
        ] {
            manager
                .create_index(index(name, Notifications::Table, cols))
                .await?;
        }
        for t in [
            Applications::Table.into_table_ref(),
            LaunchSettings::Table.into_table_ref(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(t)
                        .add_column(text_null(Added::WebhookSecret))
                        .take(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for t in [
            Applications::Table.into_table_ref(),
            LaunchSettings::Table.into_table_ref(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(t)
                        .drop_column(Added::WebhookSecret)
                        .take(),
                )
                .await?;
        }
        manager.drop_table(drop(Notifications::Table)).await?;
        // The first table, as migration 2 made it.
        manager
            .create_table(
                table(OldNotifications::Table)
                    .col(big_pk_auto(OldNotifications::Id))
                    .col(string_null(OldNotifications::ApplicationId))
                    .col(string_null(OldNotifications::LaunchSettingId))
                    .col(string(OldNotifications::Kind))
                    .col(text(OldNotifications::Url))
                    .col(json(OldNotifications::Payload))
                    .col(string(OldNotifications::Status))
                    .col(integer(OldNotifications::Attempts).default(0))
                    .col(text_null(OldNotifications::LastError))
                    .col(ts(OldNotifications::CreatedAt))
                    .col(ts_null(OldNotifications::NextAttemptAt))
                    .col(ts_null(OldNotifications::DeliveredAt))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_notifications_status_next_attempt",
                OldNotifications::Table,
                [OldNotifications::Status, OldNotifications::NextAttemptAt],
            ))
            .await?;
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
