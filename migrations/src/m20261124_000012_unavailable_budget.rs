//! Answers "temporarily unavailable" are not delivery attempts: each launch setting has its own
//! budget for them (`unavailable_for`, 24 hours unless set), after which such a message is
//! dead-lettered.

use sea_orm_migration::{prelude::*, schema::big_integer};

use crate::m20261121_000001_catalog::LaunchSettings;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LaunchSettings::Table)
                    .add_column(
                        big_integer(Added::UnavailableForMs)
                            .default(24 * 3600 * 1000_i64)
                            .take(),
                    )
                    .take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LaunchSettings::Table)
                    .drop_column(Added::UnavailableForMs)
                    .take(),
            )
            .await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

#[derive(DeriveIden)]
enum Added {
    UnavailableForMs,
}
