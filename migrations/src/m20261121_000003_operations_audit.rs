//! Bulk operations (background jobs with visible progress) and the audit log.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{
    big_integer, big_pk_auto, boolean, json, json_null, string, text_null, uuid,
};

use crate::util::{drop, index, table, ts, ts_null};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Operations as O;
        manager
            .create_table(
                table(O::Table)
                    .col(uuid(O::Id).primary_key())
                    .col(string(O::Kind))
                    .col(string(O::Status))
                    .col(string(O::RequestedBy))
                    .col(json(O::Params))
                    .col(big_integer(O::Total).default(0i64))
                    .col(big_integer(O::Done).default(0i64))
                    .col(big_integer(O::Failed).default(0i64))
                    .col(json(O::Errors))
                    .col(text_null(O::Cursor))
                    .col(boolean(O::CancelRequested).default(false))
                    .col(ts(O::CreatedAt))
                    .col(ts_null(O::StartedAt))
                    .col(ts_null(O::FinishedAt))
                    .col(ts(O::UpdatedAt))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_operations_status_created_at",
                O::Table,
                [O::Status, O::CreatedAt],
            ))
            .await?;

        use AuditLog as L;
        manager
            .create_table(
                table(L::Table)
                    .col(big_pk_auto(L::Id))
                    .col(ts(L::At))
                    .col(string(L::Actor))
                    .col(string(L::Action))
                    .col(string(L::EntityType))
                    .col(string(L::EntityId))
                    .col(json_null(L::Before))
                    .col(json_null(L::After))
                    .col(text_null(L::Cause))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_audit_log_entity",
                L::Table,
                [L::EntityType, L::EntityId, L::At],
            ))
            .await?;
        manager
            .create_index(index("idx_audit_log_at", L::Table, [L::At]))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(drop(AuditLog::Table)).await?;
        manager.drop_table(drop(Operations::Table)).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

#[derive(DeriveIden)]
pub enum Operations {
    Table,
    Id,
    Kind,
    Status,
    RequestedBy,
    Params,
    Total,
    Done,
    Failed,
    Errors,
    Cursor,
    CancelRequested,
    CreatedAt,
    StartedAt,
    FinishedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
pub enum AuditLog {
    Table,
    Id,
    At,
    Actor,
    Action,
    EntityType,
    EntityId,
    Before,
    After,
    Cause,
}
