//! The runtime's database transitions, without a broker: fires, dispatch, reports with fencing
//! tokens, group sequencing and the watchdog, on both backends. The end-to-end behaviour with
//! RabbitMQ and real nodes is tested in the server's `runtime` test binary.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::{
    roles::Role,
    usage::EntityRef,
    wire::{
        ActivationEvent, ActivationId, ActivationReport, ActivationResult, Counters, Heartbeat,
        RunningLaunchSetting, ToManager,
    },
};
use am_services::status::Trigger;
use am_services::{
    ServiceError, catalog,
    entity::{activation_hosts, activations, launch_settings, outbox, schedule_groups},
    registry,
    runtime::{
        RuntimeConfig,
        fires::{self, Fire},
        reports,
        run::run_now,
        watchdog::{self, Listening},
    },
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
};
use std::sync::atomic::Ordering;
use uuid::Uuid;

on_both_backends!(
    a_fire_is_recorded_once_per_group_and_fire_time,
    reports_move_activations_by_compare_and_set_and_stale_tokens_are_ignored,
    without_a_live_node_an_activation_waits_then_goes_to_the_first_one,
    a_group_runs_its_members_in_order_on_one_node_and_stops_at_the_first_failure,
    run_now_refuses_disabled_launch_settings_and_viewers,
    an_unaccepted_launch_moves_to_another_node_with_a_new_token,
    a_waiting_activation_fails_when_no_node_appears_in_time,
    a_run_past_its_maximum_run_time_is_interrupted_once,
    silence_is_judged_only_by_a_replica_that_listened_a_whole_node_timeout,
);

pub(crate) async fn setup(db: &DatabaseConnection) -> RuntimeConfig {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
    RuntimeConfig::new("t")
}

pub(crate) fn heartbeat(host: &str, now: DateTime<Utc>) -> Heartbeat {
    Heartbeat {
        application: "demo".into(),
        host: host.into(),
        capacity: 4,
        running: vec![],
        load: Some(0.0),
        dropped_reports: 0,
        quarantined: 0,
        at: now,
    }
}

pub(crate) async fn node_up(db: &DatabaseConnection, host: &str, now: DateTime<Utc>) {
    registry::record_heartbeat(db, &heartbeat(host, now), now)
        .await
        .expect("heartbeat");
}

pub(crate) fn report(
    host: &str,
    activation: Uuid,
    ls: &str,
    token: u64,
    event: ActivationEvent,
) -> ToManager {
    ToManager::Activation(ActivationReport {
        application: "demo".into(),
        host: host.into(),
        activation_id: ActivationId(activation.to_string()),
        launch_setting: ls.into(),
        fencing_token: token,
        event,
        at: Utc::now(),
    })
}

/// Applies reports as the consumer does; the batch must commit.
pub(crate) async fn apply(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    batch: &[ToManager],
    now: DateTime<Utc>,
) -> reports::Outcome {
    reports::apply(db, cfg, batch, now).await.expect("applies")
}

pub(crate) fn finished(result: ActivationResult) -> ActivationEvent {
    ActivationEvent::Finished {
        result,
        error: None,
        counters: None,
    }
}

pub(crate) async fn hosts_of(
    db: &DatabaseConnection,
    activation: Uuid,
) -> Vec<activation_hosts::Model> {
    activation_hosts::Entity::find()
        .filter(activation_hosts::Column::ActivationId.eq(activation))
        .order_by_asc(activation_hosts::Column::Id)
        .all(db)
        .await
        .expect("hosts")
}

pub(crate) async fn activation(db: &DatabaseConnection, id: Uuid) -> activations::Model {
    activations::Entity::find_by_id(id)
        .one(db)
        .await
        .expect("query")
        .expect("activation")
}

async fn member(
    db: &DatabaseConnection,
    parent: Uuid,
    position: i32,
) -> Option<activations::Model> {
    activations::Entity::find()
        .filter(activations::Column::ParentId.eq(parent))
        .filter(activations::Column::Position.eq(position))
        .one(db)
        .await
        .expect("query")
}

async fn a_fire_is_recorded_once_per_group_and_fire_time(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    let at = DateTime::parse_from_rfc3339("2030-01-01T02:30:00Z")
        .expect("time")
        .with_timezone(&Utc);
    let fire = Fire::scheduled("demo.nightly", at, Trigger::Schedule);
    let first = fires::fire(db, &cfg, std::slice::from_ref(&fire), now, None)
        .await
        .expect("fires");
    let second = fires::fire(db, &cfg, &[fire], now, None)
        .await
        .expect("fires again");
    assert!(first[0].1.is_some());
    assert_eq!(second[0].1, None, "the same fire key is recorded once");
    assert_eq!(cfg.metrics.duplicate_fires.load(Ordering::Relaxed), 1);
    let parents = activations::Entity::find()
        .filter(activations::Column::GroupId.eq("demo.nightly"))
        .filter(activations::Column::ParentId.is_null())
        .count(db)
        .await
        .expect("count");
    assert_eq!(parents, 1);
    let group = schedule_groups::Entity::find_by_id("demo.nightly".to_owned())
        .one(db)
        .await
        .expect("q")
        .expect("group");
    assert_eq!(group.last_fire_at, Some(at));
    // The first member went out as a launch command to the only live node.
    let sent = outbox::Entity::find().all(db).await.expect("outbox");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].routing_key, "node.demo.demo-a");
}

async fn reports_move_activations_by_compare_and_set_and_stale_tokens_are_ignored(
    db: &DatabaseConnection,
) {
    let cfg = setup(db).await;
    let now = Utc::now();
    node_up(db, "demo-b", now).await;
    let ls = "demo.sleep.nightly";
    let id = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting(ls.into()),
    )
    .await
    .expect("runs");
    assert_eq!(activation(db, id).await.status, "dispatched");
    let out = apply(
        db,
        &cfg,
        &[
            report("demo-b", id, ls, 1, ActivationEvent::Accepted),
            report("demo-b", id, ls, 1, ActivationEvent::Started),
        ],
        Utc::now(),
    )
    .await;
    assert_eq!(out.applied, 2);
    assert_eq!(activation(db, id).await.status, "running");
    let row = launch_settings::Entity::find_by_id(ls.to_owned())
        .one(db)
        .await
        .expect("q")
        .expect("ls");
    assert_eq!(row.current_status, "running");
    // A report from an older dispatch round is ignored and counted.
    let out = apply(
        db,
        &cfg,
        &[report(
            "demo-b",
            id,
            ls,
            0,
            finished(ActivationResult::Failed),
        )],
        Utc::now(),
    )
    .await;
    assert_eq!(out.stale, 1);
    assert_eq!(cfg.metrics.stale_reports.load(Ordering::Relaxed), 1);
    assert_eq!(activation(db, id).await.status, "running");
    let out = apply(
        db,
        &cfg,
        &[report(
            "demo-b",
            id,
            ls,
            1,
            finished(ActivationResult::Succeeded),
        )],
        Utc::now(),
    )
    .await;
    assert_eq!(out.applied, 1);
    assert_eq!(activation(db, id).await.status, "succeeded");
    let row = launch_settings::Entity::find_by_id(ls.to_owned())
        .one(db)
        .await
        .expect("q")
        .expect("ls");
    assert_eq!(
        (row.current_status.as_str(), row.last_result.as_deref()),
        ("waiting", Some("succeeded"))
    );
    // At least once: the same report again changes nothing.
    let out = apply(
        db,
        &cfg,
        &[report(
            "demo-b",
            id,
            ls,
            1,
            finished(ActivationResult::Failed),
        )],
        Utc::now(),
    )
    .await;
    assert_eq!((out.applied, out.ignored), (0, 1));
    assert_eq!(activation(db, id).await.status, "succeeded");
}

async fn without_a_live_node_an_activation_waits_then_goes_to_the_first_one(
    db: &DatabaseConnection,
) {
    let cfg = setup(db).await;
    let id = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting("demo.sleep.nightly".into()),
    )
    .await
    .expect("runs");
    let a = activation(db, id).await;
    assert_eq!(a.status, "waiting");
    assert!(a.wait_until.is_some());
    watchdog::tick(db, &cfg, Utc::now(), Listening::Long)
        .await
        .expect("tick");
    assert_eq!(activation(db, id).await.status, "waiting");
    node_up(db, "demo-a", Utc::now()).await;
    watchdog::tick(db, &cfg, Utc::now(), Listening::Long)
        .await
        .expect("tick");
    let a = activation(db, id).await;
    assert_eq!((a.status.as_str(), a.fencing_token), ("dispatched", 1));
    let hosts = hosts_of(db, id).await;
    assert_eq!(hosts.len(), 1);
    assert_eq!(hosts[0].host, "demo-a");
    // With a node up, the next run goes out at once.
    let id = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting("demo.fail.nightly".into()),
    )
    .await
    .expect("runs");
    assert_eq!(activation(db, id).await.status, "dispatched");
}

async fn a_group_runs_its_members_in_order_on_one_node_and_stops_at_the_first_failure(
    db: &DatabaseConnection,
) {
    let cfg = setup(db).await;
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    node_up(db, "demo-b", now).await;
    let group = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::ScheduleGroup("demo.nightly".into()),
    )
    .await
    .expect("runs");
    let first = member(db, group, 0).await.expect("first member");
    assert!(
        member(db, group, 1).await.is_none(),
        "the second waits for the first"
    );
    let host = hosts_of(db, first.id).await[0].host.clone();
    assert_eq!(
        activation(db, group).await.pinned_host.as_deref(),
        Some(host.as_str())
    );
    apply(
        db,
        &cfg,
        &[report(
            &host,
            first.id,
            "demo.sleep.nightly",
            1,
            finished(ActivationResult::Succeeded),
        )],
        Utc::now(),
    )
    .await;
    let second = member(db, group, 1).await.expect("second member started");
    assert_eq!(
        hosts_of(db, second.id).await[0].host,
        host,
        "ANY groups stay on one node"
    );
    apply(
        db,
        &cfg,
        &[report(
            &host,
            second.id,
            "demo.fail.nightly",
            1,
            finished(ActivationResult::Failed),
        )],
        Utc::now(),
    )
    .await;
    let g = activation(db, group).await;
    assert_eq!(g.status, "failed");
    let row = schedule_groups::Entity::find_by_id("demo.nightly".to_owned())
        .one(db)
        .await
        .expect("q")
        .expect("group");
    assert_eq!(row.last_result.as_deref(), Some("failed"));

    // Failing first: the rest is skipped, not run.
    let group = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::ScheduleGroup("demo.nightly".into()),
    )
    .await
    .expect("runs");
    let first = member(db, group, 0).await.expect("first member");
    let host = hosts_of(db, first.id).await[0].host.clone();
    apply(
        db,
        &cfg,
        &[report(
            &host,
            first.id,
            "demo.sleep.nightly",
            1,
            finished(ActivationResult::Failed),
        )],
        Utc::now(),
    )
    .await;
    let skipped = member(db, group, 1).await.expect("second member recorded");
    assert_eq!(skipped.status, "skipped");
    assert!(
        hosts_of(db, skipped.id).await.is_empty(),
        "a skipped member is never dispatched"
    );
    assert_eq!(activation(db, group).await.status, "failed");
}

async fn run_now_refuses_disabled_launch_settings_and_viewers(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let ls = EntityRef::LaunchSetting("demo.sleep.nightly".into());
    let e = run_now(db, &cfg, &actor(Role::Viewer), &ls)
        .await
        .expect_err("viewer");
    assert!(matches!(e, ServiceError::Forbidden { .. }), "{e}");
    catalog::set_enabled(db, &actor(Role::Operator), &ls, false, "test")
        .await
        .expect("disables");
    let e = run_now(db, &cfg, &actor(Role::Operator), &ls)
        .await
        .expect_err("disabled");
    assert!(matches!(e, ServiceError::Conflict(_)), "{e}");
    let e = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting("nope".into()),
    )
    .await
    .expect_err("missing");
    assert!(matches!(e, ServiceError::NotFound(_)), "{e}");
    assert_eq!(
        activations::Entity::find().count(db).await.expect("count"),
        0
    );
}

async fn an_unaccepted_launch_moves_to_another_node_with_a_new_token(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    node_up(db, "demo-b", now).await;
    let ls = "demo.sleep.nightly";
    let id = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting(ls.into()),
    )
    .await
    .expect("runs");
    let first = hosts_of(db, id).await[0].host.clone();
    // Past the start timeout (30 s by default), with both nodes still heartbeating.
    let later = now + chrono::Duration::seconds(31);
    node_up(db, "demo-a", later).await;
    node_up(db, "demo-b", later).await;
    watchdog::tick(db, &cfg, later, Listening::Long)
        .await
        .expect("tick");
    let hosts = hosts_of(db, id).await;
    assert_eq!(hosts.len(), 2);
    assert_eq!(
        (hosts[0].host.as_str(), hosts[0].status.as_str()),
        (first.as_str(), "superseded")
    );
    assert_ne!(hosts[1].host, first, "re-dispatched to the other node");
    assert_eq!(hosts[1].fencing_token, 2);
    assert_eq!(activation(db, id).await.fencing_token, 2);
    assert_eq!(
        cfg.metrics.redispatch_start_timeout.load(Ordering::Relaxed),
        1
    );
    // The first node's late answer carries token 1 and is ignored.
    let out = apply(
        db,
        &cfg,
        &[report(&first, id, ls, 1, ActivationEvent::Started)],
        later,
    )
    .await;
    assert_eq!(out.stale, 1);
    let out = apply(
        db,
        &cfg,
        &[report(&hosts[1].host, id, ls, 2, ActivationEvent::Started)],
        later,
    )
    .await;
    assert_eq!(out.applied, 1);
    assert_eq!(activation(db, id).await.status, "running");
    // The launch setting's recovery counts say what happened, from the database.
    let counts = am_services::recovery::of_launch_settings(db, &[ls.to_owned()])
        .await
        .expect("counts")
        .remove(ls)
        .expect("recovered");
    let counts: Vec<(&str, i64)> = counts.iter().map(|(k, n)| (k.as_str(), *n)).collect();
    assert_eq!(
        counts,
        [("redispatch", 1), ("stale_report", 1), ("start_timeout", 1)]
    );
    // If the first node started it anyway, its heartbeat gets it interrupted there.
    let mut hb = heartbeat("demo-a", later);
    hb.host = first.clone();
    hb.running = vec![RunningLaunchSetting {
        launch_setting: ls.into(),
        activations: vec![ActivationId(id.to_string())],
        counters: Counters::default(),
        by_activation: vec![],
    }];
    apply(db, &cfg, &[ToManager::Heartbeat(hb)], later).await;
    let interrupts: Vec<_> = outbox::Entity::find()
        .filter(outbox::Column::MessageId.starts_with(format!("interrupt:{id}:{first}:")))
        .all(db)
        .await
        .expect("outbox");
    assert_eq!(interrupts.len(), 1, "the zombie run is interrupted");
    assert_eq!(interrupts[0].routing_key, format!("node.demo.{first}"));
}

async fn a_waiting_activation_fails_when_no_node_appears_in_time(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let ls = "demo.sleep.nightly";
    let id = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting(ls.into()),
    )
    .await
    .expect("runs");
    assert_eq!(activation(db, id).await.status, "waiting");
    let later = Utc::now() + cfg.wait_timeout + chrono::Duration::seconds(1);
    watchdog::tick(db, &cfg, later, Listening::Long)
        .await
        .expect("tick");
    let a = activation(db, id).await;
    assert_eq!(a.status, "failed");
    assert!(
        a.error
            .as_deref()
            .is_some_and(|e| e.contains("no live node")),
        "{a:?}"
    );
    assert_eq!(cfg.metrics.wait_timeouts.load(Ordering::Relaxed), 1);
    let row = launch_settings::Entity::find_by_id(ls.to_owned())
        .one(db)
        .await
        .expect("q")
        .expect("ls");
    assert_eq!(row.last_result.as_deref(), Some("failed"));
}

async fn a_run_past_its_maximum_run_time_is_interrupted_once(db: &DatabaseConnection) {
    let mut c = demo_catalog();
    let ls = "demo.sleep.nightly";
    if let Some(l) = c.launch_settings.iter_mut().find(|l| l.id == ls) {
        l.recovery.max_run_time = Some(am_domain::HumanDuration::from_secs(60));
    }
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("imports");
    let cfg = RuntimeConfig::new("t");
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    let id = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting(ls.into()),
    )
    .await
    .expect("runs");
    apply(
        db,
        &cfg,
        &[report("demo-a", id, ls, 1, ActivationEvent::Started)],
        now,
    )
    .await;
    // Within the limit nothing happens; past it, one interrupt, not one per tick.
    watchdog::tick(
        db,
        &cfg,
        now + chrono::Duration::seconds(30),
        Listening::Long,
    )
    .await
    .expect("tick");
    assert_eq!(
        cfg.metrics.interrupted_max_run_time.load(Ordering::Relaxed),
        0
    );
    let later = now + chrono::Duration::seconds(61);
    node_up(db, "demo-a", later).await;
    watchdog::tick(db, &cfg, later, Listening::Long)
        .await
        .expect("tick");
    watchdog::tick(
        db,
        &cfg,
        later + chrono::Duration::seconds(1),
        Listening::Long,
    )
    .await
    .expect("tick");
    let interrupts = outbox::Entity::find()
        .filter(outbox::Column::MessageId.starts_with(format!("interrupt:{id}:demo-a:")))
        .count(db)
        .await
        .expect("outbox");
    assert_eq!(interrupts, 1);
    assert_eq!(
        cfg.metrics.interrupted_max_run_time.load(Ordering::Relaxed),
        1
    );
    assert!(hosts_of(db, id).await[0].stop_requested_at.is_some());
}

/// A replica that has not read reports for a whole node timeout (its broker member died under
/// its report consumer, it was just started) takes no silence for a lost node: a dispatched run
/// stays where it is and the node stays live until a replica that listened judges them.
async fn silence_is_judged_only_by_a_replica_that_listened_a_whole_node_timeout(
    db: &DatabaseConnection,
) {
    use am_services::entity::nodes;
    let cfg = setup(db).await;
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    let ls = "demo.sleep.nightly";
    let id = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting(ls.into()),
    )
    .await
    .expect("runs");
    // Past the node timeout (30 s) and the start timeout (30 s): nothing heard since.
    let later = now + chrono::Duration::seconds(61);
    let node_status = || async {
        nodes::Entity::find()
            .filter(nodes::Column::Host.eq("demo-a"))
            .one(db)
            .await
            .expect("q")
            .expect("node")
            .status
    };
    watchdog::tick(db, &cfg, later, Listening::NotLongEnough)
        .await
        .expect("tick");
    assert_eq!(node_status().await, "live");
    let hosts = hosts_of(db, id).await;
    assert_eq!(
        (hosts.len(), hosts[0].status.as_str()),
        (1, "dispatched"),
        "not moved by a replica that was not listening"
    );
    watchdog::tick(db, &cfg, later, Listening::Long)
        .await
        .expect("tick");
    assert_eq!(node_status().await, "lost");
    assert_ne!(hosts_of(db, id).await[0].status, "dispatched");
}
