//! The dead man's switch of schedule groups (docs/notifications.md, `schedule_missed`): the
//! window within which a run should succeed, when the group last succeeded, since when it is
//! watched (created or enabled again) and when its silence was last told. Existing groups have
//! no window, so nothing is told until an operator sets one.

use sea_orm_migration::{prelude::*, schema::big_integer_null};

use crate::{
    m20261121_000001_catalog::ScheduleGroups,
    util::{add_columns, drop_columns, ts_null},
};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Added {
    ExpectSuccessWithinMs,
    LastSuccessAt,
    WatchFrom,
    SilenceToldAt,
}

fn added() -> Vec<ColumnDef> {
    vec![
        big_integer_null(Added::ExpectSuccessWithinMs),
        ts_null(Added::LastSuccessAt),
        ts_null(Added::WatchFrom),
        ts_null(Added::SilenceToldAt),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_columns(manager, ScheduleGroups::Table, added()).await?;
        // What the settled group activations already say.
        manager
            .get_connection()
            .execute_unprepared(
                "UPDATE schedule_groups SET last_success_at = last_result_at \
                 WHERE last_result = 'succeeded'",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_columns(manager, ScheduleGroups::Table, added()).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
