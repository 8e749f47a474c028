//! The dashboard counts runs, not rows: a group's run and its members' runs are one run, so
//! its counts read only the activations without a parent. This partial index keeps that count
//! an index range on both backends (SQLite and PostgreSQL accept the same statement).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

const RUNS: &str = "idx_activations_status_created_runs";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "CREATE INDEX {RUNS} ON activations (status, created_at) WHERE parent_id IS NULL"
            ))
            .await
            .map(|_| ())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(&format!("DROP INDEX {RUNS}"))
            .await
            .map(|_| ())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
