//! The trace an activation began in (docs/operations.md, Observe, Traces): the W3C
//! `traceparent` of the span that created it (a fire, *Run now*, a stream's start). A later
//! dispatch of the same activation (after it waited for a node, a start timeout, a lost node)
//! links its span to that one. Activations created before this migration, or while no traces
//! are exported, have none.

use sea_orm_migration::{prelude::*, schema::string_null};

use crate::{
    m20261121_000002_runtime::Activations,
    util::{add_columns, drop_columns},
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    TraceParent,
}

fn added() -> Vec<ColumnDef> {
    vec![string_null(Added::TraceParent)]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_columns(manager, Activations::Table, added()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_columns(manager, Activations::Table, added()).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
