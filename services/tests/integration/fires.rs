//! Fires planned before they take the write lock (`fires::prepare` then `fires::record`): the
//! result is what planning under the lock gives, also when the catalog changed in between or
//! another replica recorded a fire first.

use super::{
    actor,
    runtime::{node_up, setup},
};
use crate::on_both_backends;
use am_domain::{roles::Role, usage::EntityRef};
use am_services::{
    catalog,
    entity::{activations, outbox},
    runtime::{
        fires::{self, Fire},
        status::Trigger,
    },
};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter};
use std::sync::atomic::Ordering;

on_both_backends!(
    a_prepared_batch_records_what_firing_under_the_lock_records,
    a_batch_planned_before_a_catalog_change_is_planned_again,
    a_fire_recorded_elsewhere_meanwhile_is_left_out_and_nothing_doubles,
);

fn at() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2030-01-01T02:30:00Z")
        .expect("time")
        .with_timezone(&Utc)
}

fn both_groups() -> Vec<Fire> {
    ["demo.nightly", "demo.failing"]
        .into_iter()
        .map(|g| Fire::scheduled(g, at(), Trigger::Schedule))
        .collect()
}

async fn group_activations(db: &DatabaseConnection, group: &str) -> u64 {
    activations::Entity::find()
        .filter(activations::Column::GroupId.eq(group))
        .filter(activations::Column::ParentId.is_null())
        .count(db)
        .await
        .expect("count")
}

async fn a_prepared_batch_records_what_firing_under_the_lock_records(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    let prepared = fires::prepare(db, &cfg, both_groups(), now)
        .await
        .expect("prepares");
    assert_eq!(
        outbox::Entity::find().count(db).await.expect("count"),
        0,
        "planning writes nothing"
    );
    assert_eq!(cfg.metrics.launches.load(Ordering::Relaxed), 0);
    let fired = fires::record(db, &cfg, prepared).await.expect("records");
    assert!(fired.iter().all(|f| f.1.is_some()), "{fired:?}");
    for group in ["demo.nightly", "demo.failing"] {
        assert_eq!(group_activations(db, group).await, 1, "{group}");
    }
    // Each group's first member went out to the only live node, counted once.
    let sent = outbox::Entity::find().all(db).await.expect("outbox");
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|s| s.routing_key == "node.demo.demo-a"));
    assert_eq!(cfg.metrics.launches.load(Ordering::Relaxed), 2);
    assert_eq!(cfg.metrics.fires.load(Ordering::Relaxed), 2);
}

async fn a_batch_planned_before_a_catalog_change_is_planned_again(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    let prepared = fires::prepare(db, &cfg, both_groups(), now)
        .await
        .expect("prepares");
    catalog::set_enabled(
        db,
        &actor(Role::Operator),
        &EntityRef::ScheduleGroup("demo.failing".into()),
        false,
        "maintenance",
    )
    .await
    .expect("disables");
    let fired = fires::record(db, &cfg, prepared).await.expect("records");
    assert!(fired[0].1.is_some(), "{fired:?}");
    assert_eq!(
        fired[1].1, None,
        "the group disabled meanwhile does not fire"
    );
    assert_eq!(group_activations(db, "demo.failing").await, 0);
    assert_eq!(outbox::Entity::find().count(db).await.expect("count"), 1);
    assert_eq!(
        cfg.metrics.launches.load(Ordering::Relaxed),
        1,
        "the first plan is not counted"
    );
}

async fn a_fire_recorded_elsewhere_meanwhile_is_left_out_and_nothing_doubles(
    db: &DatabaseConnection,
) {
    let cfg = setup(db).await;
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    let prepared = fires::prepare(db, &cfg, both_groups(), now)
        .await
        .expect("prepares");
    // Another replica fires one of the groups first.
    let other = fires::fire(db, &cfg, &both_groups()[1..], now, None)
        .await
        .expect("the other replica fires");
    assert!(other[0].1.is_some());
    let fired = fires::record(db, &cfg, prepared).await.expect("records");
    assert!(fired[0].1.is_some(), "{fired:?}");
    assert_eq!(fired[1].1, None, "recorded by the other replica");
    for group in ["demo.nightly", "demo.failing"] {
        assert_eq!(group_activations(db, group).await, 1, "{group}");
    }
    assert_eq!(outbox::Entity::find().count(db).await.expect("count"), 2);
    assert_eq!(cfg.metrics.duplicate_fires.load(Ordering::Relaxed), 1);
    assert_eq!(cfg.metrics.fires.load(Ordering::Relaxed), 2);
    assert_eq!(cfg.metrics.launches.load(Ordering::Relaxed), 2);
}
