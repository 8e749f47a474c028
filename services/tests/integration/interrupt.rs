//! An operator's *Interrupt*: a waiting run ends at once, a running one gets *interrupt* on its
//! host once, a group's run ends and starts no further member. And overlap policy `interrupt`:
//! a new run that ends a group's waiting member lets that group go on.

use super::{
    actor, demo_catalog,
    runtime::{activation, apply, finished, hosts_of, node_up, report, setup},
};
use crate::on_both_backends;
use am_domain::{
    catalog::OverlapPolicy,
    roles::Role,
    usage::EntityRef,
    wire::{ActivationEvent, ActivationResult},
};
use am_services::{
    ServiceError, catalog,
    entity::{activations, outbox},
    runtime::{RuntimeConfig, interrupt::interrupt, run::run_now},
};
use chrono::Utc;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter};

on_both_backends!(
    waiting_and_running_runs_are_interrupted_once,
    a_group_run_is_interrupted_and_starts_no_further_member,
    a_waiting_member_ended_by_a_new_run_lets_its_group_go_on,
);

async fn interrupts_sent(db: &DatabaseConnection, id: uuid::Uuid) -> u64 {
    outbox::Entity::find()
        .filter(outbox::Column::MessageId.starts_with(format!("interrupt:{id}:")))
        .count(db)
        .await
        .expect("outbox")
}

async fn waiting_and_running_runs_are_interrupted_once(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let operator = actor(Role::Operator);
    let ls = "demo.sleep.nightly";
    let what = EntityRef::LaunchSetting(ls.into());

    // No live node: the run waits, and an interrupt ends it at once.
    let waiting = run_now(db, &cfg, &operator, &what).await.expect("runs");
    assert_eq!(activation(db, waiting).await.status, "waiting");
    let e = interrupt(db, &cfg, &actor(Role::Viewer), &waiting.to_string())
        .await
        .expect_err("viewers may not");
    assert!(matches!(e, ServiceError::Forbidden { .. }), "{e:?}");
    interrupt(db, &cfg, &operator, &waiting.to_string())
        .await
        .expect("interrupts");
    let ended = activation(db, waiting).await;
    assert_eq!(ended.status, "interrupted");
    assert_eq!(ended.error.as_deref(), Some("interrupted by test-operator"));
    let e = interrupt(db, &cfg, &operator, &waiting.to_string())
        .await
        .expect_err("already ended");
    assert!(matches!(e, ServiceError::Conflict(_)), "{e:?}");
    let e = interrupt(db, &cfg, &operator, "no-such-id")
        .await
        .expect_err("unknown");
    assert!(matches!(e, ServiceError::NotFound(_)), "{e:?}");

    // Running: one interrupt to its host, however often asked; it ends when the node says so.
    node_up(db, "demo-a", Utc::now()).await;
    let running = run_now(db, &cfg, &operator, &what).await.expect("runs");
    apply(
        db,
        &cfg,
        &[report("demo-a", running, ls, 1, ActivationEvent::Started)],
        Utc::now(),
    )
    .await;
    interrupt(db, &cfg, &operator, &running.to_string())
        .await
        .expect("interrupts");
    interrupt(db, &cfg, &operator, &running.to_string())
        .await
        .expect("asking twice is harmless");
    assert_eq!(interrupts_sent(db, running).await, 1);
    assert!(hosts_of(db, running).await[0].stop_requested_at.is_some());
    assert_eq!(activation(db, running).await.status, "running");
    apply(
        db,
        &cfg,
        &[report(
            "demo-a",
            running,
            ls,
            1,
            finished(ActivationResult::Interrupted),
        )],
        Utc::now(),
    )
    .await;
    assert_eq!(activation(db, running).await.status, "interrupted");
}

async fn a_group_run_is_interrupted_and_starts_no_further_member(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let operator = actor(Role::Operator);
    node_up(db, "demo-a", Utc::now()).await;
    let group = run_now(
        db,
        &cfg,
        &operator,
        &EntityRef::ScheduleGroup("demo.nightly".into()),
    )
    .await
    .expect("runs");
    let member = activations::Entity::find()
        .filter(activations::Column::ParentId.eq(group))
        .one(db)
        .await
        .expect("query")
        .expect("first member");
    let ls = member.launch_setting_id.clone().expect("a launch setting");
    apply(
        db,
        &cfg,
        &[report(
            "demo-a",
            member.id,
            &ls,
            1,
            ActivationEvent::Started,
        )],
        Utc::now(),
    )
    .await;

    interrupt(db, &cfg, &operator, &group.to_string())
        .await
        .expect("interrupts");
    let run = activation(db, group).await;
    assert_eq!(run.status, "interrupted");
    assert_eq!(interrupts_sent(db, member.id).await, 1);

    // The member ends as told; the group does not go on to its next member.
    apply(
        db,
        &cfg,
        &[report(
            "demo-a",
            member.id,
            &ls,
            1,
            finished(ActivationResult::Interrupted),
        )],
        Utc::now(),
    )
    .await;
    assert_eq!(activation(db, member.id).await.status, "interrupted");
    let members = activations::Entity::find()
        .filter(activations::Column::ParentId.eq(group))
        .count(db)
        .await
        .expect("count");
    assert_eq!(members, 1, "no further member started");
    assert_eq!(activation(db, group).await.status, "interrupted");
}

/// The path where ending one run starts another: a new run of a launch setting with overlap
/// policy `interrupt` ends a group's member still waiting for a node at once, and that group
/// (which goes on after a failure) starts its next member in the same transaction.
async fn a_waiting_member_ended_by_a_new_run_lets_its_group_go_on(db: &DatabaseConnection) {
    let mut c = demo_catalog();
    let sleep = c
        .agents
        .iter_mut()
        .find(|a| a.id == "sleep")
        .expect("the demo has agent sleep");
    sleep.overlap = OverlapPolicy::Interrupt;
    let nightly = c
        .schedule_groups
        .iter_mut()
        .find(|g| g.id == "demo.nightly")
        .expect("the demo has group demo.nightly");
    nightly.continue_on_failure = true;
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("catalog imports");
    let cfg = RuntimeConfig::new("t");
    let operator = actor(Role::Operator);
    let members_of = |group| async move {
        activations::Entity::find()
            .filter(activations::Column::ParentId.eq(group))
            .all(db)
            .await
            .expect("members")
    };

    // No live node: the group's first member (demo.sleep.nightly) waits.
    let group = run_now(
        db,
        &cfg,
        &operator,
        &EntityRef::ScheduleGroup("demo.nightly".into()),
    )
    .await
    .expect("runs");
    let first = members_of(group).await;
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].status, "waiting");

    let new = run_now(
        db,
        &cfg,
        &operator,
        &EntityRef::LaunchSetting("demo.sleep.nightly".into()),
    )
    .await
    .expect("runs");
    let ended = activation(db, first[0].id).await;
    assert_eq!(ended.status, "interrupted");
    assert_eq!(
        ended.error.as_deref(),
        Some("a new run of demo.sleep.nightly started (overlap policy: interrupt)")
    );
    assert_eq!(activation(db, new).await.status, "waiting");

    // The group went on: its second member waits for a node, the group still runs.
    let members = members_of(group).await;
    assert_eq!(members.len(), 2, "{members:?}");
    let second = members
        .iter()
        .find(|m| m.id != first[0].id)
        .expect("a second member");
    assert_eq!(second.launch_setting_id.as_deref(), Some("demo.echo.drain"));
    assert_eq!(second.status, "waiting");
    assert_eq!(activation(db, group).await.status, "running");
}
