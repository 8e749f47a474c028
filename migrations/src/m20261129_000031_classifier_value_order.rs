//! The classifier values in their classifier's order (`idx_classifier_values_position`): the
//! parameter picker's first page reads the first 51 of them instead of sorting every value of
//! a classifier of up to 100,000 (docs/benchmarks.md, Reads beside a 100,000-value classifier).

use sea_orm_migration::prelude::*;

use crate::m20261121_000001_catalog::ClassifierValues as V;
use crate::util::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

const NAME: &str = "idx_classifier_values_position";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                NAME,
                V::Table,
                [V::ApplicationId, V::ClassifierName, V::Position],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(NAME).table(V::Table).to_owned())
            .await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
