//! Bulk actions on launch settings and schedule groups an operator selected: *Run now*,
//! *Interrupt*, *Disable* and *Enable*. Each entity is acted on as its own action does (its
//! own transaction and audit entry), so one that cannot be (deleted meanwhile, disabled,
//! running nothing) is answered on its own and does not stop the others.
//!
//! The durable operations `enable-launch-settings` / `enable-schedule-groups` act on each of
//! their items through [`one`] as well: two sizes of the same rule.

use crate::{
    Principal, ServiceError, catalog,
    entity::{activations, launch_settings, schedule_groups},
    error::ServiceResult,
    runtime::{RuntimeConfig, interrupt, run},
    status::activation::ACTIVE,
};
pub use am_domain::bulk::{BulkAction, MAX_SELECTED};
use am_domain::{roles::Operation, usage::EntityRef};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use uuid::Uuid;

/// What a bulk action did to one entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// Enabled or disabled.
    Switched,
    /// *Run now* started this activation.
    Started(Uuid),
    /// *Interrupt* asked these activations to stop (a waiting one ends at once).
    Interrupted(Vec<Uuid>),
}

/// Acts on each of `keys` (launch settings or schedule groups, 1 to [`MAX_SELECTED`]) in
/// order, giving each audit entry the cause "<action> by <actor> <channel>, one of N selected".
/// The outer error refuses the whole call (role, count, kind) before anything is done; each
/// inner result is one entity's.
pub async fn act(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    actor: &Principal,
    keys: &[EntityRef],
    action: BulkAction,
    channel: &str,
) -> ServiceResult<Vec<ServiceResult<Done>>> {
    actor.require(Operation::Bulk)?;
    check(keys)?;
    let done = match action {
        BulkAction::RunNow => "run",
        BulkAction::Interrupt => "interrupted",
        BulkAction::Disable => "disabled",
        BulkAction::Enable => "enabled",
    };
    let cause = format!(
        "{done} by {} {channel}, one of {} selected",
        actor.name,
        keys.len()
    );
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        out.push(one(db, cfg, actor, key, action, &cause).await);
    }
    Ok(out)
}

/// Acts on one entity as its row's own action does; `cause` goes into the audit entry of an
/// enable or disable (a *Run now* or an *Interrupt* is recorded with its activation).
pub async fn one(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    actor: &Principal,
    key: &EntityRef,
    action: BulkAction,
    cause: &str,
) -> ServiceResult<Done> {
    match action {
        BulkAction::Enable | BulkAction::Disable => {
            let enabled = action == BulkAction::Enable;
            catalog::set_enabled(db, actor, key, enabled, cause).await?;
            Ok(Done::Switched)
        }
        BulkAction::RunNow => run::run_now(db, cfg, actor, key).await.map(Done::Started),
        BulkAction::Interrupt => interrupt_runs(db, cfg, actor, key).await,
    }
}

/// Interrupts every run of `key` still waiting or running: a launch setting's own and those
/// it runs as a group's member, a group's runs (each takes its running member with it). One
/// that ended meanwhile is left out; none at all is a conflict the row shows.
async fn interrupt_runs(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    actor: &Principal,
    key: &EntityRef,
) -> ServiceResult<Done> {
    use activations::Column as C;
    let runs = activations::Entity::find()
        .select_only()
        .column(C::Id)
        .filter(C::Status.is_in(ACTIVE))
        .order_by_asc(C::CreatedAt);
    let runs = match key {
        EntityRef::LaunchSetting(id) => {
            let found = launch_settings::Entity::find_by_id(id.clone()).count(db);
            exists(found.await?, key)?;
            runs.filter(C::LaunchSettingId.eq(id.as_str()))
        }
        EntityRef::ScheduleGroup(id) => {
            let found = schedule_groups::Entity::find_by_id(id.clone()).count(db);
            exists(found.await?, key)?;
            runs.filter(C::GroupId.eq(id.as_str()))
                .filter(C::ParentId.is_null())
        }
        other => {
            return Err(ServiceError::invalid(
                "ids",
                format!("{other} has no runs to interrupt"),
            ));
        }
    };
    let runs: Vec<Uuid> = runs.into_tuple().all(db).await?;
    let mut interrupted = Vec::with_capacity(runs.len());
    for run in runs {
        match interrupt::interrupt(db, cfg, actor, &run.to_string()).await {
            Ok(()) => interrupted.push(run),
            // Ended between the read and the interrupt: nothing left to stop there.
            Err(ServiceError::Conflict(_)) => {}
            Err(e) => return Err(e),
        }
    }
    if interrupted.is_empty() {
        return Err(ServiceError::Conflict(format!(
            "{key} is not waiting or running: there is nothing to interrupt"
        )));
    }
    Ok(Done::Interrupted(interrupted))
}

/// `NotFound` for `key` unless its row was `found`.
fn exists(found: u64, key: &EntityRef) -> ServiceResult<()> {
    if found == 0 {
        return Err(ServiceError::NotFound(key.to_string()));
    }
    Ok(())
}

/// The selection's bounds: 1 to [`MAX_SELECTED`] launch settings or schedule groups, each
/// once (an entity named twice would be run twice).
fn check(keys: &[EntityRef]) -> ServiceResult<()> {
    if keys.is_empty() || keys.len() > MAX_SELECTED {
        return Err(ServiceError::invalid(
            "ids",
            format!(
                "select between 1 and {MAX_SELECTED} entities, not {}",
                keys.len()
            ),
        ));
    }
    if let Some((i, key)) = keys
        .iter()
        .enumerate()
        .find(|(_, k)| !matches!(k, EntityRef::LaunchSetting(_) | EntityRef::ScheduleGroup(_)))
    {
        return Err(ServiceError::invalid(
            format!("ids[{i}]"),
            format!("{key} has no bulk actions: only launch settings and schedule groups do"),
        ));
    }
    let mut first = std::collections::HashMap::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        if let Some(j) = first.insert(key, i) {
            return Err(ServiceError::invalid(
                format!("ids[{i}]"),
                format!("{key} is selected twice (also ids[{j}])"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_is_one_to_two_hundred_launch_settings_or_groups() {
        let ls = |i: usize| EntityRef::LaunchSetting(format!("a.b.{i}"));
        assert!(check(&[]).is_err());
        assert!(check(&(0..MAX_SELECTED).map(ls).collect::<Vec<_>>()).is_ok());
        assert!(check(&(0..=MAX_SELECTED).map(ls).collect::<Vec<_>>()).is_err());
        let mixed = [
            ls(0),
            EntityRef::ScheduleGroup("g".into()),
            EntityRef::Pool("p".into()),
        ];
        match check(&mixed) {
            Err(ServiceError::Invalid(e)) => assert_eq!(e.0[0].path, "ids[2]"),
            other => panic!("a pool has no bulk actions: {other:?}"),
        }
        match check(&[ls(0), ls(1), ls(0)]) {
            Err(ServiceError::Invalid(e)) => {
                assert_eq!(e.0[0].path, "ids[2]");
                assert!(e.0[0].message.contains("also ids[0]"), "{}", e.0[0].message);
            }
            other => panic!("an entity named twice is refused: {other:?}"),
        }
    }
}
