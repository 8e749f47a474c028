//! What a webhook expects (docs/notifications.md): `json`, the notice for programs, or `chat`,
//! a Slack- or Mattermost-compatible `{"text": …}` for people. Existing webhooks stay `json`.

use sea_orm_migration::{prelude::*, schema::string};

use crate::m20261121_000001_catalog::{Applications, LaunchSettings};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    WebhookFormat,
}

fn tables() -> [TableRef; 2] {
    [
        Applications::Table.into_table_ref(),
        LaunchSettings::Table.into_table_ref(),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for t in tables() {
            manager
                .alter_table(
                    Table::alter()
                        .table(t)
                        .add_column(string(Added::WebhookFormat).default("json"))
                        .take(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for t in tables() {
            manager
                .alter_table(
                    Table::alter()
                        .table(t)
                        .drop_column(Added::WebhookFormat)
                        .take(),
                )
                .await?;
        }
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
