//! API tokens with a role of their own (at most their user's; none: the user's role) and the
//! address they were last used from (docs/operations.md, Users and tokens).

use sea_orm_migration::{prelude::*, schema::string_null};

use crate::m20261121_000004_accounts::ApiTokens;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    Role,
    LastUsedFrom,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one column at a time.
        for column in [Added::Role, Added::LastUsedFrom] {
            manager
                .alter_table(
                    Table::alter()
                        .table(ApiTokens::Table)
                        .add_column(string_null(column))
                        .take(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Added::Role, Added::LastUsedFrom] {
            manager
                .alter_table(
                    Table::alter()
                        .table(ApiTokens::Table)
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
