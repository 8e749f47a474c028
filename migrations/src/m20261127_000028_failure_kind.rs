//! The kind of each failure report stored with it (`failed`, `retried`, `unavailable`: what
//! the dashboard counts as a failure and what it shows beside), so every list counts the same
//! thing and filters on it inside the drill-down's covering indexes. Rows stored before are
//! given their kind from what they already held (temporary, disposition).

use sea_orm_migration::{prelude::*, schema::string};

use crate::m20261121_000002_runtime::FailureLogs as F;
use crate::util::{add_columns, drop_columns, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    Kind,
    Temporary,
    Disposition,
}

fn added() -> Vec<ColumnDef> {
    vec![string(Added::Kind).default("failed").take()]
}

/// The indexes that read failures by kind, before and after: the kind goes last, so every
/// statement keeps its order and reads the kind from the index.
fn indexes(with_kind: bool) -> Vec<(&'static str, Vec<DynIden>)> {
    let mut out: Vec<(&'static str, Vec<DynIden>)> = vec![
        (
            "idx_failure_logs_drill_down",
            vec![
                F::LaunchSettingId.into_iden(),
                F::ActivationId.into_iden(),
                F::Host.into_iden(),
                F::OccurredAt.into_iden(),
            ],
        ),
        (
            "idx_failure_logs_ls_error_type",
            vec![F::LaunchSettingId.into_iden(), F::ErrorType.into_iden()],
        ),
        (
            "idx_failure_logs_activation_host_error_type",
            vec![
                F::ActivationId.into_iden(),
                F::Host.into_iden(),
                F::ErrorType.into_iden(),
            ],
        ),
        // The dashboard's last hour, of one kind.
        (
            "idx_failure_logs_occurred_at",
            vec![F::OccurredAt.into_iden()],
        ),
    ];
    if with_kind {
        for (_, cols) in &mut out {
            cols.push(Added::Kind.into_iden());
        }
    }
    out
}

async fn replace_indexes(manager: &SchemaManager<'_>, with_kind: bool) -> Result<(), DbErr> {
    for (name, cols) in indexes(with_kind) {
        manager
            .drop_index(Index::drop().name(name).table(F::Table).to_owned())
            .await?;
        manager.create_index(index(name, F::Table, cols)).await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_columns(manager, F::Table, added()).await?;
        // The words as they were when this ran (am_domain::dashboard::failure_kind and
        // am_domain::wire::disposition); a migration states its own values.
        manager
            .exec_stmt(
                Query::update()
                    .table(F::Table)
                    .value(Added::Kind, "unavailable")
                    .and_where(Expr::col(Added::Temporary).eq(true))
                    .take(),
            )
            .await?;
        manager
            .exec_stmt(
                Query::update()
                    .table(F::Table)
                    .value(Added::Kind, "retried")
                    .and_where(Expr::col(Added::Temporary).eq(false))
                    .and_where(Expr::col(Added::Disposition).eq("retry"))
                    .take(),
            )
            .await?;
        replace_indexes(manager, true).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        replace_indexes(manager, false).await?;
        drop_columns(manager, F::Table, added()).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
