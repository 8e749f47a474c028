//! What a user sees of their login sessions (docs/operations.md, "Sessions"): the address and
//! browser each was started from, so an unknown one can be recognised and revoked. Existing
//! sessions keep working with both empty.

use sea_orm_migration::{prelude::*, schema::string_null};

use crate::m20261121_000004_accounts::Sessions;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    Address,
    UserAgent,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Added::Address, Added::UserAgent] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Sessions::Table)
                        .add_column(string_null(column))
                        .take(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Added::Address, Added::UserAgent] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Sessions::Table)
                        .drop_column(column)
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
