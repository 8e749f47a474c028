//! The consistency sweep finds what timeouts would find later, and repairs it now: a waiting
//! activation while a node could take it, a launch command lost from the outbox, a run on a
//! node that no longer lists it in its heartbeats; each finding is listed, repaired or not.

use super::{
    actor, demo_catalog,
    operations::NoBroker,
    runtime::{activation, apply, heartbeat, hosts_of, node_up, report},
};
use crate::on_both_backends;
use am_domain::{
    read::operations::{OperationRequest, OperationView},
    roles::Role,
    usage::EntityRef,
    wire::ActivationEvent,
    wire::ToManager,
};
use am_services::{
    ServiceError, Services, Settings, catalog,
    entity::outbox,
    health::BrokerStatus,
    operations::{self, RunEnd, status},
    registry,
    runtime::{RuntimeConfig, run::run_now},
};
use chrono::{Duration, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

on_both_backends!(a_sweep_repairs_planted_inconsistencies_and_lists_them);

async fn a_sweep_repairs_planted_inconsistencies_and_lists_them(db: &DatabaseConnection) {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("catalog");
    let s = Services::new(db.clone(), BrokerStatus::default(), Settings::default())
        .with_runtime(RuntimeConfig::new("t"));
    let cfg = &s.runtime;
    let operator = actor(Role::Operator);
    let e = operations::start(&s, &operator, OperationRequest::ConsistencySweep {})
        .await
        .expect_err("nothing in progress");
    assert!(
        matches!(&e, ServiceError::Conflict(m) if m.contains("nothing to check")),
        "{e:?}"
    );

    let run = |ls: &str| {
        let (s, operator) = (&s, operator.clone());
        let ls = ls.to_owned();
        async move {
            run_now(&s.db, &s.runtime, &operator, &EntityRef::LaunchSetting(ls))
                .await
                .expect("runs")
        }
    };
    // 1. Waiting: no node yet; then one comes (the watchdog has not passed since).
    let waiting = run("demo.sleep.nightly").await;
    assert_eq!(activation(db, waiting).await.status, "waiting");
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    // 2. Dispatched, but its launch command lost from the outbox.
    let unsent = run("demo.fail.nightly").await;
    let host = hosts_of(db, unsent).await[0].host.clone();
    let key = format!("launch:{unsent}:{host}:1");
    outbox::Entity::delete_many()
        .filter(outbox::Column::MessageId.eq(key.as_str()))
        .exec(db)
        .await
        .expect("planted");
    // 3. Running on demo-a, which then keeps heartbeating without listing it.
    let silent = run("demo.echo.drain").await;
    apply(
        db,
        cfg,
        &[report(
            "demo-a",
            silent,
            "demo.echo.drain",
            1,
            ActivationEvent::Started,
        )],
        now,
    )
    .await;
    let later = now + cfg.node_timeout + Duration::seconds(5);
    registry::record_heartbeat(db, &heartbeat("demo-a", later), later)
        .await
        .expect("heartbeat");
    apply(
        db,
        cfg,
        &[ToManager::Heartbeat(heartbeat("demo-a", later))],
        later,
    )
    .await;

    let started = operations::start(&s, &operator, OperationRequest::ConsistencySweep {})
        .await
        .expect("starts");
    assert_eq!(started.total, 3);
    let end = operations::run(db, cfg, started.id, &NoBroker)
        .await
        .expect("runs");
    assert_eq!(end, RunEnd::Finished(status::SUCCEEDED));
    let view: OperationView = operations::get(db, &operator, started.id)
        .await
        .expect("view")
        .into();
    assert_eq!((view.done, view.failed), (3, 0), "{view:#?}");
    let findings: Vec<(String, bool)> = view
        .errors
        .iter()
        .map(|e| {
            (
                e.error.split(':').next().unwrap_or_default().to_owned(),
                e.repaired,
            )
        })
        .collect();
    assert_eq!(
        findings,
        [
            ("waiting-with-live-node".to_owned(), true),
            ("launch-missing".to_owned(), true),
            ("not-reported".to_owned(), true),
        ],
        "{view:#?}"
    );
    // Repaired: dispatched, the launch written again, the silent run lost and settled.
    assert_eq!(activation(db, waiting).await.status, "dispatched");
    assert!(
        outbox::Entity::find()
            .filter(outbox::Column::MessageId.eq(key.as_str()))
            .one(db)
            .await
            .expect("q")
            .is_some()
    );
    let lost = am_services::recovery::of_launch_settings(db, &["demo.echo.drain".to_owned()])
        .await
        .expect("counts");
    assert_eq!(
        lost.get("demo.echo.drain").and_then(|c| c.get("lost")),
        Some(&1),
        "the repaired run counts as a recovery: {lost:?}"
    );
    let silent_row = activation(db, silent).await;
    assert_eq!(silent_row.status, "failed");
    assert!(
        silent_row
            .error
            .as_deref()
            .is_some_and(|e| e.contains("has not listed it")),
        "{silent_row:?}"
    );
}
