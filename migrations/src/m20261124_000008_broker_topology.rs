//! What the manager's broker reconciler last applied: the single row (id 1) holds the broker
//! objects it declared, the queues still on their way out, the catalog revision they came
//! from, the lease that lets one manager replica at a time change the broker, and when an
//! operator last asked for a full pass.

use sea_orm_migration::{
    prelude::*,
    schema::{big_integer_null, integer, string_null, text, text_null},
};

use crate::util::{drop, table, ts_null};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use BrokerTopology as B;
        manager
            .create_table(
                table(B::Table)
                    .col(integer(B::Id).primary_key())
                    .col(text(B::Applied))
                    .col(big_integer_null(B::AppliedRevision))
                    .col(string_null(B::Holder))
                    .col(ts_null(B::LeaseUntil))
                    .col(ts_null(B::ReconciledAt))
                    .col(text_null(B::LastError))
                    .col(ts_null(B::FullRequestedAt))
                    .take(),
            )
            .await?;
        manager
            .exec_stmt(
                Query::insert()
                    .into_table(B::Table)
                    .columns([B::Id, B::Applied])
                    .values_panic([1.into(), "{}".into()])
                    .take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(drop(BrokerTopology::Table)).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

#[derive(DeriveIden)]
pub enum BrokerTopology {
    Table,
    Id,
    Applied,
    AppliedRevision,
    Holder,
    LeaseUntil,
    ReconciledAt,
    LastError,
    FullRequestedAt,
}
