//! What of a node's last publication the catalog could not take, with why (JSON): shown on the
//! schema-drift page, so nothing a node publishes is left out with only a log line. Nodes that
//! published before this migration have none until they publish again.

use sea_orm_migration::{prelude::*, schema::text_null};

use crate::{
    m20261121_000002_runtime::Nodes,
    util::{add_columns, drop_columns},
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    RefusedChanges,
}

fn added() -> Vec<ColumnDef> {
    vec![text_null(Added::RefusedChanges)]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_columns(manager, Nodes::Table, added()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_columns(manager, Nodes::Table, added()).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
