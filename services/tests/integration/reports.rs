//! Report ingestion counts every report once: a batch the broker delivers again after its
//! commit (an acknowledgement lost, the manager stopped before acknowledging) changes nothing,
//! and a failure row keeps what the node knew of it.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::{
    roles::Role,
    wire::{ActivationId, FailureReport, ToManager, disposition},
};
use am_services::{
    catalog,
    entity::failure_logs,
    runtime::{RuntimeConfig, reports},
};
use chrono::Utc;
use sea_orm::{DatabaseConnection, EntityTrait, PaginatorTrait};
use std::sync::atomic::Ordering;
use uuid::Uuid;

on_both_backends!(a_batch_delivered_twice_is_stored_once);

fn failure(activation: Uuid, n: u32, report_id: Option<String>) -> ToManager {
    ToManager::Failure(FailureReport {
        application: "demo".into(),
        host: "demo-a".into(),
        activation_id: ActivationId(activation.to_string()),
        launch_setting: "demo.echo.1".into(),
        agent: "echo".into(),
        error_type: "DbTimeout".into(),
        message: format!("failure {n}"),
        details: String::new(),
        data_message_id: Some(format!("m-{n}")),
        attempt: n,
        temporary: n.is_multiple_of(2),
        disposition: Some(
            if n == 3 {
                disposition::DEAD_LETTER
            } else {
                disposition::RETRY
            }
            .into(),
        ),
        at: Utc::now(),
        report_id,
        replay: None,
    })
}

async fn a_batch_delivered_twice_is_stored_once(db: &DatabaseConnection) {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
    let cfg = RuntimeConfig::new("t");
    let activation = Uuid::new_v4();
    let batch: Vec<ToManager> = (1..=3)
        .map(|n| failure(activation, n, Some(Uuid::new_v4().to_string())))
        .collect();

    reports::apply(db, &cfg, &batch, Utc::now())
        .await
        .expect("applies");
    // The same batch again, and a batch holding one of them twice beside a new one.
    reports::apply(db, &cfg, &batch, Utc::now())
        .await
        .expect("applies again");
    let fourth = failure(activation, 4, Some(Uuid::new_v4().to_string()));
    reports::apply(
        db,
        &cfg,
        &[batch[0].clone(), fourth.clone(), fourth],
        Utc::now(),
    )
    .await
    .expect("applies a batch with a repeat");

    let rows = failure_logs::Entity::find().all(db).await.expect("rows");
    let mut messages: Vec<&str> = rows.iter().map(|r| r.message.as_str()).collect();
    messages.sort_unstable();
    assert_eq!(
        messages,
        ["failure 1", "failure 2", "failure 3", "failure 4"],
        "each report once"
    );
    assert_eq!(
        cfg.metrics.failures.load(Ordering::Relaxed),
        4,
        "the failure counter counts what was stored"
    );
    let third = rows
        .iter()
        .find(|r| r.message == "failure 3")
        .expect("third");
    assert_eq!(third.disposition.as_deref(), Some(disposition::DEAD_LETTER));
    assert!(!third.temporary);
    let second = rows
        .iter()
        .find(|r| r.message == "failure 2")
        .expect("second");
    assert!(second.temporary);

    // A version-1 node's reports have no id: stored as they come.
    let old = failure(activation, 5, None);
    reports::apply(db, &cfg, &[old.clone(), old], Utc::now())
        .await
        .expect("applies");
    assert_eq!(
        failure_logs::Entity::find().count(db).await.expect("count"),
        6
    );
}
