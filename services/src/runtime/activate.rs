//! Creating activations and dispatching them to nodes; settling them when their hosts are done.

use super::{
    Metrics, RuntimeConfig, groups,
    plan::Plan,
    resolve::{Resolver, Target},
    status::{self, Trigger},
};
use crate::{
    entity::{activation_hosts, activations, launch_settings},
    error::ServiceResult,
};
use am_domain::wire::ToNode;
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect,
    sea_query::Expr,
};
use uuid::Uuid;

/// An activation to create.
#[derive(Debug, Clone)]
pub(crate) struct NewActivation {
    pub ls: String,
    pub trigger: Trigger,
    pub requested_by: Option<String>,
    /// A member run: the group activation and the member's position.
    pub parent: Option<(Uuid, i32)>,
    pub group: Option<String>,
    pub fire_key: Option<String>,
    /// Group runs in `ANY` mode: the node the group runs on.
    pub pinned_host: Option<String>,
    /// A re-run on chosen hosts of the pool (those that failed, or another node).
    pub only_hosts: Option<Vec<String>>,
}

/// What [`plan_activation`] decided.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub id: Uuid,
}

fn ms(d: am_domain::HumanDuration) -> chrono::Duration {
    chrono::Duration::from_std(d.0).unwrap_or(chrono::Duration::MAX)
}

/// Plans the activation row and its dispatch: to the chosen nodes, or `waiting` when no live
/// node of the application runs on the pool's hosts. `Err` when the launch setting is gone.
pub(crate) fn plan_activation(
    plan: &mut Plan,
    resolver: &mut Resolver,
    cfg: &RuntimeConfig,
    new: NewActivation,
    now: DateTime<Utc>,
) -> Result<Planned, String> {
    let Some(mut target) = resolver.target(&new.ls).cloned() else {
        return Err(format!("launch setting '{}' no longer exists", new.ls));
    };
    if let Some(only) = &new.only_hosts {
        target.hosts.retain(|h| only.contains(h));
    }
    let id = Uuid::now_v7();
    let hosts = resolver.choose(&target, new.pinned_host.as_deref(), &[]);
    let waiting = hosts.is_empty();
    plan.activations.push(activations::ActiveModel {
        id: Set(id),
        launch_setting_id: Set(Some(new.ls.clone())),
        group_id: Set(new.group.clone()),
        parent_id: Set(new.parent.map(|p| p.0)),
        position: Set(new.parent.map(|p| p.1)),
        trigger: Set(new.trigger.as_str().to_owned()),
        fire_key: Set(new.fire_key.clone()),
        status: Set(if waiting {
            status::activation::WAITING
        } else {
            status::activation::DISPATCHED
        }
        .to_owned()),
        requested_by: Set(new.requested_by.clone()),
        created_at: Set(now),
        started_at: Set(None),
        finished_at: Set(None),
        error: Set(None),
        application_id: Set(Some(target.ls.application.clone())),
        fencing_token: Set(if waiting { 0 } else { 1 }),
        pinned_host: Set(None),
        wait_until: Set(waiting.then(|| now + cfg.wait_timeout)),
    });
    // The row itself says when and why it was created; the timeline starts with what happened
    // to it (one event per fire keeps a burst of thousands of fires cheap).
    if waiting {
        Metrics::inc(&cfg.metrics.waiting);
        let pool: Vec<&str> = target.hosts.iter().map(String::as_str).collect();
        let quarantined: Vec<&str> = target.quarantined.iter().map(String::as_str).collect();
        plan.event(
            id,
            None,
            "waiting",
            format!(
                "no live node of application '{}' on the pool's hosts [{}]{}",
                target.ls.application,
                pool.join(", "),
                if quarantined.is_empty() {
                    String::new()
                } else {
                    format!(" outside the quarantine [{}]", quarantined.join(", "))
                }
            ),
            now,
        );
    } else {
        dispatch_hosts(plan, cfg, &target, id, &hosts, 1, 1, now, "dispatched");
    }
    Ok(Planned { id })
}

/// Host rows, launch commands and timeline events of one dispatch round.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site shape per dispatch reason"
)]
pub(crate) fn dispatch_hosts(
    plan: &mut Plan,
    cfg: &RuntimeConfig,
    target: &Target,
    activation: Uuid,
    hosts: &[String],
    token: i64,
    attempt: i32,
    now: DateTime<Utc>,
    why: &str,
) {
    let launch = ToNode::Launch(target.launch(activation, token));
    let deadline = now + ms(target.ls.recovery.start_timeout);
    for host in hosts {
        plan.hosts.push(activation_hosts::ActiveModel {
            activation_id: Set(activation),
            host: Set(host.clone()),
            application_id: Set(target.ls.application.clone()),
            fencing_token: Set(token),
            status: Set(status::host::DISPATCHED.to_owned()),
            attempt: Set(attempt),
            dispatched_at: Set(now),
            accepted_at: Set(None),
            started_at: Set(None),
            last_heartbeat_at: Set(None),
            finished_at: Set(None),
            recovery_deadline: Set(Some(deadline)),
            processed: Set(0),
            failed: Set(0),
            retried: Set(0),
            dead_lettered: Set(0),
            error: Set(None),
            stop_requested_at: Set(None),
            ..Default::default()
        });
        plan.command(
            &cfg.names,
            &target.ls.application,
            host,
            &launch,
            format!("launch:{activation}:{host}:{token}"),
            now,
        );
        plan.event(
            activation,
            Some(host),
            why,
            format!("fencing token {token}"),
            now,
        );
        Metrics::inc(&cfg.metrics.launches);
    }
}

/// The attempt number of the next dispatch round of an activation (unique per host row).
pub(crate) async fn next_attempt(
    db: &impl ConnectionTrait,
    activation: Uuid,
) -> ServiceResult<i32> {
    let max: Option<Option<i32>> = activation_hosts::Entity::find()
        .select_only()
        .column_as(activation_hosts::Column::Attempt.max(), "m")
        .filter(activation_hosts::Column::ActivationId.eq(activation))
        .into_tuple()
        .one(db)
        .await?;
    Ok(max.flatten().unwrap_or(0) + 1)
}

/// The result of an activation whose hosts are all done, from its latest dispatch round;
/// `None` while a host still runs.
pub(crate) fn result_of(hosts: &[activation_hosts::Model], token: i64) -> Option<&'static str> {
    use status::host as h;
    let current: Vec<&activation_hosts::Model> =
        hosts.iter().filter(|r| r.fencing_token == token).collect();
    if current
        .iter()
        .any(|r| h::ACTIVE.contains(&r.status.as_str()))
    {
        return None;
    }
    let any = |s: &str| current.iter().any(|r| r.status == s);
    Some(if any(h::FAILED) || any(h::LOST) {
        status::activation::FAILED
    } else if any(h::INTERRUPTED) {
        status::activation::INTERRUPTED
    } else if !current.is_empty() && current.iter().all(|r| r.status == h::SKIPPED) {
        status::activation::SKIPPED
    } else if current.is_empty() {
        status::activation::FAILED
    } else {
        status::activation::SUCCEEDED
    })
}

/// Ends the activation if all its hosts are done: compare-and-set from an active state, then
/// the launch setting's status and, for a member run, the group's next step. Returns the
/// result it recorded.
pub(crate) async fn settle(
    db: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    activation: Uuid,
    error: Option<String>,
    now: DateTime<Utc>,
) -> ServiceResult<Option<&'static str>> {
    let Some(a) = activations::Entity::find_by_id(activation).one(db).await? else {
        return Ok(None);
    };
    if !status::activation::ACTIVE.contains(&a.status.as_str())
        || a.parent_id.is_none() && a.group_id.is_some()
    {
        // Done already, or a group activation (settled by its members).
        return Ok(None);
    }
    let hosts = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::ActivationId.eq(activation))
        .all(db)
        .await?;
    let Some(result) = result_of(&hosts, a.fencing_token) else {
        return Ok(None);
    };
    let error = error.or_else(|| {
        hosts
            .iter()
            .filter(|h| h.fencing_token == a.fencing_token)
            .find_map(|h| h.error.clone())
    });
    finish(db, cfg, &a, result, error, now).await?;
    Ok(Some(result))
}

/// Records the end of a (non-group) activation with compare-and-set and moves what follows.
pub(crate) async fn finish(
    db: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    a: &activations::Model,
    result: &'static str,
    error: Option<String>,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    let done = activations::Entity::update_many()
        .col_expr(activations::Column::Status, Expr::value(result))
        .col_expr(activations::Column::FinishedAt, Expr::value(Some(now)))
        .col_expr(activations::Column::Error, Expr::value(error.clone()))
        .col_expr(
            activations::Column::WaitUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .filter(activations::Column::Id.eq(a.id))
        .filter(activations::Column::Status.eq(a.status.as_str()))
        .exec(db)
        .await?;
    if done.rows_affected == 0 {
        return Ok(false);
    }
    let mut ev = Plan::default();
    ev.event(
        a.id,
        None,
        "finished",
        match &error {
            Some(e) => format!("{result}: {e}"),
            None => result.to_owned(),
        },
        now,
    );
    ev.write(db).await?;
    if let Some(ls) = &a.launch_setting_id {
        ls_finished(db, ls, a.id, result, now).await?;
    }
    if a.parent_id.is_some() {
        groups::member_settled(db, cfg, a, result, now).await?;
    }
    Ok(true)
}

/// A launch setting's status after one of its activations ended.
async fn ls_finished(
    db: &impl ConnectionTrait,
    ls: &str,
    activation: Uuid,
    result: &str,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let still_running = activations::Entity::find()
        .filter(activations::Column::LaunchSettingId.eq(ls))
        .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
        .one(db)
        .await?
        .is_some();
    let mut update = launch_settings::Entity::update_many()
        .filter(launch_settings::Column::Id.eq(ls))
        .col_expr(
            launch_settings::Column::CurrentStatus,
            Expr::cust(format!(
                "CASE WHEN enabled THEN '{}' ELSE 'disabled' END",
                if still_running { "running" } else { "waiting" }
            )),
        );
    if result != status::activation::SKIPPED {
        update = update
            .col_expr(
                launch_settings::Column::LastResult,
                Expr::value(Some(result)),
            )
            .col_expr(
                launch_settings::Column::LastResultAt,
                Expr::value(Some(now)),
            )
            .col_expr(
                launch_settings::Column::LastActivationId,
                Expr::value(Some(activation)),
            );
    }
    update.exec(db).await?;
    Ok(())
}

/// A launch setting runs: its current status says so (unless it was disabled meanwhile).
pub(crate) async fn ls_running(db: &impl ConnectionTrait, ls: &str) -> ServiceResult<()> {
    launch_settings::Entity::update_many()
        .col_expr(
            launch_settings::Column::CurrentStatus,
            Expr::value("running"),
        )
        .filter(launch_settings::Column::Id.eq(ls))
        .filter(launch_settings::Column::Enabled.eq(true))
        .exec(db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(token: i64, status: &str) -> activation_hosts::Model {
        activation_hosts::Model {
            id: 0,
            activation_id: Uuid::nil(),
            host: "h".into(),
            application_id: "a".into(),
            fencing_token: token,
            status: status.into(),
            attempt: 1,
            dispatched_at: Utc::now(),
            accepted_at: None,
            started_at: None,
            last_heartbeat_at: None,
            finished_at: None,
            recovery_deadline: None,
            processed: 0,
            failed: 0,
            retried: 0,
            dead_lettered: 0,
            error: None,
            stop_requested_at: None,
        }
    }

    #[test]
    fn results_come_from_the_latest_round_only() {
        use status::host as h;
        let hosts = [host(1, h::SUPERSEDED), host(2, h::SUCCEEDED)];
        assert_eq!(result_of(&hosts, 2), Some("succeeded"));
        let hosts = [host(1, h::SUCCEEDED), host(1, h::RUNNING)];
        assert_eq!(result_of(&hosts, 1), None);
        let hosts = [host(1, h::SUCCEEDED), host(1, h::LOST)];
        assert_eq!(result_of(&hosts, 1), Some("failed"));
        let hosts = [host(1, h::SUCCEEDED), host(1, h::INTERRUPTED)];
        assert_eq!(result_of(&hosts, 1), Some("interrupted"));
        let hosts = [host(1, h::SKIPPED), host(1, h::SKIPPED)];
        assert_eq!(result_of(&hosts, 1), Some("skipped"));
        let hosts = [host(1, h::SKIPPED), host(1, h::SUCCEEDED)];
        assert_eq!(result_of(&hosts, 1), Some("succeeded"));
    }
}
