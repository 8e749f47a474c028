//! Fires planned before their time (`ahead::prepare`, then `ahead::record` when due): written
//! as planned while nothing they rest on changed, and otherwise planned again under the lock,
//! so the result is always what planning under the lock gives.

use super::{
    actor,
    runtime::{node_up, setup},
};
use crate::on_both_backends;
use am_domain::{roles::Role, usage::EntityRef};
use am_services::status::Trigger;
use am_services::{
    catalog,
    entity::{activations, outbox},
    runtime::{
        RuntimeConfig, ahead,
        fires::{self, Fire},
    },
};
use chrono::{DateTime, Duration, DurationRound, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter};
use std::{collections::BTreeSet, sync::atomic::Ordering};

on_both_backends!(
    a_batch_planned_ahead_is_written_as_planned_and_stamped_with_its_fire_time,
    a_batch_planned_before_a_catalog_change_is_planned_again,
    a_node_that_came_up_meanwhile_makes_the_batch_plan_again,
    a_fire_recorded_elsewhere_meanwhile_is_left_out_and_nothing_doubles,
    a_batch_written_too_late_is_planned_again_at_its_real_time,
);

/// A fire time just ahead, on a whole second as cron gives them.
fn soon() -> DateTime<Utc> {
    (Utc::now() + Duration::seconds(1))
        .duration_trunc(Duration::seconds(1))
        .expect("whole second")
}

fn both_groups(at: DateTime<Utc>) -> Vec<Fire> {
    ["demo.nightly", "demo.failing"]
        .into_iter()
        .map(|g| Fire::scheduled(g, at, Trigger::Schedule))
        .collect()
}

/// The demo catalog with one live node, and both demo groups planned for a fire just ahead.
async fn planned_with_one_node(
    db: &DatabaseConnection,
) -> (RuntimeConfig, DateTime<Utc>, ahead::Prepared) {
    let cfg = setup(db).await;
    let at = soon();
    node_up(db, "demo-a", Utc::now()).await;
    let prepared = ahead::prepare(db, &cfg, both_groups(at), at)
        .await
        .expect("prepares");
    (cfg, at, prepared)
}

async fn group_activations(db: &DatabaseConnection, group: &str) -> Vec<activations::Model> {
    activations::Entity::find()
        .filter(activations::Column::GroupId.eq(group))
        .filter(activations::Column::ParentId.is_null())
        .all(db)
        .await
        .expect("group activations")
}

async fn sent_to(db: &DatabaseConnection) -> Vec<String> {
    let mut keys: Vec<String> = outbox::Entity::find()
        .all(db)
        .await
        .expect("outbox")
        .into_iter()
        .map(|o| o.routing_key)
        .collect();
    keys.sort();
    keys
}

fn count(c: &std::sync::atomic::AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

async fn a_batch_planned_ahead_is_written_as_planned_and_stamped_with_its_fire_time(
    db: &DatabaseConnection,
) {
    let (cfg, at, prepared) = planned_with_one_node(db).await;
    assert_eq!(
        outbox::Entity::find().count(db).await.expect("count"),
        0,
        "planning writes nothing"
    );
    assert_eq!(
        count(&cfg.metrics.launches),
        0,
        "nothing counted before it is written"
    );
    let fired = ahead::record(db, &cfg, prepared, at)
        .await
        .expect("records");
    assert!(fired.iter().all(|f| f.1.is_some()), "{fired:?}");
    for group in ["demo.nightly", "demo.failing"] {
        let rows = group_activations(db, group).await;
        assert_eq!(rows.len(), 1, "{group}");
        assert_eq!(
            rows[0].created_at, at,
            "{group}: stamped with the fire time"
        );
    }
    assert_eq!(sent_to(db).await, ["node.demo.demo-a", "node.demo.demo-a"]);
    assert_eq!(count(&cfg.metrics.launches), 2);
    assert_eq!(count(&cfg.metrics.fires), 2);
    assert_eq!(count(&cfg.metrics.fires_planned_ahead), 2);
    assert_eq!(count(&cfg.metrics.fires_planned_again), 0);
}

async fn a_batch_planned_before_a_catalog_change_is_planned_again(db: &DatabaseConnection) {
    let (cfg, at, prepared) = planned_with_one_node(db).await;
    catalog::set_enabled(
        db,
        &actor(Role::Operator),
        &EntityRef::ScheduleGroup("demo.failing".into()),
        false,
        "maintenance",
    )
    .await
    .expect("disables");
    let fired = ahead::record(db, &cfg, prepared, at)
        .await
        .expect("records");
    assert!(fired[0].1.is_some(), "{fired:?}");
    assert_eq!(
        fired[1].1, None,
        "the group disabled meanwhile does not fire"
    );
    assert!(group_activations(db, "demo.failing").await.is_empty());
    assert_eq!(sent_to(db).await.len(), 1);
    assert_eq!(
        count(&cfg.metrics.launches),
        1,
        "the first plan is not counted"
    );
    assert_eq!(count(&cfg.metrics.fires_planned_ahead), 0);
    assert_eq!(count(&cfg.metrics.fires_planned_again), 2);
}

async fn a_node_that_came_up_meanwhile_makes_the_batch_plan_again(db: &DatabaseConnection) {
    let (cfg, at, prepared) = planned_with_one_node(db).await;
    // Planned with one node, both launches went to it; with two, least-loaded spreads them.
    node_up(db, "demo-b", Utc::now()).await;
    let fired = ahead::record(db, &cfg, prepared, at)
        .await
        .expect("records");
    assert!(fired.iter().all(|f| f.1.is_some()), "{fired:?}");
    assert_eq!(sent_to(db).await, ["node.demo.demo-a", "node.demo.demo-b"]);
    assert_eq!(count(&cfg.metrics.launches), 2);
    assert_eq!(count(&cfg.metrics.fires_planned_again), 2);
}

async fn a_fire_recorded_elsewhere_meanwhile_is_left_out_and_nothing_doubles(
    db: &DatabaseConnection,
) {
    let (cfg, at, prepared) = planned_with_one_node(db).await;
    // Another replica fires one of the groups first.
    let other = fires::fire(db, &cfg, &both_groups(at)[1..], at, None)
        .await
        .expect("the other replica fires");
    assert!(other[0].1.is_some());
    let fired = ahead::record(db, &cfg, prepared, at)
        .await
        .expect("records");
    assert!(fired[0].1.is_some(), "{fired:?}");
    assert_eq!(fired[1].1, None, "recorded by the other replica");
    for group in ["demo.nightly", "demo.failing"] {
        assert_eq!(group_activations(db, group).await.len(), 1, "{group}");
    }
    assert_eq!(sent_to(db).await.len(), 2);
    assert_eq!(count(&cfg.metrics.duplicate_fires), 1);
    assert_eq!(count(&cfg.metrics.fires), 2);
    assert_eq!(count(&cfg.metrics.launches), 2);
}

async fn a_batch_written_too_late_is_planned_again_at_its_real_time(db: &DatabaseConnection) {
    let (cfg, at, prepared) = planned_with_one_node(db).await;
    let late = at + ahead::KEEP_FOR + Duration::milliseconds(1);
    let fired = ahead::record(db, &cfg, prepared, late)
        .await
        .expect("records");
    assert!(fired.iter().all(|f| f.1.is_some()), "{fired:?}");
    let stamps: BTreeSet<DateTime<Utc>> = [
        group_activations(db, "demo.nightly").await,
        group_activations(db, "demo.failing").await,
    ]
    .into_iter()
    .flatten()
    .map(|a| a.created_at)
    .collect();
    assert_eq!(
        stamps,
        BTreeSet::from([late]),
        "stamped when really recorded"
    );
    assert_eq!(count(&cfg.metrics.fires_planned_again), 2);
    assert_eq!(count(&cfg.metrics.launches), 2);
}
