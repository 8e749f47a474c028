//! Schedule group activations after their fire (recorded by `fires.rs`): each member's end starts
//! the next one, in order, on the same node in `ANY` mode, until the last one or the first
//! failure. A member whose launch setting still runs elsewhere under `skip` is recorded skipped
//! and the group goes on with the one after it (`overlap.rs`).

use super::{
    RuntimeConfig,
    activate::{NewActivation, plan_activation},
    locks,
    overlap::{self, Busy},
    plan::Plan,
    resolve::Resolver,
};
use crate::status::{self, Trigger};
use crate::{
    entity::{activation_hosts, activations, schedule_groups},
    error::ServiceResult,
};
use am_domain::status::EventKind;
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, sea_query::Expr,
};
use uuid::Uuid;

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
    let members = super::members::members_of(db, std::slice::from_ref(&group_id))
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
    let mut next = position + 1;
    let mut plan = Plan::default();
    if enabled && (!failed || continue_on_failure) {
        // The node the previous member ran on, so an ANY group stays on one node even when
        // the watchdog moved it.
        let ran_on = activation_hosts::Entity::find()
            .filter(activation_hosts::Column::ActivationId.eq(member.id))
            .order_by_desc(activation_hosts::Column::FencingToken)
            .one(db)
            .await?
            .map(|h| h.host);
        let pinned = ran_on.or(parent.pinned_host.clone());
        while let Some(ls) = members.get(next) {
            locks::launch_settings(db, [ls.clone()]).await?;
            let mut resolver =
                Resolver::load(db, std::slice::from_ref(ls), now, cfg.node_timeout).await?;
            let mut new = NewActivation {
                ls: ls.clone(),
                trigger: Trigger::Group,
                requested_by: parent.requested_by.clone(),
                parent: Some((parent.id, i32::try_from(next).unwrap_or(i32::MAX))),
                group: Some(group_id.clone()),
                fire_key: None,
                pinned_host: pinned.clone(),
                only_hosts: None,
            };
            let busy = Busy::load(db, std::slice::from_ref(ls)).await?;
            if let Some(t) = resolver.target(ls)
                && let Some(running) = busy.meets(t)
            {
                overlap::plan_skipped(&mut plan, cfg, &new, t, running, now);
                next += 1;
                continue;
            }
            if let Some(running) = resolver.target(ls).and_then(|t| busy.interrupts(t)) {
                // Interrupting a waiting member of another group ends it at once: that group
                // goes on first (boxed: it may come back here).
                if let Some(ended) = overlap::interrupt(db, cfg, ls, running, now).await? {
                    Box::pin(member_settled(db, cfg, &ended.member, ended.result, now)).await?;
                }
                new.pinned_host = running.node().or(new.pinned_host);
            }
            return match plan_activation(&mut plan, &mut resolver, cfg, new, now) {
                Ok(_) => plan.write(db).await,
                Err(gone) => {
                    plan.write(db).await?;
                    let reason = Some(gone.to_string());
                    finish_group(db, &parent, status::activation::FAILED, reason, now).await
                }
            };
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
            trace_parent: Set(None),
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
    ev.event(parent.id, None, EventKind::Finished, result, now);
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
    let mut update = schedule_groups::Entity::update_many();
    if result == status::activation::SUCCEEDED {
        update = update.col_expr(
            schedule_groups::Column::LastSuccessAt,
            Expr::value(Some(now)),
        );
    }
    update
        .col_expr(
            schedule_groups::Column::CurrentStatus,
            Expr::cust(format!(
                "CASE WHEN enabled THEN '{}' ELSE '{}' END",
                if still_running {
                    status::group::RUNNING
                } else {
                    status::group::WAITING
                },
                status::group::DISABLED
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
