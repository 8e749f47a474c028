//! Per-minute figures of the data path (`throughput_minutes`): what each launch setting's nodes
//! processed in a minute, and the backlog the broker held for it at the minute's last sample;
//! the broker's total backlog under the scope `*`. The charts of the last hour read them; rows
//! older than a day are deleted as new samples come.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{big_integer, big_integer_null, string};

use crate::util::{drop, index, primary_key, table, ts};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
pub enum ThroughputMinutes {
    Table,
    /// A launch setting id, or `*` for the broker's total.
    Scope,
    Minute,
    Processed,
    Backlog,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ThroughputMinutes as T;
        manager
            .create_table(
                table(T::Table)
                    .col(string(T::Scope))
                    .col(ts(T::Minute))
                    .col(big_integer(T::Processed).default(0))
                    .col(big_integer_null(T::Backlog))
                    .primary_key(&mut primary_key(
                        "pk_throughput_minutes",
                        [T::Scope, T::Minute],
                    ))
                    .take(),
            )
            .await?;
        // The dashboard's window over every scope, and the sweep of old rows.
        manager
            .create_index(index(
                "idx_throughput_minutes_minute",
                T::Table,
                [T::Minute],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(drop(ThroughputMinutes::Table)).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
