//! Hosts a `MANY` launch setting's breaker took out of its rotation: the launch setting keeps
//! running on the other hosts of its pool, and is no longer dispatched to these until an
//! operator re-enables it or clears the host.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{string, text, uuid_null};

use crate::m20261121_000001_catalog::LaunchSettings;
use crate::util::{drop, foreign_key, primary_key, table, ts};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use HostQuarantines as Q;
        manager
            .create_table(
                table(Q::Table)
                    .col(string(Q::LaunchSettingId))
                    .col(string(Q::Host))
                    .col(ts(Q::Since))
                    .col(text(Q::Cause))
                    .col(uuid_null(Q::ActivationId))
                    .primary_key(&mut primary_key(
                        "pk_host_quarantines",
                        [Q::LaunchSettingId, Q::Host],
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_host_quarantines_launch_setting_id",
                        (Q::Table, Q::LaunchSettingId),
                        (LaunchSettings::Table, LaunchSettings::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(drop(HostQuarantines::Table)).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

#[derive(DeriveIden)]
pub enum HostQuarantines {
    Table,
    LaunchSettingId,
    Host,
    Since,
    Cause,
    ActivationId,
}
