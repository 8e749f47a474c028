//! The queue each dispatch of a messages activation was told to consume (docs/runtime.md,
//! Streams follow the catalog): when the catalog moves a running stream to another queue (its
//! agent to another data queue, or its data queue to another kind), the watchdog sees the
//! difference and restarts the stream on the new one instead of leaving it on the old. Rows
//! dispatched before this migration have none and are left as they are.

use sea_orm_migration::{prelude::*, schema::string_null};

use crate::{
    m20261121_000002_runtime::ActivationHosts,
    util::{add_columns, drop_columns},
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    Consumes,
}

fn added() -> Vec<ColumnDef> {
    vec![string_null(Added::Consumes)]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_columns(manager, ActivationHosts::Table, added()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_columns(manager, ActivationHosts::Table, added()).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
