//! A node that publishes before its application is in the catalog keeps its publication here
//! until the application is created; the manager then applies it without the node restarting.

use sea_orm_migration::{prelude::*, schema::text_null};

use crate::m20261121_000002_runtime::Nodes;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Nodes::Table)
                    .add_column(text_null(Added::WaitingPublication))
                    .take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Nodes::Table)
                    .drop_column(Added::WaitingPublication)
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
    WaitingPublication,
}
