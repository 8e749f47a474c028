//! What the on-call operator asks of a disabled item and of a failing launch setting: who
//! disabled it (a user, or the breaker with the activation that tripped it) and when — groups
//! had no time stamp until now —, and when a launch setting last succeeded, so pages can say
//! "failing since" the first failure after it.

use sea_orm_migration::{
    prelude::*,
    schema::{string_null, uuid_null},
};

use crate::{
    m20261121_000001_catalog::{LaunchSettings, ScheduleGroups},
    util::{add_columns, drop_columns, ts_null},
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    DisabledAt,
    DisabledBy,
    DisabledActivation,
    LastSuccessAt,
}

/// The columns each table gains.
fn added() -> [(TableRef, Vec<ColumnDef>); 2] {
    [
        (
            LaunchSettings::Table.into_table_ref(),
            vec![
                string_null(Added::DisabledBy),
                uuid_null(Added::DisabledActivation),
                ts_null(Added::LastSuccessAt),
            ],
        ),
        (
            ScheduleGroups::Table.into_table_ref(),
            vec![
                ts_null(Added::DisabledAt),
                string_null(Added::DisabledBy),
                uuid_null(Added::DisabledActivation),
            ],
        ),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (table, columns) in added() {
            add_columns(manager, table, columns).await?;
        }
        // What the settled activations already say: the newest success of each launch setting.
        manager
            .get_connection()
            .execute_unprepared(
                "UPDATE launch_settings SET last_success_at = last_result_at \
                 WHERE last_result = 'succeeded'",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (table, columns) in added() {
            drop_columns(manager, table, columns).await?;
        }
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
