//! The members of schedule groups, in run order: what a fire plans, a member's end continues
//! and the locks of a settling group take.

use crate::{entity::schedule_group_members, error::ServiceResult};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use std::collections::HashMap;

/// Members of groups, in order.
pub(super) async fn members_of(
    db: &impl ConnectionTrait,
    groups: &[String],
) -> ServiceResult<HashMap<String, Vec<String>>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for chunk in groups.chunks(super::CHUNK) {
        for m in schedule_group_members::Entity::find()
            .filter(schedule_group_members::Column::GroupId.is_in(chunk.iter().cloned()))
            .order_by_asc(schedule_group_members::Column::GroupId)
            .order_by_asc(schedule_group_members::Column::Position)
            .all(db)
            .await?
        {
            out.entry(m.group_id).or_default().push(m.launch_setting_id);
        }
    }
    Ok(out)
}
