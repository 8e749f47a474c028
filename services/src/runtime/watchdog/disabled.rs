//! Disabled launch settings and groups stop running: nodes still running a disabled launch
//! setting get *stop*; a member still running for a disabled group gets *interrupt* (the
//! launch setting itself may run alone meanwhile), and the group then ends.

use super::*;
use crate::{
    entity::schedule_groups,
    runtime::{ending::end_activation, stopping::Ending},
};

/// What the nodes and the run's end are told when whoever disabled it gave no reason.
const NO_REASON: &str = "disabled";

/// Nodes still running a disabled launch setting get *stop*; activations of it that wait end.
pub(super) async fn stop_disabled(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    use launch_settings::Column as L;
    let disabled =
        disabled::<launch_settings::Entity>(db, [L::Id, L::DisabledReason, L::Enabled]).await?;
    for chunk in disabled.chunks(crate::runtime::CHUNK) {
        let reasons: HashMap<&str, &str> = chunk
            .iter()
            .map(|(id, r)| (id.as_str(), r.as_str()))
            .collect();
        let active = activations::Entity::find()
            .filter(activations::Column::LaunchSettingId.is_in(chunk.iter().map(|c| c.0.clone())))
            .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
            .all(db)
            .await?;
        for a in active {
            let ls = a.launch_setting_id.clone().unwrap_or_default();
            let reason = reasons
                .get(ls.as_str())
                .copied()
                .unwrap_or(NO_REASON)
                .to_owned();
            let stop = ToNode::Stop(Stop {
                launch_setting: ls.clone(),
                reason: reason.clone(),
            });
            end_activation(db, cfg, &a, &reason, Ending::Stop(&stop), now).await?;
        }
    }
    interrupt_members_of_disabled_groups(db, cfg, now).await
}

/// A group its breaker (or an operator) disabled runs no further member, and the member still
/// running, on whichever host, is interrupted: a member is one activation, so *interrupt* (not
/// *stop*, which would also end runs of the launch setting outside the group).
async fn interrupt_members_of_disabled_groups(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    use schedule_groups::Column as G;
    let disabled =
        disabled::<schedule_groups::Entity>(db, [G::Id, G::DisabledReason, G::Enabled]).await?;
    for chunk in disabled.chunks(crate::runtime::CHUNK) {
        let reasons: HashMap<&str, &str> = chunk
            .iter()
            .map(|(id, r)| (id.as_str(), r.as_str()))
            .collect();
        let runs: Vec<(Uuid, Option<String>)> = activations::Entity::find()
            .select_only()
            .column(activations::Column::Id)
            .column(activations::Column::GroupId)
            .filter(activations::Column::GroupId.is_in(chunk.iter().map(|c| c.0.clone())))
            .filter(activations::Column::ParentId.is_null())
            .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
            .into_tuple()
            .all(db)
            .await?;
        for (run, group) in runs {
            let reason = format!(
                "the group {} was disabled: {}",
                group.as_deref().unwrap_or_default(),
                group
                    .as_deref()
                    .and_then(|g| reasons.get(g))
                    .copied()
                    .unwrap_or(NO_REASON)
            );
            let members = activations::Entity::find()
                .filter(activations::Column::ParentId.eq(run))
                .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
                .all(db)
                .await?;
            for member in members {
                end_activation(db, cfg, &member, &reason, Ending::Interrupt, now).await?;
            }
        }
    }
    Ok(())
}

/// `(id, why)` of every disabled launch setting or schedule group (`disabled` when no reason
/// was recorded).
async fn disabled<E: EntityTrait>(
    db: &DatabaseConnection,
    [id, reason, enabled]: [E::Column; 3],
) -> ServiceResult<Vec<(String, String)>> {
    let rows: Vec<(String, Option<String>)> = E::find()
        .select_only()
        .column(id)
        .column(reason)
        .filter(enabled.eq(false))
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, r)| (id, r.unwrap_or_else(|| NO_REASON.to_owned())))
        .collect())
}
