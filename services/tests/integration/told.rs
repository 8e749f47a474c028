//! What operators are told beside failures: a bulk operation's end (`operation_finished`), a
//! group that overran into its next fire and a group whose runs stopped succeeding (dead man's
//! switch), both `schedule_missed`.

use super::{
    actor, demo_catalog,
    operations::NoBroker,
    runtime::{apply, node_up, report, setup as runtime_setup},
};
use crate::on_both_backends;
use am_domain::{
    catalog::LostPolicy, read::operations::OperationRequest, roles::Role, usage::EntityRef,
    wire::ActivationEvent,
};
use am_services::status::Trigger;
use am_services::{
    Services, Settings, catalog,
    entity::{notifications as rows, schedule_groups},
    health::BrokerStatus,
    operations::{self, RunEnd, status},
    runtime::{
        RuntimeConfig,
        fires::{self, Fire},
        run::run_now,
        watchdog::{self, Listening},
    },
};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set,
};

on_both_backends!(
    a_finished_operation_is_told_to_its_application_with_its_counts,
    a_cancelled_operation_is_told_too,
    a_group_still_running_at_its_next_fire_is_told_as_overran,
    a_group_without_a_success_in_its_window_is_told_once_per_silence,
    a_lost_run_of_a_launch_setting_that_asks_for_failures_is_told_once,
);

const APP_HOOK: &str = "http://127.0.0.1:9/app-hook";

async fn told(db: &DatabaseConnection, event: &str) -> Vec<rows::Model> {
    rows::Entity::find()
        .filter(rows::Column::Event.eq(event))
        .order_by_asc(rows::Column::Id)
        .all(db)
        .await
        .expect("notifications")
}

/// The demo catalog with a webhook on its application, and `demo.echo.1` disabled.
async fn services(db: &DatabaseConnection) -> Services {
    let mut c = demo_catalog();
    c.applications[0].channels.webhook_url = Some(APP_HOOK.into());
    if let Some(l) = c.launch_settings.iter_mut().find(|l| l.id == "demo.echo.1") {
        l.enabled = false;
    }
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("imports");
    Services::new(db.clone(), BrokerStatus::default(), Settings::default())
        .with_runtime(RuntimeConfig::new("t"))
}

async fn a_finished_operation_is_told_to_its_application_with_its_counts(db: &DatabaseConnection) {
    let s = services(db).await;
    let started = operations::start(
        &s,
        &actor(Role::Operator),
        OperationRequest::EnableLaunchSettings {
            ids: vec!["demo.echo.1".into()],
        },
    )
    .await
    .expect("starts");
    assert!(
        told(db, "operation_finished").await.is_empty(),
        "not before it ends"
    );
    let end = operations::run(db, &s.runtime, started.id, &NoBroker)
        .await
        .expect("runs");
    assert_eq!(end, RunEnd::Finished(status::SUCCEEDED));
    let n = told(db, "operation_finished").await;
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].application_id.as_deref(), Some("demo"));
    assert_eq!(n[0].endpoint, APP_HOOK);
    let p = &n[0].payload;
    assert_eq!(p["operation"], started.id.to_string());
    assert_eq!(p["action"], status::SUCCEEDED);
    assert_eq!(p["counts"]["total"], 1);
    assert_eq!(p["counts"]["done"], 1);
    assert_eq!(p["counts"]["failed"], 0);
    assert_eq!(p["url"], format!("/operations/{}", started.id));
}

async fn a_cancelled_operation_is_told_too(db: &DatabaseConnection) {
    let s = services(db).await;
    let operator = actor(Role::Operator);
    let started = operations::start(
        &s,
        &operator,
        OperationRequest::EnableLaunchSettings {
            ids: vec!["demo.echo.1".into()],
        },
    )
    .await
    .expect("starts");
    operations::cancel(db, &operator, started.id)
        .await
        .expect("cancels");
    let n = told(db, "operation_finished").await;
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].payload["action"], status::CANCELLED);
    assert_eq!(n[0].payload["counts"]["done"], 0);
}

async fn a_group_still_running_at_its_next_fire_is_told_as_overran(db: &DatabaseConnection) {
    let cfg = runtime_setup(db).await;
    let mut c = catalog::export(db, &actor(Role::Admin))
        .await
        .expect("exports");
    c.applications[0].channels.webhook_url = Some(APP_HOOK.into());
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("imports");
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    let fire = |at: DateTime<Utc>| Fire::scheduled("demo.nightly", at, Trigger::Schedule);
    let first = now - Duration::minutes(2);
    fires::fire(db, &cfg, &[fire(first)], now, None)
        .await
        .expect("fires");
    assert!(
        told(db, "schedule_missed").await.is_empty(),
        "it was waiting"
    );
    // The first run has not ended when the next fire comes: that one starts too, and is told.
    let second = fires::fire(db, &cfg, &[fire(now)], now, None)
        .await
        .expect("fires again");
    assert!(second[0].1.is_some(), "the fire starts anyway");
    let n = told(db, "schedule_missed").await;
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].group_id.as_deref(), Some("demo.nightly"));
    assert_eq!(n[0].payload["action"], "overran");
}

async fn nightly_row(db: &DatabaseConnection) -> schedule_groups::Model {
    schedule_groups::Entity::find_by_id("demo.nightly".to_owned())
        .one(db)
        .await
        .expect("reads")
        .expect("group")
}

async fn a_group_without_a_success_in_its_window_is_told_once_per_silence(db: &DatabaseConnection) {
    runtime_setup(db).await;
    let mut c = catalog::export(db, &actor(Role::Admin))
        .await
        .expect("exports");
    c.applications[0].channels.webhook_url = Some(APP_HOOK.into());
    let nightly = c
        .schedule_groups
        .iter_mut()
        .find(|g| g.id == "demo.nightly")
        .expect("demo has demo.nightly");
    nightly.expect_success_within = Some("1h".parse().expect("duration"));
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("imports");
    let back = catalog::export(db, &actor(Role::Admin))
        .await
        .expect("exports");
    assert_eq!(
        back.schedule_group("demo.nightly")
            .and_then(|g| g.expect_success_within)
            .map(|d| d.to_string()),
        Some("1h".to_owned()),
        "kept by the catalog"
    );
    let g = nightly_row(db).await;
    let start = g.watch_from.expect("watched since the import");
    watchdog::silent_groups(db, start + Duration::minutes(59))
        .await
        .expect("ticks");
    assert!(
        told(db, "schedule_missed").await.is_empty(),
        "within the window"
    );
    for _ in 0..2 {
        watchdog::silent_groups(db, start + Duration::minutes(61))
            .await
            .expect("ticks");
    }
    let n = told(db, "schedule_missed").await;
    assert_eq!(n.len(), 1, "told once: {n:?}");
    assert_eq!(n[0].payload["action"], "no_success");
    assert_eq!(
        n[0].count, 1,
        "not folded either: the second pass raised nothing"
    );
    // Still silent hours later: nothing new. A success starts a new window.
    watchdog::silent_groups(db, start + Duration::hours(5))
        .await
        .expect("ticks");
    assert_eq!(told(db, "schedule_missed").await.len(), 1);
    let mut row: schedule_groups::ActiveModel = nightly_row(db).await.into();
    row.last_success_at = Set(Some(start + Duration::hours(6)));
    row.update(db).await.expect("a success");
    watchdog::silent_groups(db, start + Duration::hours(7) + Duration::minutes(1))
        .await
        .expect("ticks");
    assert_eq!(told(db, "schedule_missed").await.len(), 2, "a new silence");
}

/// The watchdog tells a lost run as `activation_lost`; when the launch setting's policy then
/// fails it, its `notify_on_failure` does not tell the same run again as `activation_failed`.
async fn a_lost_run_of_a_launch_setting_that_asks_for_failures_is_told_once(
    db: &DatabaseConnection,
) {
    let ls = "demo.fail.nightly";
    let mut c = demo_catalog();
    c.applications[0].channels.webhook_url = Some(APP_HOOK.into());
    for l in c.launch_settings.iter_mut().filter(|l| l.id == ls) {
        l.notify_on_failure = true;
        l.recovery.on_lost = LostPolicy::Fail;
    }
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("imports");
    let cfg = RuntimeConfig::new("t");
    let now = Utc::now();
    node_up(db, "demo-b", now).await;
    let key = EntityRef::LaunchSetting(ls.into());
    let id = run_now(db, &cfg, &actor(Role::Operator), &key)
        .await
        .expect("runs");
    let out = apply(
        db,
        &cfg,
        &[report("demo-b", id, ls, 1, ActivationEvent::Accepted)],
        now,
    )
    .await;
    assert_eq!(out.applied, 1);
    // No heartbeat for a day: the run is lost, and failed by its policy.
    watchdog::tick(db, &cfg, now + Duration::days(1), Listening::Long)
        .await
        .expect("ticks");
    let lost = told(db, "activation_lost").await;
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0].payload["activation"], id.to_string());
    assert!(
        told(db, "activation_failed").await.is_empty(),
        "told once, as lost"
    );
}
