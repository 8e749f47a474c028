//! Reading the audit log (docs/operations.md, Audit log): the client address a change came
//! from, and indexes for its filters, newest first by id (the page cursor).

use sea_orm_migration::{prelude::*, schema::string_null};

use crate::{m20261121_000003_operations_audit::AuditLog, util::index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    Address,
}

const INDEXES: [&str; 2] = ["idx_audit_log_actor_id", "idx_audit_log_entity_id"];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(AuditLog::Table)
                    .add_column(string_null(Added::Address))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                INDEXES[0],
                AuditLog::Table,
                [AuditLog::Actor, AuditLog::Id],
            ))
            .await?;
        manager
            .create_index(index(
                INDEXES[1],
                AuditLog::Table,
                [AuditLog::EntityType, AuditLog::EntityId, AuditLog::Id],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for name in INDEXES {
            manager
                .drop_index(Index::drop().name(name).table(AuditLog::Table).to_owned())
                .await?;
        }
        manager
            .alter_table(
                Table::alter()
                    .table(AuditLog::Table)
                    .drop_column(Added::Address)
                    .take(),
            )
            .await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
