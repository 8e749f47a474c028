//! Dead-letter policy `forward`: a launch setting names an exchange that gets a copy of each of
//! its dead letters; each dead letter records where it goes and whether it got there (the
//! manager forwards from its database, retrying with growing delays, so a missing exchange
//! delays a copy but never loses it).

use sea_orm_migration::{
    prelude::*,
    schema::{integer, string_null, text_null},
};

use crate::{
    m20261121_000001_catalog::LaunchSettings,
    m20261121_000002_runtime::DeadLetters,
    util::{index, ts_null},
};

#[derive(DeriveMigrationName)]
pub struct Migration;

const DUE: &str = "idx_dead_letters_forward_next_at";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LaunchSettings::Table)
                    .add_column(string_null(Added::DeadLetterForwardTo))
                    .take(),
            )
            .await?;
        // SQLite alters one column per statement.
        for column in [
            string_null(Added::ForwardTo),
            // Set while a copy is owed: cleared once the broker confirmed it.
            ts_null(Added::ForwardNextAt),
            ts_null(Added::ForwardedAt),
            integer(Added::ForwardAttempts).default(0).take(),
            text_null(Added::ForwardError),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(DeadLetters::Table)
                        .add_column(column)
                        .take(),
                )
                .await?;
        }
        manager
            .create_index(index(DUE, DeadLetters::Table, [Added::ForwardNextAt]))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(DUE).table(DeadLetters::Table).to_owned())
            .await?;
        for column in [
            Added::ForwardTo,
            Added::ForwardNextAt,
            Added::ForwardedAt,
            Added::ForwardAttempts,
            Added::ForwardError,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(DeadLetters::Table)
                        .drop_column(column)
                        .take(),
                )
                .await?;
        }
        manager
            .alter_table(
                Table::alter()
                    .table(LaunchSettings::Table)
                    .drop_column(Added::DeadLetterForwardTo)
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
    DeadLetterForwardTo,
    ForwardTo,
    ForwardNextAt,
    ForwardedAt,
    ForwardAttempts,
    ForwardError,
}
