//! Reports counted once: each failure report carries the id its node gave it, unique, so a
//! batch delivered again (a lost acknowledgement, a manager that died after its commit) is not
//! stored twice; a failure row keeps what the node knew of it (temporary, what became of the
//! data message); a node records the protocol version it speaks.

use sea_orm_migration::{
    prelude::*,
    schema::{boolean, integer, string_null},
};

use crate::m20261121_000002_runtime::{FailureLogs, Nodes};

#[derive(DeriveMigrationName)]
pub struct Migration;

const REPORT_ID: &str = "idx_failure_logs_report_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use FailureLogs as F;
        // SQLite alters one column per statement.
        for column in [
            string_null(Added::ReportId),
            boolean(Added::Temporary).default(false).take(),
            string_null(Added::Disposition),
        ] {
            manager
                .alter_table(Table::alter().table(F::Table).add_column(column).take())
                .await?;
        }
        // NULL (reports of version-1 nodes) never conflicts, on either database.
        manager
            .create_index(
                Index::create()
                    .name(REPORT_ID)
                    .table(F::Table)
                    .col(Added::ReportId)
                    .unique()
                    .take(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Nodes::Table)
                    .add_column(integer(Added::ProtocolVersion).default(1).take())
                    .take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(REPORT_ID)
                    .table(FailureLogs::Table)
                    .to_owned(),
            )
            .await?;
        for column in [Added::ReportId, Added::Temporary, Added::Disposition] {
            manager
                .alter_table(
                    Table::alter()
                        .table(FailureLogs::Table)
                        .drop_column(column)
                        .take(),
                )
                .await?;
        }
        manager
            .alter_table(
                Table::alter()
                    .table(Nodes::Table)
                    .drop_column(Added::ProtocolVersion)
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
    ReportId,
    Temporary,
    Disposition,
    ProtocolVersion,
}
