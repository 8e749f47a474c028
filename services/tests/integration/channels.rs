//! Which channel hears what: the events each channel chose, and a schedule group's own webhook
//! and addresses in place of its application's (docs/notifications.md).

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::{notify::Event, roles::Role, usage::EntityRef};
use am_services::{
    catalog,
    entity::{notifications as rows, schedule_groups},
    notifications,
    runtime::{RuntimeConfig, schedule},
};
use chrono::{Duration, Utc};
use sea_orm::{DatabaseConnection, EntityTrait, QueryOrder};

on_both_backends!(
    each_channel_hears_only_the_events_it_chose,
    a_group_with_its_own_channel_is_told_there_with_a_write_only_secret,
);

const APP_HOOK: &str = "http://127.0.0.1:9/app-hook";
const LS_HOOK: &str = "http://127.0.0.1:9/ls-hook";
const GROUP_HOOK: &str = "http://127.0.0.1:9/group-hook";

async fn all(db: &DatabaseConnection) -> Vec<rows::Model> {
    rows::Entity::find()
        .order_by_asc(rows::Column::Id)
        .all(db)
        .await
        .expect("notifications")
}

async fn disable(db: &DatabaseConnection, ls: &str) {
    let key = EntityRef::LaunchSetting(ls.into());
    catalog::set_enabled(db, &actor(Role::Operator), &key, false, "maintenance")
        .await
        .expect("disables");
}

async fn each_channel_hears_only_the_events_it_chose(db: &DatabaseConnection) {
    let mut c = demo_catalog();
    c.applications[0].channels.webhook_url = Some(APP_HOOK.into());
    c.applications[0].channels.webhook_events = vec![Event::BreakerTripped, Event::NodeLost];
    c.applications[0].channels.notify_email = Some("ops@example.com".into());
    if let Some(l) = c.launch_settings.iter_mut().find(|l| l.id == "demo.echo.1") {
        l.channels.webhook_url = Some(LS_HOOK.into());
        l.channels.webhook_events = vec![Event::LaunchSettingDisabled];
    }
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("imports");
    let back = catalog::export(db, &actor(Role::Admin))
        .await
        .expect("exports");
    assert_eq!(
        back.applications[0].channels.webhook_events,
        [Event::BreakerTripped, Event::NodeLost],
        "kept by the catalog"
    );

    // The application's webhook did not choose launch_setting_disabled; its e-mail hears all.
    disable(db, "demo.sleep.nightly").await;
    let n = all(db).await;
    let endpoints: Vec<&str> = n.iter().map(|r| r.endpoint.as_str()).collect();
    assert_eq!(endpoints, ["ops@example.com"], "{n:?}");
    // The launch setting's own webhook chose it.
    disable(db, "demo.echo.1").await;
    let n = all(db).await;
    let endpoints: Vec<&str> = n[1..].iter().map(|r| r.endpoint.as_str()).collect();
    assert_eq!(endpoints, [LS_HOOK, "ops@example.com"], "{n:?}");

    // A Send test reaches a channel whatever it chose.
    let admin = actor(Role::Admin);
    let key = EntityRef::Application("demo".into());
    let id = notifications::send_test(db, &admin, &key, None)
        .await
        .expect("tests");
    let test = all(db)
        .await
        .into_iter()
        .find(|r| r.id == id)
        .expect("queued");
    assert_eq!(test.endpoint, APP_HOOK);
}

async fn a_group_with_its_own_channel_is_told_there_with_a_write_only_secret(
    db: &DatabaseConnection,
) {
    let mut c = demo_catalog();
    c.applications[0].channels.webhook_url = Some(APP_HOOK.into());
    let nightly = c
        .schedule_groups
        .iter_mut()
        .find(|g| g.id == "demo.nightly")
        .expect("demo has demo.nightly");
    nightly.channels.webhook_url = Some(GROUP_HOOK.into());
    nightly.channels.webhook_secret = Some("group-secret".into());
    let admin = actor(Role::Admin);
    catalog::import(db, &admin, c).await.expect("imports");

    // What is told about the group goes to its own webhook, signed with its own secret.
    let cfg = RuntimeConfig::new("t");
    schedule::record_skip(db, &cfg, "demo.nightly", Utc::now() - Duration::hours(2))
        .await
        .expect("records");
    let n = all(db).await;
    assert_eq!(n.len(), 1, "{n:?}");
    assert_eq!(n[0].event, "schedule_missed");
    assert_eq!(n[0].endpoint, GROUP_HOOK);
    assert_eq!(n[0].secret.as_deref(), Some("group-secret"));
    assert_eq!(n[0].application_id.as_deref(), Some("demo"));

    // The secret is never shown, and an export imported back keeps it.
    let exported = catalog::export(db, &admin).await.expect("exports");
    let json = serde_json::to_string(&exported).expect("json");
    assert!(!json.contains("group-secret"), "{json}");
    catalog::import(db, &admin, exported)
        .await
        .expect("imports back");
    let stored = |db: &DatabaseConnection| {
        let db = db.clone();
        async move {
            schedule_groups::Entity::find_by_id("demo.nightly".to_owned())
                .one(&db)
                .await
                .expect("reads")
                .expect("group")
                .webhook_secret
        }
    };
    assert_eq!(stored(db).await.as_deref(), Some("group-secret"));
    let key = EntityRef::ScheduleGroup("demo.nightly".into());
    catalog::set_webhook_secret(db, &admin, &key, "")
        .await
        .expect("removes");
    assert_eq!(stored(db).await, None);

    // Send test on the group goes to the group's webhook.
    let id = notifications::send_test(db, &admin, &key, None)
        .await
        .expect("tests");
    let test = all(db)
        .await
        .into_iter()
        .find(|r| r.id == id)
        .expect("queued");
    assert_eq!(test.endpoint, GROUP_HOOK);
    assert_eq!(test.group_id.as_deref(), Some("demo.nightly"));
}
