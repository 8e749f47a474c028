//! Schedule group activations: a fire records the group activation (unique per group and fire
//! time) and starts its first member; each member's end starts the next one, in order, on the
//! same node in `ANY` mode, until the last one or the first failure.

use super::{
    Metrics, RuntimeConfig,
    activate::{NewActivation, plan_activation},
    plan::Plan,
    resolve::Resolver,
    status::{self, Trigger},
};
use crate::{
    Principal,
    audit::{self, AuditEntry},
    entity::{activation_hosts, activations, schedule_group_members, schedule_groups},
    error::ServiceResult,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait,
    QueryFilter, QueryOrder, QuerySelect, sea_query::Expr,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use uuid::Uuid;

/// One fire of a group.
#[derive(Debug, Clone)]
pub struct Fire {
    pub group: String,
    /// The fire time (the cron's, not the moment it was noticed).
    pub at: DateTime<Utc>,
    pub trigger: Trigger,
    /// `Some` for cron fires: `group:<id>:<fire time>`, unique across replicas.
    pub fire_key: Option<String>,
    pub requested_by: Option<String>,
    /// The member position to start from: 0 but for a re-run from a later member.
    pub from: usize,
    /// A cron fire: the group's next fire time after this one, stored in the fire's own
    /// transaction (one statement with its status, no separate commit after a burst).
    pub next: Option<DateTime<Utc>>,
}

impl Fire {
    /// A cron fire of `group` at `at` (or a late one per the misfire policy).
    pub fn scheduled(group: &str, at: DateTime<Utc>, trigger: Trigger) -> Self {
        Self {
            group: group.to_owned(),
            at,
            trigger,
            fire_key: Some(fire_key(group, at)),
            requested_by: None,
            from: 0,
            next: None,
        }
    }
}

/// The unique key of a cron fire.
pub fn fire_key(group: &str, at: DateTime<Utc>) -> String {
    format!("group:{group}:{}", at.format("%Y-%m-%dT%H:%M:%SZ"))
}

/// Members of groups, in order.
async fn members_of(
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

/// Records the fires in one transaction and starts each group's first member. A fire whose key
/// is already recorded (another replica fired it) is left out. Returns each fire's group
/// activation, `None` when it was a duplicate or the group is gone or disabled.
pub async fn fire(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    fires: &[Fire],
    now: DateTime<Utc>,
    actor: Option<&Principal>,
) -> ServiceResult<Vec<(String, Option<Uuid>)>> {
    let txn = super::begin_write(db).await?;
    let ids: Vec<String> = fires.iter().map(|f| f.group.clone()).collect();
    let mut groups: HashMap<String, schedule_groups::Model> = HashMap::new();
    for chunk in ids.chunks(super::CHUNK) {
        for g in schedule_groups::Entity::find()
            .filter(schedule_groups::Column::Id.is_in(chunk.iter().cloned()))
            .all(&txn)
            .await?
        {
            groups.insert(g.id.clone(), g);
        }
    }
    let members = members_of(&txn, &ids).await?;
    let firsts: Vec<String> = fires
        .iter()
        .filter_map(|f| members.get(&f.group).and_then(|m| m.get(f.from)).cloned())
        .collect();
    let mut resolver = Resolver::load(&txn, &firsts, now, cfg.node_timeout).await?;

    // Group activations first, without their members, so duplicates drop out.
    let mut parents = Vec::new();
    let mut chosen: HashMap<Uuid, (usize, Option<String>)> = HashMap::new();
    for (i, f) in fires.iter().enumerate() {
        let Some(g) = groups.get(&f.group).filter(|g| g.enabled) else {
            continue;
        };
        let id = Uuid::now_v7();
        let first = members.get(&f.group).and_then(|m| m.get(f.from));
        // In ANY mode the group runs on one node: choose it now.
        let pinned = first
            .and_then(|ls| resolver.target(ls).cloned())
            .filter(|t| t.concurrency() == am_domain::catalog::Concurrency::Any)
            .and_then(|t| resolver.choose(&t, None, &[]).into_iter().next());
        chosen.insert(id, (i, pinned.clone()));
        parents.push(activations::ActiveModel {
            id: Set(id),
            launch_setting_id: Set(None),
            group_id: Set(Some(g.id.clone())),
            parent_id: Set(None),
            position: Set(None),
            trigger: Set(f.trigger.as_str().to_owned()),
            fire_key: Set(f.fire_key.clone()),
            status: Set(status::activation::RUNNING.to_owned()),
            requested_by: Set(f.requested_by.clone()),
            created_at: Set(now),
            started_at: Set(Some(now)),
            finished_at: Set(None),
            error: Set(None),
            application_id: Set(Some(g.application_id.clone())),
            fencing_token: Set(0),
            pinned_host: Set(pinned),
            wait_until: Set(None),
        });
    }
    let planned_ids: Vec<Uuid> = parents
        .iter()
        .filter_map(|p| match &p.id {
            Set(id) => Some(*id),
            _ => None,
        })
        .collect();
    let mut rows = parents.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<_> = rows.by_ref().take(super::CHUNK).collect();
        activations::Entity::insert_many(chunk)
            .on_conflict_do_nothing_on([activations::Column::FireKey])
            .exec_without_returning(&txn)
            .await?;
    }
    let mut inserted: HashSet<Uuid> = HashSet::new();
    for chunk in planned_ids.chunks(super::CHUNK) {
        let found: Vec<Uuid> = activations::Entity::find()
            .select_only()
            .column(activations::Column::Id)
            .filter(activations::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(&txn)
            .await?;
        inserted.extend(found);
    }
    Metrics::add(
        &cfg.metrics.duplicate_fires,
        (planned_ids.len() - inserted.len()) as u64,
    );

    let mut plan = Plan::default();
    let mut out: Vec<(String, Option<Uuid>)> =
        fires.iter().map(|f| (f.group.clone(), None)).collect();
    let mut empty_groups = Vec::new();
    let mut fired_at: BTreeMap<DateTime<Utc>, Vec<String>> = BTreeMap::new();
    for id in &planned_ids {
        if !inserted.contains(id) {
            continue;
        }
        let Some((i, pinned)) = chosen.get(id) else {
            continue;
        };
        let f = &fires[*i];
        out[*i].1 = Some(*id);
        if f.fire_key.is_some() {
            fired_at.entry(f.at).or_default().push(f.group.clone());
        }
        // The group activation's trigger and fire key record the fire; no timeline event, so a
        // burst of fires writes one event per fire (the member's dispatch).
        match members.get(&f.group).and_then(|m| m.get(f.from)) {
            Some(first) => {
                let new = NewActivation {
                    ls: first.clone(),
                    trigger: Trigger::Group,
                    requested_by: f.requested_by.clone(),
                    parent: Some((*id, i32::try_from(f.from).unwrap_or(i32::MAX))),
                    group: Some(f.group.clone()),
                    fire_key: None,
                    pinned_host: pinned.clone(),
                    only_hosts: None,
                };
                // A pinned node was counted when chosen; the member dispatch counts it again,
                // which only makes the batch spread a little wider.
                if let Err(reason) = plan_activation(&mut plan, &mut resolver, cfg, new, now) {
                    empty_groups.push((*id, reason));
                }
            }
            None => empty_groups.push((*id, String::new())),
        }
    }
    Metrics::add(
        &cfg.metrics.fires,
        out.iter().filter(|o| o.1.is_some()).count() as u64,
    );
    plan.write(&txn).await?;

    // The started groups run now, and a cron fire's group gets its next fire time: grouped by
    // that time, so a burst of one cron is a statement per chunk.
    let mut started: BTreeMap<Option<DateTime<Utc>>, Vec<String>> = BTreeMap::new();
    for (f, o) in fires.iter().zip(&out) {
        if o.1.is_some() {
            started.entry(f.next).or_default().push(f.group.clone());
        }
    }
    for (next, ids) in started {
        for chunk in ids.chunks(super::CHUNK) {
            let mut update = schedule_groups::Entity::update_many().col_expr(
                schedule_groups::Column::CurrentStatus,
                Expr::value("running"),
            );
            if let Some(next) = next {
                update =
                    update.col_expr(schedule_groups::Column::NextFireAt, Expr::value(Some(next)));
            }
            update
                .filter(schedule_groups::Column::Id.is_in(chunk.iter().cloned()))
                .filter(schedule_groups::Column::Enabled.eq(true))
                .exec(&txn)
                .await?;
        }
    }
    for (at, ids) in fired_at {
        for chunk in ids.chunks(super::CHUNK) {
            schedule_groups::Entity::update_many()
                .col_expr(schedule_groups::Column::LastFireAt, Expr::value(Some(at)))
                .filter(schedule_groups::Column::Id.is_in(chunk.iter().cloned()))
                .filter(
                    Condition::any()
                        .add(schedule_groups::Column::LastFireAt.is_null())
                        .add(schedule_groups::Column::LastFireAt.lt(at)),
                )
                .exec(&txn)
                .await?;
        }
    }
    // A group without (resolvable) members ends at once.
    for (id, reason) in empty_groups {
        if let Some(parent) = activations::Entity::find_by_id(id).one(&txn).await? {
            let (result, error) = if reason.is_empty() {
                (status::activation::SUCCEEDED, None)
            } else {
                (status::activation::FAILED, Some(reason))
            };
            finish_group(&txn, &parent, result, error, now).await?;
        }
    }
    if let Some(actor) = actor {
        for (group, activation) in out.iter().filter(|o| o.1.is_some()) {
            audit::record(
                &txn,
                AuditEntry::new(actor, "run", "schedule_group", group)
                    .after(&serde_json::json!({ "activation": activation.map(|a| a.to_string()) })),
            )
            .await?;
        }
    }
    txn.commit().await?;
    Ok(out)
}

/// A member run ended: start the next member, or end the group (first failure, unless the
/// group continues on failure; a disabled group runs no further member).
pub(crate) async fn member_settled(
    db: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    member: &activations::Model,
    result: &'static str,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let Some(parent_id) = member.parent_id else {
        return Ok(());
    };
    let Some(parent) = activations::Entity::find_by_id(parent_id).one(db).await? else {
        return Ok(());
    };
    if parent.status != status::activation::RUNNING {
        return Ok(());
    }
    let Some(group_id) = parent.group_id.clone() else {
        return Ok(());
    };
    let group = schedule_groups::Entity::find_by_id(group_id.clone())
        .one(db)
        .await?;
    let members = members_of(db, std::slice::from_ref(&group_id))
        .await?
        .remove(&group_id)
        .unwrap_or_default();
    let position = usize::try_from(member.position.unwrap_or(0)).unwrap_or(0);
    let failed = matches!(
        result,
        status::activation::FAILED | status::activation::INTERRUPTED
    );
    let continue_on_failure = group.as_ref().is_some_and(|g| g.continue_on_failure);
    let enabled = group.as_ref().is_some_and(|g| g.enabled);
    let next = position + 1;
    let mut plan = Plan::default();
    if next < members.len() && enabled && (!failed || continue_on_failure) {
        // The node the previous member ran on, so an ANY group stays on one node even when
        // the watchdog moved it.
        let ran_on = activation_hosts::Entity::find()
            .filter(activation_hosts::Column::ActivationId.eq(member.id))
            .order_by_desc(activation_hosts::Column::FencingToken)
            .one(db)
            .await?
            .map(|h| h.host);
        let pinned = ran_on.or(parent.pinned_host.clone());
        let mut resolver = Resolver::load(
            db,
            std::slice::from_ref(&members[next]),
            now,
            cfg.node_timeout,
        )
        .await?;
        let new = NewActivation {
            ls: members[next].clone(),
            trigger: Trigger::Group,
            requested_by: parent.requested_by.clone(),
            parent: Some((parent.id, i32::try_from(next).unwrap_or(i32::MAX))),
            group: Some(group_id),
            fire_key: None,
            pinned_host: pinned,
            only_hosts: None,
        };
        match plan_activation(&mut plan, &mut resolver, cfg, new, now) {
            Ok(_) => return plan.write(db).await,
            Err(reason) => {
                plan.write(db).await?;
                return finish_group(db, &parent, status::activation::FAILED, Some(reason), now)
                    .await;
            }
        }
    }
    // The group ends here: remaining members are recorded as skipped.
    let reason = if !enabled {
        "the group was disabled".to_owned()
    } else {
        format!(
            "member {} ended {result}",
            member.launch_setting_id.as_deref().unwrap_or("?")
        )
    };
    for (i, ls) in members.iter().enumerate().skip(next) {
        let id = Uuid::now_v7();
        plan.activations.push(activations::ActiveModel {
            id: Set(id),
            launch_setting_id: Set(Some(ls.clone())),
            group_id: Set(parent.group_id.clone()),
            parent_id: Set(Some(parent.id)),
            position: Set(Some(i32::try_from(i).unwrap_or(i32::MAX))),
            trigger: Set(Trigger::Group.as_str().to_owned()),
            fire_key: Set(None),
            status: Set(status::activation::SKIPPED.to_owned()),
            requested_by: Set(parent.requested_by.clone()),
            created_at: Set(now),
            started_at: Set(None),
            finished_at: Set(Some(now)),
            error: Set(Some(format!("skipped: {reason}"))),
            application_id: Set(parent.application_id.clone()),
            fencing_token: Set(0),
            pinned_host: Set(None),
            wait_until: Set(None),
        });
    }
    plan.write(db).await?;
    // The group's result: the failure that stopped it, or the worst member result.
    let results: Vec<String> = activations::Entity::find()
        .select_only()
        .column(activations::Column::Status)
        .filter(activations::Column::ParentId.eq(parent.id))
        .into_tuple()
        .all(db)
        .await?;
    let group_result = if results.iter().any(|s| s == status::activation::FAILED) {
        status::activation::FAILED
    } else if results.iter().any(|s| s == status::activation::INTERRUPTED) {
        status::activation::INTERRUPTED
    } else {
        status::activation::SUCCEEDED
    };
    let error = failed.then_some(reason);
    finish_group(db, &parent, group_result, error, now).await
}

/// Ends a group activation (compare-and-set from `running`) and updates the group's status.
pub(crate) async fn finish_group(
    db: &impl ConnectionTrait,
    parent: &activations::Model,
    result: &'static str,
    error: Option<String>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let done = activations::Entity::update_many()
        .col_expr(activations::Column::Status, Expr::value(result))
        .col_expr(activations::Column::FinishedAt, Expr::value(Some(now)))
        .col_expr(activations::Column::Error, Expr::value(error))
        .filter(activations::Column::Id.eq(parent.id))
        .filter(activations::Column::Status.eq(status::activation::RUNNING))
        .exec(db)
        .await?;
    if done.rows_affected == 0 {
        return Ok(());
    }
    let mut ev = Plan::default();
    ev.event(parent.id, None, "finished", result, now);
    ev.write(db).await?;
    let Some(group) = &parent.group_id else {
        return Ok(());
    };
    let still_running = activations::Entity::find()
        .filter(activations::Column::GroupId.eq(group.as_str()))
        .filter(activations::Column::ParentId.is_null())
        .filter(activations::Column::Status.eq(status::activation::RUNNING))
        .one(db)
        .await?
        .is_some();
    schedule_groups::Entity::update_many()
        .col_expr(
            schedule_groups::Column::CurrentStatus,
            Expr::cust(format!(
                "CASE WHEN enabled THEN '{}' ELSE 'disabled' END",
                if still_running { "running" } else { "waiting" }
            )),
        )
        .col_expr(
            schedule_groups::Column::LastResult,
            Expr::value(Some(result)),
        )
        .col_expr(
            schedule_groups::Column::LastResultAt,
            Expr::value(Some(now)),
        )
        .filter(schedule_groups::Column::Id.eq(group.as_str()))
        .exec(db)
        .await?;
    Ok(())
}
