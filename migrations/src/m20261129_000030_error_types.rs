//! The error types each launch setting's failures reported (`error_types`), with the time the
//! latest of them occurred: what the global search finds an error type in. `failure_logs` has
//! no index led by the error type (its indexes start with the launch setting or the activation)
//! and holds millions of rows; this table holds one row per launch setting and error type.
//! Rows are filled from the failure logs already stored.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::string;

use crate::m20261121_000002_runtime::FailureLogs as F;
use crate::util::{drop, primary_key, table, ts};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
pub enum ErrorTypes {
    Table,
    LaunchSettingId,
    ErrorType,
    LastSeen,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ErrorTypes as T;
        manager
            .create_table(
                table(T::Table)
                    .col(string(T::LaunchSettingId))
                    .col(string(T::ErrorType))
                    .col(ts(T::LastSeen))
                    .primary_key(&mut primary_key(
                        "pk_error_types",
                        [T::LaunchSettingId, T::ErrorType],
                    ))
                    .take(),
            )
            .await?;
        let fill = Query::insert()
            .into_table(T::Table)
            .columns([T::LaunchSettingId, T::ErrorType, T::LastSeen])
            .select_from(
                Query::select()
                    .column(F::LaunchSettingId)
                    .column(F::ErrorType)
                    .expr(Expr::col(F::OccurredAt).max())
                    .from(F::Table)
                    .group_by_col(F::LaunchSettingId)
                    .group_by_col(F::ErrorType)
                    .take(),
            )
            .map_err(|e| DbErr::Migration(e.to_string()))?
            .take();
        manager.exec_stmt(fill).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(drop(ErrorTypes::Table)).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
