//! Recovery: hosts a `MANY` launch setting's breaker took out of its rotation (the launch
//! setting keeps running on the other hosts of its pool, and is no longer dispatched to these
//! until an operator re-enables it or clears the host), and per launch setting the count of each
//! kind of recovery the runtime carried out (start timeouts, lost runs, re-dispatches, stale
//! reports ignored, quarantines).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{big_integer, string, text, uuid_null};

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
            .await?;
        use RecoveryCounts as R;
        manager
            .create_table(
                table(R::Table)
                    .col(string(R::LaunchSettingId))
                    .col(string(R::Kind))
                    .col(big_integer(R::Count))
                    .primary_key(&mut primary_key(
                        "pk_recovery_counts",
                        [R::LaunchSettingId, R::Kind],
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_recovery_counts_launch_setting_id",
                        (R::Table, R::LaunchSettingId),
                        (LaunchSettings::Table, LaunchSettings::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(drop(RecoveryCounts::Table)).await?;
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

#[derive(DeriveIden)]
pub enum RecoveryCounts {
    Table,
    LaunchSettingId,
    Kind,
    Count,
}
