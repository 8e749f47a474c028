//! Notification channels, finer (docs/notifications.md, "Choosing events" and "Where
//! notifications go"): per application and launch setting, the events the webhook and the
//! e-mail addresses are told (event names separated by commas); and a schedule group's own
//! webhook and addresses, which replace its application's for what is told about the group.
//! Nothing existing changes: empty lists mean every event, and groups start without channels.

use sea_orm_migration::{
    prelude::*,
    schema::{string, string_null},
};

use crate::{
    m20261121_000001_catalog::{Applications, LaunchSettings, ScheduleGroups},
    util::{add_columns, drop_columns},
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    WebhookEvents,
    EmailEvents,
    WebhookUrl,
    WebhookSecret,
    WebhookFormat,
    NotifyEmail,
}

fn events() -> Vec<ColumnDef> {
    vec![
        string_null(Added::WebhookEvents),
        string_null(Added::EmailEvents),
    ]
}

fn group_channels() -> Vec<ColumnDef> {
    vec![
        string_null(Added::WebhookUrl),
        string_null(Added::WebhookSecret),
        string(Added::WebhookFormat).default("json").take(),
        string_null(Added::NotifyEmail),
        string_null(Added::WebhookEvents),
        string_null(Added::EmailEvents),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_columns(manager, Applications::Table, events()).await?;
        add_columns(manager, LaunchSettings::Table, events()).await?;
        add_columns(manager, ScheduleGroups::Table, group_channels()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_columns(manager, ScheduleGroups::Table, group_channels()).await?;
        drop_columns(manager, LaunchSettings::Table, events()).await?;
        drop_columns(manager, Applications::Table, events()).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
