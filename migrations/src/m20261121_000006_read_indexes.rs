//! Indexes the operations console reads by: the newest activations first (all of them, or of
//! one status), and the dead letter of a failed data message.

use sea_orm_migration::prelude::*;

use crate::m20261121_000002_runtime::{Activations, DeadLetters};
use crate::util::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

const ACTIVATIONS_CREATED: &str = "idx_activations_created_at";
const ACTIVATIONS_STATUS_CREATED: &str = "idx_activations_status_created";
const DEAD_LETTERS_MESSAGE_ID: &str = "idx_dead_letters_message_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                ACTIVATIONS_CREATED,
                Activations::Table,
                [Activations::CreatedAt],
            ))
            .await?;
        manager
            .create_index(index(
                ACTIVATIONS_STATUS_CREATED,
                Activations::Table,
                [Activations::Status, Activations::CreatedAt],
            ))
            .await?;
        manager
            .create_index(index(
                DEAD_LETTERS_MESSAGE_ID,
                DeadLetters::Table,
                [DeadLetters::MessageId],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, table) in [
            (DEAD_LETTERS_MESSAGE_ID, DeadLetters::Table.into_iden()),
            (ACTIVATIONS_STATUS_CREATED, Activations::Table.into_iden()),
            (ACTIVATIONS_CREATED, Activations::Table.into_iden()),
        ] {
            manager
                .drop_index(Index::drop().name(name).table(table).to_owned())
                .await?;
        }
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
