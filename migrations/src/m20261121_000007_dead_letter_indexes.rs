//! What the dead-letter browser and replay need: the indexes its filters read by (newest
//! first overall, by status, by data queue and by error type, each ordered by arrival), the
//! index a message's failure history is found by, and the AMQP properties of a dead letter
//! besides message id and content type, so a replay sends the message as it was published.

use sea_orm_migration::{prelude::*, schema::json_null};

use crate::m20261121_000002_runtime::{DeadLetters, FailureLogs};
use crate::util::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

const RECEIVED: &str = "idx_dead_letters_received_at";
const STATUS_RECEIVED: &str = "idx_dead_letters_status_received_at";
const DATA_QUEUE_RECEIVED: &str = "idx_dead_letters_data_queue_received_at";
const ERROR_TYPE_RECEIVED: &str = "idx_dead_letters_error_type_received_at";
/// Replaced by [`ERROR_TYPE_RECEIVED`], which also orders each error type by arrival.
const ERROR_TYPE: &str = "idx_dead_letters_error_type";
const FAILURES_MESSAGE: &str = "idx_failure_logs_data_message_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use DeadLetters as D;
        manager
            .alter_table(
                Table::alter()
                    .table(D::Table)
                    .add_column(json_null(Properties::Properties))
                    .take(),
            )
            .await?;
        manager
            .drop_index(Index::drop().name(ERROR_TYPE).table(D::Table).to_owned())
            .await?;
        for (name, cols) in [
            (RECEIVED, vec![D::ReceivedAt]),
            (STATUS_RECEIVED, vec![D::Status, D::ReceivedAt]),
            (DATA_QUEUE_RECEIVED, vec![D::DataQueueId, D::ReceivedAt]),
            (ERROR_TYPE_RECEIVED, vec![D::ErrorType, D::ReceivedAt]),
        ] {
            manager.create_index(index(name, D::Table, cols)).await?;
        }
        manager
            .create_index(index(
                FAILURES_MESSAGE,
                FailureLogs::Table,
                [FailureLogs::DataMessageId],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use DeadLetters as D;
        manager
            .drop_index(
                Index::drop()
                    .name(FAILURES_MESSAGE)
                    .table(FailureLogs::Table)
                    .to_owned(),
            )
            .await?;
        for name in [
            ERROR_TYPE_RECEIVED,
            DATA_QUEUE_RECEIVED,
            STATUS_RECEIVED,
            RECEIVED,
        ] {
            manager
                .drop_index(Index::drop().name(name).table(D::Table).to_owned())
                .await?;
        }
        manager
            .create_index(index(ERROR_TYPE, D::Table, [D::ErrorType]))
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(D::Table)
                    .drop_column(Properties::Properties)
                    .take(),
            )
            .await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

/// The column this migration adds to `dead_letters`.
#[derive(DeriveIden)]
enum Properties {
    Properties,
}
