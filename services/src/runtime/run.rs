//! Activations an operator starts: *Run now* of a launch setting or a group, and the re-run of
//! a failed activation from where it broke (docs/runtime.md, Re-run).

use super::{
    RuntimeConfig,
    activate::{NewActivation, plan_activation},
    ending,
    fires::{self, Fire},
    overlap::{self, Busy},
    plan::Plan,
    resolve::Resolver,
};
use crate::status::{self, Trigger};
use crate::{
    Principal,
    audit::{self, AuditEntry},
    entity::{
        activation_hosts, activations, launch_settings, schedule_group_members, schedule_groups,
    },
    error::{ServiceError, ServiceResult},
};
pub use am_domain::recovery::{Rerun, RerunChoices};
use am_domain::status::EventKind;
use am_domain::{roles::Operation, usage::EntityRef};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    TransactionTrait,
};
use uuid::Uuid;

/// *Run now* of a launch setting or a schedule group, for operators.
#[tracing::instrument(skip_all, fields(%what, by = %actor.name))]
pub async fn run_now(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    actor: &Principal,
    what: &EntityRef,
) -> ServiceResult<Uuid> {
    actor.require(Operation::Run)?;
    match what {
        EntityRef::LaunchSetting(id) => run_alone(db, cfg, actor, id, Alone::default()).await,
        EntityRef::ScheduleGroup(id) => run_group(db, cfg, actor, id, 0, None).await,
        other => Err(ServiceError::invalid("", format!("{other} cannot be run"))),
    }
}

/// Re-runs a finished activation from where it broke; returns the new activation. A member run
/// of a group re-runs its group from that member. Both timelines say which is the re-run of
/// which, and the audit log who asked.
#[tracing::instrument(skip_all, fields(%activation, by = %actor.name))]
pub async fn rerun(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    actor: &Principal,
    activation: &str,
    how: &Rerun,
) -> ServiceResult<Uuid> {
    actor.require(Operation::Run)?;
    let original = find(db, activation).await?;
    let activation = original.id;
    if status::activation::ACTIVE.contains(&original.status.as_str()) {
        return Err(ServiceError::Conflict(format!(
            "activation {activation} is still {}; it can be re-run once it has ended",
            original.status
        )));
    }
    // A member run: its group from that member.
    let (group_run, member) = match original.parent_id {
        Some(parent) => (
            activations::Entity::find_by_id(parent).one(db).await?,
            original.position.and_then(|p| usize::try_from(p).ok()),
        ),
        None => (None, None),
    };
    let group_run = group_run.or_else(|| original.group_id.is_some().then(|| original.clone()));
    if let Some(run) = group_run {
        if how.only_failed_hosts || how.host.is_some() {
            return Err(ServiceError::invalid(
                "",
                "a group is re-run from a member (`from_member`); hosts are chosen by the group",
            ));
        }
        let group = run.group_id.clone().unwrap_or_default();
        let members = member_ids(db, &group).await?;
        let from = match (&how.from_member, member) {
            (Some(m), _) => members.iter().position(|x| x == m).ok_or_else(|| {
                ServiceError::invalid(
                    "from_member",
                    format!(
                        "'{m}' is not a member of schedule group '{group}' (members: {})",
                        members.join(", ")
                    ),
                )
            })?,
            (None, Some(position)) => position,
            (None, None) => first_unsucceeded(db, run.id).await?,
        };
        if from >= members.len() {
            return Err(ServiceError::Conflict(format!(
                "every member of schedule group '{group}' succeeded in activation {}; name \
                 `from_member` to run it again from one",
                run.id
            )));
        }
        return run_group(db, cfg, actor, &group, from, Some(run.id)).await;
    }
    if how.from_member.is_some() {
        return Err(ServiceError::invalid(
            "from_member",
            format!("activation {activation} is not a group's: it has no members"),
        ));
    }
    let ls = original
        .launch_setting_id
        .clone()
        .ok_or_else(|| ServiceError::NotFound(format!("the launch setting of {activation}")))?;
    let only_hosts = if how.only_failed_hosts {
        let failed = failed_hosts(db, &original).await?;
        if failed.is_empty() {
            return Err(ServiceError::Conflict(format!(
                "no host failed in activation {activation}: nothing to re-run there"
            )));
        }
        Some(failed)
    } else {
        how.host.clone().map(|h| vec![h])
    };
    run_alone(
        db,
        cfg,
        actor,
        &ls,
        Alone {
            only_hosts,
            rerun_of: Some(activation),
        },
    )
    .await
}

/// Re-runs an ended activation from where it broke, choosing what an operator would: a group
/// from its first member that did not succeed; a launch setting's run on the hosts that failed
/// when others succeeded (a `MANY` run that broke on some of its hosts), otherwise whole. The
/// bulk re-run uses it for every activation it selected.
pub async fn rerun_where_it_broke(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    actor: &Principal,
    activation: Uuid,
) -> ServiceResult<Uuid> {
    let a = find(db, &activation.to_string()).await?;
    let mut how = Rerun::default();
    if a.group_id.is_none() {
        let round = activation_hosts::Entity::find()
            .filter(activation_hosts::Column::ActivationId.eq(a.id))
            .filter(activation_hosts::Column::FencingToken.eq(a.fencing_token))
            .all(db)
            .await?;
        let some_succeeded = round.iter().any(|h| h.status == status::host::SUCCEEDED);
        how.only_failed_hosts = some_succeeded && !failed_hosts(db, &a).await?.is_empty();
    }
    rerun(db, cfg, actor, &a.id.to_string(), &how).await
}

/// What a re-run of `activation` may start from, for the activation page; `None` while it
/// runs or when `actor` may not re-run.
pub async fn choices(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    actor: &Principal,
    activation: &str,
) -> ServiceResult<Option<RerunChoices>> {
    actor.require(Operation::Read)?;
    let a = find(db, activation).await?;
    if !actor.role.may(Operation::Run) || status::activation::ACTIVE.contains(&a.status.as_str()) {
        return Ok(None);
    }
    let mut out = RerunChoices::default();
    if let Some(group) = &a.group_id {
        out.members = member_ids(db, group).await?;
        out.from = match (a.parent_id, a.position) {
            (Some(_), Some(position)) => usize::try_from(position).ok(),
            _ => Some(first_unsucceeded(db, a.id).await?),
        }
        .filter(|f| *f < out.members.len());
    } else if let Some(ls) = &a.launch_setting_id {
        out.failed_hosts = failed_hosts(db, &a).await?;
        let resolver =
            Resolver::load(db, std::slice::from_ref(ls), Utc::now(), cfg.node_timeout).await?;
        out.pool_hosts = resolver
            .target(ls)
            .map(|t| t.hosts.iter().cloned().collect())
            .unwrap_or_default();
    }
    Ok(Some(out))
}

pub(crate) async fn find(db: &DatabaseConnection, id: &str) -> ServiceResult<activations::Model> {
    let not_found = || ServiceError::NotFound(format!("activation '{id}'"));
    let uuid = Uuid::parse_str(id.trim()).map_err(|_| not_found())?;
    activations::Entity::find_by_id(uuid)
        .one(db)
        .await?
        .ok_or_else(not_found)
}

/// What is special about a run of one launch setting.
#[derive(Debug, Default)]
struct Alone {
    only_hosts: Option<Vec<String>>,
    rerun_of: Option<Uuid>,
}

async fn run_alone(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    actor: &Principal,
    id: &str,
    how: Alone,
) -> ServiceResult<Uuid> {
    let now = Utc::now();
    let what = EntityRef::LaunchSetting(id.to_owned());
    let txn = super::begin_write(db).await?;
    // Locked (on PostgreSQL; SQLite's write transaction already is one writer): two runs of
    // one launch setting check its overlap policy one after the other. The mode of `locks`.
    let row = launch_settings::Entity::find_by_id(id)
        .lock(sea_orm::sea_query::LockType::NoKeyUpdate)
        .one(&txn)
        .await?
        .ok_or_else(|| ServiceError::NotFound(what.to_string()))?;
    if !row.enabled {
        return Err(ServiceError::Conflict(format!(
            "{what} is disabled; enable it before running it"
        )));
    }
    let stream = row.kind == am_domain::catalog::LaunchKind::Stream.as_str();
    if stream {
        let active = activations::Entity::find()
            .filter(activations::Column::LaunchSettingId.eq(id))
            .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
            .one(&txn)
            .await?;
        if let Some(a) = active {
            return Err(ServiceError::Conflict(format!(
                "{what} is a stream and already runs (activation {})",
                a.id
            )));
        }
    }
    let mut resolver = Resolver::load(&txn, &[id.to_owned()], now, cfg.node_timeout).await?;
    let trigger = match (how.rerun_of, stream) {
        (Some(_), _) => Trigger::Rerun,
        (None, true) => Trigger::Stream,
        (None, false) => Trigger::Manual,
    };
    let mut new = NewActivation {
        ls: id.to_owned(),
        trigger,
        requested_by: Some(actor.name.clone()),
        parent: None,
        group: None,
        fire_key: None,
        pinned_host: None,
        only_hosts: how.only_hosts.clone(),
    };
    if let (Some(only), Some(target)) = (&how.only_hosts, resolver.target(id)) {
        // A re-run on chosen hosts goes there now or not at all: waiting would hand it to
        // whichever node comes first.
        let live: Vec<String> = resolver
            .eligible(target)
            .into_iter()
            .map(|n| n.host.clone())
            .filter(|h| only.contains(h))
            .collect();
        if live.is_empty() {
            return Err(ServiceError::Conflict(format!(
                "no live node of {what}'s pool on {} outside its quarantine; choose another host",
                only.join(", ")
            )));
        }
    }
    // Overlap `skip` and `interrupt`, decided here for the whole pool (overlap.rs).
    let busy = Busy::load(&txn, &[id.to_owned()]).await?;
    let target = resolver.target(id);
    let met = target.and_then(|t| busy.meets(t).map(|running| (running.clone(), t.clone())));
    if let Some(running) = target.and_then(|t| busy.interrupts(t)) {
        ending::interrupt(&txn, cfg, id, running, now).await?;
        new.pinned_host = running.node();
    }
    let mut plan = Plan::default();
    let planned = match &met {
        Some((running, target)) => {
            tracing::info!(launch_setting = %id, running = %running.id,
                "run skipped: the launch setting still runs (overlap policy: skip)");
            overlap::plan_skipped(&mut plan, cfg, &new, target, running, now)
        }
        None => {
            plan_activation(&mut plan, &mut resolver, cfg, new, now)
                .map_err(|gone| ServiceError::Conflict(gone.to_string()))?
                .id
        }
    };
    let mut after = serde_json::json!({ "activation": planned.to_string() });
    if let Some((running, _)) = &met {
        after["skipped_for"] = serde_json::json!(running.id.to_string());
    }
    let mut entry = AuditEntry::new(actor, "run", "launch_setting", id);
    if let Some(original) = how.rerun_of {
        link(&mut plan, original, planned, how.only_hosts.as_deref(), now);
        after["rerun_of"] = serde_json::json!(original.to_string());
        after["only_hosts"] = serde_json::json!(how.only_hosts);
        entry = AuditEntry::new(actor, "rerun", "launch_setting", id);
    }
    plan.write(&txn).await?;
    audit::record(&txn, entry.after(&after)).await?;
    txn.commit().await?;
    Ok(planned)
}

async fn run_group(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    actor: &Principal,
    id: &str,
    from: usize,
    rerun_of: Option<Uuid>,
) -> ServiceResult<Uuid> {
    let what = EntityRef::ScheduleGroup(id.to_owned());
    let group = schedule_groups::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or_else(|| ServiceError::NotFound(what.to_string()))?;
    if !group.enabled {
        return Err(ServiceError::Conflict(format!(
            "{what} is disabled; enable it before running it"
        )));
    }
    let now = Utc::now();
    let fired = fires::fire(
        db,
        cfg,
        &[Fire {
            group: id.to_owned(),
            at: now,
            trigger: if rerun_of.is_some() {
                Trigger::Rerun
            } else {
                Trigger::Manual
            },
            fire_key: None,
            requested_by: Some(actor.name.clone()),
            from,
            next: None,
        }],
        now,
        Some(actor),
    )
    .await?;
    let started = fired
        .into_iter()
        .next()
        .and_then(|(_, a)| a)
        .ok_or_else(|| ServiceError::Conflict(format!("{what} could not be started")))?;
    if let Some(original) = rerun_of {
        let members = member_ids(db, id).await?;
        let txn = db.begin().await?;
        let mut plan = Plan::default();
        link(&mut plan, original, started, None, now);
        plan.event(
            started,
            None,
            EventKind::RerunFrom,
            format!(
                "from member {} ({} of {})",
                members.get(from).map(String::as_str).unwrap_or("?"),
                from + 1,
                members.len()
            ),
            now,
        );
        plan.write(&txn).await?;
        audit::record(
            &txn,
            AuditEntry::new(actor, "rerun", "schedule_group", id).after(&serde_json::json!({
                "activation": started.to_string(),
                "rerun_of": original.to_string(),
                "from_member": members.get(from),
            })),
        )
        .await?;
        txn.commit().await?;
    }
    Ok(started)
}

/// Timeline events that tie a re-run to what it re-runs, both ways.
fn link(
    plan: &mut Plan,
    original: Uuid,
    rerun: Uuid,
    hosts: Option<&[String]>,
    now: DateTime<Utc>,
) {
    let on = hosts
        .map(|h| format!(" on {}", h.join(", ")))
        .unwrap_or_default();
    plan.event(
        original,
        None,
        EventKind::Rerun,
        format!("re-run as {rerun}{on}"),
        now,
    );
    plan.event(
        rerun,
        None,
        EventKind::RerunOf,
        format!("re-run of {original}{on}"),
        now,
    );
}

/// The group's members, in order.
async fn member_ids(db: &DatabaseConnection, group: &str) -> ServiceResult<Vec<String>> {
    Ok(schedule_group_members::Entity::find()
        .filter(schedule_group_members::Column::GroupId.eq(group))
        .order_by_asc(schedule_group_members::Column::Position)
        .all(db)
        .await?
        .into_iter()
        .map(|m| m.launch_setting_id)
        .collect())
}

/// The position of the first member of a group run that did not succeed (failed, interrupted,
/// skipped or never started): where a re-run picks up.
async fn first_unsucceeded(db: &DatabaseConnection, group_run: Uuid) -> ServiceResult<usize> {
    let runs = activations::Entity::find()
        .filter(activations::Column::ParentId.eq(group_run))
        .order_by_asc(activations::Column::Position)
        .all(db)
        .await?;
    let mut position = 0;
    for r in runs {
        if r.status != status::activation::SUCCEEDED {
            break;
        }
        position = usize::try_from(r.position.unwrap_or(0)).unwrap_or(0) + 1;
    }
    Ok(position)
}

/// Hosts of an activation's latest dispatch round that failed or were lost.
async fn failed_hosts(
    db: &DatabaseConnection,
    a: &activations::Model,
) -> ServiceResult<Vec<String>> {
    let mut hosts: Vec<String> = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::ActivationId.eq(a.id))
        .filter(activation_hosts::Column::FencingToken.eq(a.fencing_token))
        .filter(activation_hosts::Column::Status.is_in([status::host::FAILED, status::host::LOST]))
        .all(db)
        .await?
        .into_iter()
        .map(|h| h.host)
        .collect();
    hosts.sort();
    hosts.dedup();
    Ok(hosts)
}
