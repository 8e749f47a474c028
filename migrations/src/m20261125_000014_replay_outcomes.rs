//! What became of a replayed dead letter: the operation that replayed it, and the outcome its
//! nodes reported (processed, failed again and retrying, parked, dead-lettered again — with the
//! error and the new dead letter), so no page says "replayed" of a message nobody processed.

use sea_orm_migration::{
    prelude::*,
    schema::{big_integer_null, string_null, text_null, uuid_null},
};

use crate::{
    m20261121_000002_runtime::DeadLetters,
    util::{index, ts_null},
};

#[derive(DeriveMigrationName)]
pub struct Migration;

const BY_OPERATION: &str = "idx_dead_letters_replay_operation";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite alters one column per statement.
        for column in [
            uuid_null(Added::ReplayOperation),
            string_null(Added::ReplayResult),
            ts_null(Added::ReplayResultAt),
            text_null(Added::ReplayError),
            big_integer_null(Added::ReplayDeadLetter),
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
            .create_index(index(
                BY_OPERATION,
                DeadLetters::Table,
                [Added::ReplayOperation],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(BY_OPERATION)
                    .table(DeadLetters::Table)
                    .to_owned(),
            )
            .await?;
        for column in [
            Added::ReplayOperation,
            Added::ReplayResult,
            Added::ReplayResultAt,
            Added::ReplayError,
            Added::ReplayDeadLetter,
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
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

#[derive(DeriveIden)]
#[expect(
    clippy::enum_variant_names,
    reason = "the identifiers are the column names, all `replay_*`"
)]
enum Added {
    ReplayOperation,
    ReplayResult,
    ReplayResultAt,
    ReplayError,
    /// Dead-lettered again: the new dead letter.
    ReplayDeadLetter,
}
