//! Launch settings that want every failed activation told (`activation_failed`,
//! docs/notifications.md). Nothing existing changes: every launch setting starts without.

use sea_orm_migration::{prelude::*, schema::boolean};

use crate::m20261121_000001_catalog::LaunchSettings;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    NotifyOnFailure,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LaunchSettings::Table)
                    .add_column(boolean(Added::NotifyOnFailure).default(false))
                    .take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LaunchSettings::Table)
                    .drop_column(Added::NotifyOnFailure)
                    .take(),
            )
            .await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
