//! The `MANY` breaker quarantines the host that tripped instead of handing it the launch again
//! every second; two quarantined hosts disable the launch setting; clearing a host or
//! re-enabling the launch setting puts hosts back. `demo.flaky.1` is a `MANY` stream.

use super::{
    actor,
    runtime::{activation, apply, finished, hosts_of, node_up, report, setup},
};
use crate::on_both_backends;
use am_domain::{
    roles::Role,
    usage::EntityRef,
    wire::{
        ActivationEvent, ActivationId, ActivationResult, BreakerTripped, ErrorSummary, ToManager,
    },
};
use am_services::{
    ServiceError, catalog,
    entity::{activations, launch_settings},
    quarantine, run_status,
    runtime::{
        RuntimeConfig, breaker,
        watchdog::{self, Listening},
    },
};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use std::sync::atomic::Ordering;
use uuid::Uuid;

on_both_backends!(
    a_tripped_host_is_quarantined_and_the_stream_goes_on_without_it,
    a_disabled_group_interrupts_its_running_member,
);

const LS: &str = "demo.flaky.1";
const HOSTS: [&str; 3] = ["demo-a", "demo-b", "demo-c"];

fn trip(host: &str, activation: Uuid) -> ToManager {
    ToManager::BreakerTripped(BreakerTripped {
        application: "demo".into(),
        host: host.into(),
        activation_id: ActivationId(activation.to_string()),
        launch_setting: LS.into(),
        consecutive_failures: 3,
        same_type_failures: 3,
        last_errors: vec![ErrorSummary {
            error_type: "Flaky".into(),
            message: "down".into(),
        }],
        at: Utc::now(),
    })
}

/// What the report consumer does with a trip: the batch (the node's trip and the end of its
/// run there), then the policy.
async fn trips_on(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    host: &str,
    run: Uuid,
    token: u64,
    now: DateTime<Utc>,
) {
    let outcome = apply(
        db,
        cfg,
        &[
            trip(host, run),
            report(host, run, LS, token, finished(ActivationResult::Failed)),
        ],
        now,
    )
    .await;
    for t in &outcome.trips {
        breaker::apply_trip(db, cfg, t, now).await.expect("policy");
    }
}

async fn stream_run(db: &DatabaseConnection) -> Uuid {
    activations::Entity::find()
        .filter(activations::Column::LaunchSettingId.eq(LS))
        .order_by_desc(activations::Column::CreatedAt)
        .one(db)
        .await
        .expect("query")
        .expect("the stream runs")
        .id
}

/// Dispatches of `run` to `host` so far.
async fn dispatches(db: &DatabaseConnection, run: Uuid, host: &str) -> usize {
    hosts_of(db, run)
        .await
        .iter()
        .filter(|h| h.host == host)
        .count()
}

async fn enabled(db: &DatabaseConnection) -> bool {
    launch_settings::Entity::find_by_id(LS.to_owned())
        .one(db)
        .await
        .expect("query")
        .expect("launch setting")
        .enabled
}

async fn quarantined(db: &DatabaseConnection) -> Vec<String> {
    let who = actor(Role::Viewer);
    run_status::of_launch_settings(db, &who, &[LS.to_owned()])
        .await
        .expect("status")
        .remove(LS)
        .expect("the launch setting's status")
        .quarantined
        .into_iter()
        .map(|q| q.host)
        .collect()
}

async fn a_tripped_host_is_quarantined_and_the_stream_goes_on_without_it(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    // A third host in the demo pool.
    let mut c = catalog::export(db, &actor(Role::Admin))
        .await
        .expect("export");
    c.pools[0].hosts.push("demo-c".into());
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("import");
    let mut now = Utc::now();
    for h in HOSTS {
        node_up(db, h, now).await;
    }
    watchdog::tick(db, &cfg, now, Listening::Long)
        .await
        .expect("tick");
    let run = stream_run(db).await;
    assert_eq!(
        hosts_of(db, run).await.len(),
        3,
        "a MANY stream runs on every host"
    );
    let started: Vec<ToManager> = HOSTS
        .iter()
        .map(|h| report(h, run, LS, 1, ActivationEvent::Started))
        .collect();
    apply(db, &cfg, &started, now).await;

    trips_on(db, &cfg, "demo-b", run, 1, now).await;
    assert!(
        enabled(db).await,
        "one host of three tripped: the others go on"
    );
    assert_eq!(quarantined(db).await, ["demo-b"]);
    assert_eq!(cfg.metrics.quarantines.load(Ordering::Relaxed), 1);
    // A repeated trip report (redelivered batch) changes nothing.
    trips_on(db, &cfg, "demo-b", run, 1, now).await;
    assert_eq!(cfg.metrics.quarantines.load(Ordering::Relaxed), 1);
    let status = run_status::of_launch_settings(db, &actor(Role::Viewer), &[LS.to_owned()])
        .await
        .expect("status")
        .remove(LS)
        .expect("status");
    assert_eq!(status.recovery.get("quarantine"), Some(&1));

    // No re-dispatch loop: the watchdog leaves the quarantined host out, pass after pass.
    for _ in 0..5 {
        now += Duration::seconds(1);
        for h in HOSTS {
            node_up(db, h, now).await;
        }
        watchdog::tick(db, &cfg, now, Listening::Long)
            .await
            .expect("tick");
    }
    assert_eq!(
        dispatches(db, run, "demo-b").await,
        1,
        "dispatched once only"
    );
    assert_eq!(activation(db, run).await.status, "running");
    assert_eq!(stream_run(db).await, run, "the same activation goes on");

    // Viewers cannot clear; an unknown host is a clear error; an operator puts it back.
    let e = quarantine::clear(db, &actor(Role::Viewer), LS, "demo-b")
        .await
        .expect_err("viewers may not");
    assert!(matches!(e, ServiceError::Forbidden { .. }), "{e:?}");
    let e = quarantine::clear(db, &actor(Role::Operator), LS, "demo-a")
        .await
        .expect_err("not quarantined");
    assert!(matches!(e, ServiceError::NotFound(_)), "{e:?}");
    quarantine::clear(db, &actor(Role::Operator), LS, "demo-b")
        .await
        .expect("clears");
    assert!(quarantined(db).await.is_empty());
    now += Duration::seconds(1);
    watchdog::tick(db, &cfg, now, Listening::Long)
        .await
        .expect("tick");
    assert_eq!(
        dispatches(db, run, "demo-b").await,
        2,
        "the stream joins it again"
    );

    // Trips across activations and hosts add up: two quarantined hosts disable it.
    trips_on(db, &cfg, "demo-a", run, 1, now).await;
    assert!(enabled(db).await);
    let token = hosts_of(db, run)
        .await
        .iter()
        .filter(|h| h.host == "demo-b")
        .map(|h| h.fencing_token)
        .max()
        .expect("demo-b's second dispatch");
    trips_on(
        db,
        &cfg,
        "demo-b",
        run,
        u64::try_from(token).expect("token"),
        now,
    )
    .await;
    assert!(!enabled(db).await, "two hosts of the pool quarantined");
    assert_eq!(quarantined(db).await, ["demo-a", "demo-b"]);

    // Re-enabling clears every quarantine.
    catalog::set_enabled(
        db,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting(LS.into()),
        true,
        "fixed",
    )
    .await
    .expect("enables");
    assert!(quarantined(db).await.is_empty());
}

async fn a_disabled_group_interrupts_its_running_member(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    let group = am_services::runtime::run::run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::ScheduleGroup("demo.nightly".into()),
    )
    .await
    .expect("runs");
    let member = activations::Entity::find()
        .filter(activations::Column::ParentId.eq(group))
        .one(db)
        .await
        .expect("q")
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
        now,
    )
    .await;
    catalog::set_enabled(
        db,
        &actor(Role::Operator),
        &EntityRef::ScheduleGroup("demo.nightly".into()),
        false,
        "breaker tripped on demo-a",
    )
    .await
    .expect("disables");
    watchdog::tick(db, &cfg, now, Listening::Long)
        .await
        .expect("tick");
    let rows = hosts_of(db, member.id).await;
    assert!(rows[0].stop_requested_at.is_some(), "{rows:?}");
    let commands = am_services::entity::outbox::Entity::find()
        .all(db)
        .await
        .expect("outbox");
    let interrupt = commands
        .iter()
        .find(|c| {
            c.message_id
                .starts_with(&format!("interrupt:{}", member.id))
        })
        .unwrap_or_else(|| panic!("an interrupt for the member: {commands:#?}"));
    assert!(interrupt.routing_key.ends_with("demo-a"), "{interrupt:?}");
    // Once only, however many passes.
    watchdog::tick(db, &cfg, now + Duration::seconds(1), Listening::Long)
        .await
        .expect("tick");
    let again = am_services::entity::outbox::Entity::find()
        .all(db)
        .await
        .expect("outbox")
        .iter()
        .filter(|c| {
            c.message_id
                .starts_with(&format!("interrupt:{}", member.id))
        })
        .count();
    assert_eq!(again, 1);
    // The node answers; the group ends without its next member.
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
        now,
    )
    .await;
    assert_eq!(activation(db, group).await.status, "interrupted");
    let members: Vec<String> = activations::Entity::find()
        .filter(activations::Column::ParentId.eq(group))
        .order_by_asc(activations::Column::Position)
        .all(db)
        .await
        .expect("q")
        .into_iter()
        .map(|m| m.status)
        .collect();
    assert_eq!(members, ["interrupted", "skipped"], "no further member ran");
}
