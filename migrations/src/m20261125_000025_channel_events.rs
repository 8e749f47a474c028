//! The events each channel is told (docs/notifications.md, "Choosing events"): per application
//! and launch setting, one list for the webhook and one for the e-mail addresses, stored as
//! event names separated by commas. Nothing existing changes: empty means every event, as
//! before.

use sea_orm_migration::{prelude::*, schema::string_null};

use crate::{
    m20261121_000001_catalog::{Applications, LaunchSettings},
    util::{add_columns, drop_columns},
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    WebhookEvents,
    EmailEvents,
}

fn added() -> Vec<ColumnDef> {
    vec![
        string_null(Added::WebhookEvents),
        string_null(Added::EmailEvents),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_columns(manager, Applications::Table, added()).await?;
        add_columns(manager, LaunchSettings::Table, added()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_columns(manager, LaunchSettings::Table, added()).await?;
        drop_columns(manager, Applications::Table, added()).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
