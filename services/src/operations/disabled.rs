//! What a re-enable operation selects from: the launch settings and schedule groups disabled
//! now, each with why.

use crate::{
    Principal,
    entity::{launch_settings, schedule_groups},
    error::ServiceResult,
};
use am_domain::{
    read::operations::{Disabled, DisabledEntity},
    roles::Operation,
};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

pub async fn disabled(db: &DatabaseConnection, actor: &Principal) -> ServiceResult<Disabled> {
    actor.require(Operation::Read)?;
    let launch_settings: Vec<(String, Option<String>)> = launch_settings::Entity::find()
        .select_only()
        .column(launch_settings::Column::Id)
        .column(launch_settings::Column::DisabledReason)
        .filter(launch_settings::Column::Enabled.eq(false))
        .order_by_asc(launch_settings::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    let groups: Vec<(String, Option<String>)> = schedule_groups::Entity::find()
        .select_only()
        .column(schedule_groups::Column::Id)
        .column(schedule_groups::Column::DisabledReason)
        .filter(schedule_groups::Column::Enabled.eq(false))
        .order_by_asc(schedule_groups::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    let entities = |rows: Vec<(String, Option<String>)>| {
        rows.into_iter()
            .map(|(id, reason)| DisabledEntity { id, reason })
            .collect()
    };
    Ok(Disabled {
        launch_settings: entities(launch_settings),
        groups: entities(groups),
    })
}
