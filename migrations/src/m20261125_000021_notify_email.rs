//! Notifications by e-mail (docs/notifications.md): the addresses an application or launch
//! setting sends every notification to. Nothing existing changes: the column starts empty.

use sea_orm_migration::{prelude::*, schema::string_null};

use crate::m20261121_000001_catalog::{Applications, LaunchSettings};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    NotifyEmail,
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
                        .add_column(string_null(Added::NotifyEmail))
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
                        .drop_column(Added::NotifyEmail)
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
