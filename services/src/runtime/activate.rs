//! Creating activations and dispatching them to nodes: the building blocks that *run now*, re-runs,
//! groups, the scheduler and the watchdog share. Ending them is in `settle.rs`.

use super::{
    Metrics, RuntimeConfig,
    plan::Plan,
    resolve::{Resolver, Target},
};
use crate::status::{self, Trigger};
use crate::{
    entity::{activation_hosts, activations},
    error::ServiceResult,
};
use am_domain::status::{EventKind, EventLabel};
use am_domain::wire::ToNode;
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect,
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
    /// The hosts it was dispatched to; empty while it waits for a node.
    pub hosts: Vec<String>,
}

fn ms(d: am_domain::HumanDuration) -> chrono::Duration {
    chrono::Duration::from_std(d.0).unwrap_or(chrono::Duration::MAX)
}

/// The launch setting to activate is no longer in the catalog.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("launch setting '{0}' no longer exists")]
pub(crate) struct Gone(pub String);

/// Plans the activation row and its dispatch: to the chosen nodes, or `waiting` when no live
/// node of the application runs on the pool's hosts. `Err` when the launch setting is gone.
pub(crate) fn plan_activation(
    plan: &mut Plan,
    resolver: &mut Resolver,
    cfg: &RuntimeConfig,
    new: NewActivation,
    now: DateTime<Utc>,
) -> Result<Planned, Gone> {
    let Some(mut target) = resolver.target(&new.ls).cloned() else {
        return Err(Gone(new.ls));
    };
    if let Some(only) = &new.only_hosts {
        target.hosts.retain(|h| only.contains(h));
    }
    let id = Uuid::now_v7();
    let hosts = resolver.choose(&target, new.pinned_host.as_deref(), &[]);
    let waiting = hosts.is_empty();
    plan.activations.push(activations::ActiveModel {
        status: Set(if waiting {
            status::activation::WAITING
        } else {
            status::activation::DISPATCHED
        }
        .to_owned()),
        fencing_token: Set(if waiting { 0 } else { 1 }),
        wait_until: Set(waiting.then(|| now + cfg.wait_timeout)),
        ..activation_row(id, &new, &target.ls.application, now)
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
            EventKind::Waiting,
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
        dispatch_hosts(
            plan,
            cfg,
            &target,
            id,
            &hosts,
            1,
            1,
            now,
            EventKind::Dispatched,
            None,
        );
    }
    Ok(Planned { id, hosts })
}

/// The row of a new activation as `new` asks for it, not started nor finished; the caller sets
/// its status, fencing token and wait deadline.
pub(crate) fn activation_row(
    id: Uuid,
    new: &NewActivation,
    application: &str,
    now: DateTime<Utc>,
) -> activations::ActiveModel {
    activations::ActiveModel {
        id: Set(id),
        launch_setting_id: Set(Some(new.ls.clone())),
        group_id: Set(new.group.clone()),
        parent_id: Set(new.parent.map(|p| p.0)),
        position: Set(new.parent.map(|p| p.1)),
        trigger: Set(new.trigger.as_str().to_owned()),
        fire_key: Set(new.fire_key.clone()),
        status: Set(status::activation::WAITING.to_owned()),
        requested_by: Set(new.requested_by.clone()),
        created_at: Set(now),
        started_at: Set(None),
        finished_at: Set(None),
        error: Set(None),
        application_id: Set(Some(application.to_owned())),
        fencing_token: Set(0),
        pinned_host: Set(None),
        wait_until: Set(None),
        // The fire, Run now or stream start creating it: later dispatches link to it.
        trace_parent: Set(crate::trace_context::current_traceparent()),
    }
}

/// Host rows, launch commands and timeline events of one dispatch round; `began` is the
/// `traceparent` the activation was created under, for a dispatch after the first.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site shape per dispatch reason"
)]
pub(crate) fn dispatch_hosts<'a>(
    plan: &mut Plan,
    cfg: &RuntimeConfig,
    target: &Target,
    activation: Uuid,
    hosts: &[String],
    token: i64,
    attempt: i32,
    now: DateTime<Utc>,
    why: impl Into<EventLabel<'a>>,
    began: Option<&str>,
) {
    let why = why.into();
    // The launches' span: a child of the fire, Run now or recovery that dispatches them, the
    // parent of the relay's publication and so of the node's run. A later dispatch (the run
    // waited, or moves to another node) links to the span the activation began in (`began`).
    let span = tracing::info_span!("dispatch", %activation, launch_setting = %target.ls.id,
        agent = %target.ls.agent, token, attempt, reason = %why);
    if let Some(traceparent) = began {
        crate::trace_context::link(&span, traceparent);
    }
    let _enter = span.enter();
    let launch = ToNode::Launch(target.launch(activation, token));
    let consumes = target.consumed_queue(&cfg.names);
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
            consumes: Set(consumes.clone()),
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
