//! Notifications on the database: raised in the transaction of their event for the webhook
//! that wants them, repeats folded, secrets write-only through catalog writes, claimed by one
//! replica at a time, retried with growing delays, given up, resent.

use super::{
    actor,
    dead_letters::given_up,
    demo_catalog,
    runtime::{apply, node_up, report},
};
use crate::on_both_backends;
use am_domain::read::notifications::NotificationFilter;
use am_domain::{
    notify::{Delivery, Event},
    roles::Role,
    usage::EntityRef,
    wire::{ActivationEvent, ActivationResult},
};
use am_services::{
    ServiceError, catalog,
    entity::{applications, notifications as rows},
    notifications::{
        self,
        delivery::{self, Retry},
    },
    registry,
    runtime::{RuntimeConfig, run::run_now},
};
use chrono::{Duration, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
};

on_both_backends!(
    a_disable_is_told_to_the_webhook_that_wants_it_and_repeats_fold,
    secrets_are_kept_through_export_and_import_and_never_shown,
    a_delivery_is_claimed_once_retried_given_up_and_resent,
    a_lost_node_and_its_return_are_told_once_each,
    dead_letters_reaching_the_threshold_are_told_once_per_crossing,
    a_skipped_misfire_is_told_once,
    a_chat_webhook_is_queued_as_chat_and_its_format_round_trips,
    e_mail_goes_beside_the_webhook_each_channel_chosen_on_its_own,
    a_failed_run_is_told_only_when_its_launch_setting_asks,
);

const APP_HOOK: &str = "http://127.0.0.1:9/app-hook";
const LS_HOOK: &str = "http://127.0.0.1:9/ls-hook";

async fn setup(db: &DatabaseConnection) {
    let mut c = demo_catalog();
    c.applications[0].channels.webhook_url = Some(APP_HOOK.into());
    c.applications[0].channels.webhook_secret = Some("app-secret".into());
    if let Some(l) = c.launch_settings.iter_mut().find(|l| l.id == "demo.echo.1") {
        l.channels.webhook_url = Some(LS_HOOK.into());
    }
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("imports");
}

async fn all(db: &DatabaseConnection) -> Vec<rows::Model> {
    rows::Entity::find()
        .order_by_asc(rows::Column::Id)
        .all(db)
        .await
        .expect("notifications")
}

async fn disable(db: &DatabaseConnection, ls: &str, why: &str) {
    let key = EntityRef::LaunchSetting(ls.into());
    catalog::set_enabled(db, &actor(Role::Operator), &key, false, why)
        .await
        .expect("disables");
}

async fn a_disable_is_told_to_the_webhook_that_wants_it_and_repeats_fold(db: &DatabaseConnection) {
    setup(db).await;
    let operator = actor(Role::Operator);
    disable(db, "demo.sleep.nightly", "maintenance").await;
    let n = all(db).await;
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].event, "launch_setting_disabled");
    assert_eq!(n[0].endpoint, APP_HOOK);
    assert_eq!(n[0].secret.as_deref(), Some("app-secret"));
    assert_eq!(n[0].status, "pending");
    assert_eq!(n[0].application_id.as_deref(), Some("demo"));
    let page = notifications::list(
        db,
        &actor(Role::Viewer),
        &NotificationFilter::default(),
        None,
        None,
    )
    .await
    .expect("lists");
    let entry = &page.items[0];
    assert_eq!(entry.payload.url, "/launch-settings/demo.sleep.nightly");
    assert_eq!(
        entry.payload.reason.as_deref(),
        Some("test-operator: maintenance")
    );
    assert_eq!(entry.payload.application.as_deref(), Some("demo"));
    assert!(entry.signed);

    // Enabled and disabled again within the window: the same notification, counted twice.
    let key = EntityRef::LaunchSetting("demo.sleep.nightly".into());
    catalog::set_enabled(db, &operator, &key, true, "back")
        .await
        .expect("enables");
    disable(db, "demo.sleep.nightly", "again").await;
    let n = all(db).await;
    assert_eq!(n.len(), 1, "folded");
    assert_eq!(n[0].count, 2);
    assert_eq!(n[0].payload["count"], 2);

    // A launch setting with its own webhook: there, unsigned, not to the application's.
    disable(db, "demo.echo.1", "noisy").await;
    let n = all(db).await;
    assert_eq!(n.len(), 2);
    assert_eq!(n[1].endpoint, LS_HOOK);
    assert_eq!(n[1].secret, None);

    // A group, told to its application's webhook.
    catalog::set_enabled(
        db,
        &operator,
        &EntityRef::ScheduleGroup("demo.nightly".into()),
        false,
        "paused",
    )
    .await
    .expect("disables");
    let n = all(db).await;
    assert_eq!(n.len(), 3);
    assert_eq!(n[2].event, "schedule_group_disabled");
    assert_eq!(n[2].group_id.as_deref(), Some("demo.nightly"));
    assert_eq!(n[2].endpoint, APP_HOOK);

    // A disable that fails writes nothing.
    let e = catalog::set_enabled(
        db,
        &operator,
        &EntityRef::LaunchSetting("nope".into()),
        false,
        "x",
    )
    .await
    .expect_err("unknown");
    assert!(matches!(e, ServiceError::NotFound(_)), "{e:?}");
    assert_eq!(all(db).await.len(), 3);

    // Filters.
    let only = |event: &str| NotificationFilter {
        event: Some(event.into()),
        ..NotificationFilter::default()
    };
    let page = notifications::list(db, &operator, &only("schedule_group_disabled"), None, None)
        .await
        .expect("lists");
    assert_eq!(page.items.len(), 1);
    let e = notifications::list(db, &operator, &only("breaker"), None, None)
        .await
        .expect_err("unknown event");
    let ServiceError::Invalid(errors) = e else {
        panic!("{e:?}")
    };
    assert_eq!(errors.0[0].path, "event");
    let page = notifications::list(db, &operator, &NotificationFilter::default(), None, Some(2))
        .await
        .expect("lists");
    assert_eq!(page.items.len(), 2);
    assert_eq!(
        page.items[0].event,
        Event::ScheduleGroupDisabled,
        "newest first"
    );
    let rest = notifications::list(
        db,
        &operator,
        &NotificationFilter::default(),
        page.next,
        Some(2),
    )
    .await
    .expect("lists");
    assert_eq!(rest.items.len(), 1);
    assert_eq!(rest.next, None);
}

async fn stored_secret(db: &DatabaseConnection) -> Option<String> {
    applications::Entity::find_by_id("demo")
        .one(db)
        .await
        .expect("query")
        .expect("application")
        .webhook_secret
}

async fn secrets_are_kept_through_export_and_import_and_never_shown(db: &DatabaseConnection) {
    setup(db).await;
    let admin = actor(Role::Admin);
    let exported = catalog::export(db, &admin).await.expect("exports");
    let json = serde_json::to_string(&exported).expect("json");
    assert!(!json.contains("app-secret") && !json.contains("webhook_secret"));

    // The export imported back: nothing changes, the secret stays.
    let summary = catalog::import(db, &admin, exported.clone())
        .await
        .expect("imports");
    assert!(summary.is_empty(), "{summary:?}");
    assert_eq!(stored_secret(db).await.as_deref(), Some("app-secret"));

    // A new one replaces it; an empty one removes it.
    let mut c = exported.clone();
    c.applications[0].channels.webhook_secret = Some("rotated".into());
    catalog::import(db, &admin, c).await.expect("imports");
    assert_eq!(stored_secret(db).await.as_deref(), Some("rotated"));
    let mut c = exported;
    c.applications[0].channels.webhook_secret = Some(String::new());
    catalog::import(db, &admin, c).await.expect("imports");
    assert_eq!(stored_secret(db).await, None);

    // Set and removed on their own (the forms' way), by admins only.
    let app = EntityRef::Application("demo".into());
    let e = catalog::set_webhook_secret(db, &actor(Role::Operator), &app, "x")
        .await
        .expect_err("operators may not");
    assert!(matches!(e, ServiceError::Forbidden { .. }), "{e:?}");
    catalog::set_webhook_secret(db, &admin, &app, "from-the-form")
        .await
        .expect("sets");
    assert_eq!(stored_secret(db).await.as_deref(), Some("from-the-form"));
    let e = catalog::set_webhook_secret(db, &admin, &EntityRef::Pool("p".into()), "x")
        .await
        .expect_err("a pool has no webhook");
    assert!(matches!(e, ServiceError::Invalid(_)), "{e:?}");

    // Send test: a `test` notification to the webhook, at once, unfolded.
    let operator = actor(Role::Operator);
    let first = notifications::send_test(db, &operator, &app, None)
        .await
        .expect("queues");
    let second = notifications::send_test(db, &operator, &app, None)
        .await
        .expect("queues");
    assert_ne!(first, second, "a test is never folded");
    let n = notifications::get(db, &operator, first)
        .await
        .expect("reads");
    assert_eq!(n.event, Event::Test);
    assert_eq!(n.endpoint, APP_HOOK);
    assert!(n.signed);
    let ls = EntityRef::LaunchSetting("demo.echo.1".into());
    let n = notifications::get(
        db,
        &operator,
        notifications::send_test(db, &operator, &ls, None)
            .await
            .expect("queues"),
    )
    .await
    .expect("reads");
    assert_eq!(n.endpoint, LS_HOOK);
    assert_eq!(n.application.as_deref(), Some("demo"));
    catalog::set_webhook_secret(db, &admin, &app, "")
        .await
        .expect("removes");
    assert_eq!(stored_secret(db).await, None);
    let mut c = catalog::export(db, &admin).await.expect("exports");
    c.applications[0].channels.webhook_url = None;
    catalog::import(db, &admin, c).await.expect("imports");
    let e = notifications::send_test(db, &operator, &app, None)
        .await
        .expect_err("no webhook");
    let ServiceError::Invalid(errors) = e else {
        panic!("{e:?}")
    };
    assert_eq!(errors.0[0].path, "webhook_url");
}

async fn a_delivery_is_claimed_once_retried_given_up_and_resent(db: &DatabaseConnection) {
    setup(db).await;
    disable(db, "demo.sleep.nightly", "maintenance").await;
    let now = Utc::now();
    let claimed = delivery::claim(db, "a", now, 10).await.expect("claims");
    assert_eq!(claimed.len(), 1);
    assert!(
        delivery::claim(db, "b", now, 10)
            .await
            .expect("claims")
            .is_empty(),
        "held by a"
    );

    let retry = Retry {
        first: Duration::seconds(10),
        budget: Duration::hours(1),
    };
    let status = delivery::attempt_failed(
        db,
        &claimed[0],
        "a",
        "the endpoint answered 500",
        retry,
        now,
    )
    .await
    .expect("records");
    assert_eq!(status, Delivery::Pending);
    assert!(
        delivery::claim(db, "b", now + Duration::seconds(5), 10)
            .await
            .expect("claims")
            .is_empty(),
        "not due yet"
    );
    let second = delivery::claim(db, "b", now + Duration::seconds(11), 10)
        .await
        .expect("claims");
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].attempts, 1);
    // A's claim is gone: what it would record now is ignored.
    assert!(
        !delivery::delivered(db, second[0].id, "a", now)
            .await
            .expect("cas")
    );
    let later = now + Duration::seconds(12);
    let status = delivery::attempt_failed(db, &second[0], "b", "again", retry, later)
        .await
        .expect("records");
    assert_eq!(status, Delivery::Pending);
    let row = &all(db).await[0];
    assert_eq!(row.attempts, 2);
    let due = row.next_attempt_at - (later + Duration::seconds(20));
    assert!(due.num_milliseconds().abs() < 1, "the delay doubles: {due}");

    // Past the budget: failed, with the last error.
    let third = delivery::claim(db, "c", later + Duration::seconds(21), 10)
        .await
        .expect("claims");
    let spent = Retry {
        budget: Duration::zero(),
        ..retry
    };
    let status = delivery::attempt_failed(db, &third[0], "c", "still 500", spent, later)
        .await
        .expect("records");
    assert_eq!(status, Delivery::Failed);
    let row = &all(db).await[0];
    assert_eq!((row.status.as_str(), row.attempts), ("failed", 3));
    assert_eq!(row.last_error.as_deref(), Some("still 500"));
    assert_eq!(notifications::failed_count(db).await.expect("count"), 1);

    // Resend: operators only, pending again and due now; not while pending.
    let e = notifications::resend(db, &actor(Role::Viewer), row.id)
        .await
        .expect_err("viewers may not");
    assert!(matches!(e, ServiceError::Forbidden { .. }), "{e:?}");
    notifications::resend(db, &actor(Role::Operator), row.id)
        .await
        .expect("resends");
    let e = notifications::resend(db, &actor(Role::Operator), row.id)
        .await
        .expect_err("pending");
    assert!(matches!(e, ServiceError::Conflict(_)), "{e:?}");
    let again = delivery::claim(db, "d", Utc::now() + Duration::seconds(1), 10)
        .await
        .expect("claims");
    assert_eq!(again.len(), 1);
    assert!(
        delivery::delivered(db, again[0].id, "d", Utc::now())
            .await
            .expect("cas")
    );
    let row = &all(db).await[0];
    assert_eq!((row.status.as_str(), row.attempts), ("delivered", 4));
    assert!(row.delivered_at.is_some());
    assert_eq!(notifications::failed_count(db).await.expect("count"), 0);
}

async fn a_lost_node_and_its_return_are_told_once_each(db: &DatabaseConnection) {
    setup(db).await;
    let t0 = Utc::now();
    node_up(db, "demo-a", t0).await;
    let timeout = Duration::seconds(30);
    let later = t0 + Duration::seconds(31);
    let lost = registry::mark_lost(db, later, timeout)
        .await
        .expect("marks");
    assert_eq!(lost, [("demo".to_owned(), "demo-a".to_owned())]);
    assert!(
        registry::mark_lost(db, later, timeout)
            .await
            .expect("marks")
            .is_empty()
    );
    let n = all(db).await;
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].event, "node_lost");
    assert_eq!(n[0].payload["host"], "demo-a");
    assert_eq!(n[0].payload["url"], "/nodes#host-demo-a");

    node_up(db, "demo-a", later).await;
    node_up(db, "demo-a", later).await;
    let n = all(db).await;
    assert_eq!(n.len(), 2, "one node_back, not one per heartbeat");
    assert_eq!(n[1].event, "node_back");
    let back = rows::Entity::find()
        .filter(rows::Column::Event.eq("node_back"))
        .count(db)
        .await
        .expect("count");
    assert_eq!(back, 1);
}

async fn dead_letters_reaching_the_threshold_are_told_once_per_crossing(db: &DatabaseConnection) {
    let mut c = demo_catalog();
    c.applications[0].channels.webhook_url = Some(APP_HOOK.into());
    let ls = "demo.poison.1";
    if let Some(l) = c.launch_settings.iter_mut().find(|l| l.id == ls) {
        l.dead_letter.notify_threshold = Some(3);
    }
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("imports");
    let names = am_domain::wire::names::Names::new("am");
    let m = |i: usize| given_up(ls, "demo.events", "Poisoned", &format!("m-{i}"), "{}");
    let store = |batch: Vec<_>| {
        let names = names.clone();
        async move {
            am_services::dead_letters::store(db, &names, &batch, Utc::now())
                .await
                .expect("stores")
        }
    };
    let told = || async {
        rows::Entity::find()
            .filter(rows::Column::Event.eq("dead_letters_threshold"))
            .all(db)
            .await
            .expect("notifications")
    };
    store(vec![m(0), m(1)]).await;
    assert!(told().await.is_empty(), "2 of 3: not yet");
    store(vec![m(2), m(3)]).await;
    let n = told().await;
    assert_eq!(n.len(), 1, "the batch crossed it");
    assert_eq!(n[0].launch_setting_id.as_deref(), Some(ls));
    assert_eq!(
        n[0].payload["url"],
        "/dead-letters?launch_setting=demo.poison.1&status=dead"
    );
    store(vec![m(4)]).await;
    assert_eq!(told().await[0].count, 1, "above it already: nothing more");

    // Below it again (deleted), then over it: told again, folded within the window.
    let ids: Vec<i64> = am_services::entity::dead_letters::Entity::find()
        .all(db)
        .await
        .expect("dead letters")
        .into_iter()
        .map(|d| d.id)
        .collect();
    am_services::dead_letters::delete(db, &ids)
        .await
        .expect("deletes");
    store(vec![m(5), m(6), m(7)]).await;
    let n = told().await;
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].count, 2);
}

async fn a_skipped_misfire_is_told_once(db: &DatabaseConnection) {
    setup(db).await;
    let cfg = am_services::runtime::RuntimeConfig::new("t");
    let fire = Utc::now() - Duration::hours(2);
    for _ in 0..2 {
        am_services::runtime::schedule::record_skip(db, &cfg, "demo.nightly", fire)
            .await
            .expect("records");
    }
    let n = all(db).await;
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].event, "schedule_missed");
    assert_eq!(n[0].group_id.as_deref(), Some("demo.nightly"));
    assert_eq!(
        n[0].count, 1,
        "the second record found it recorded: nothing raised"
    );
    assert_eq!(n[0].payload["url"], "/schedule-groups/demo.nightly");
}

async fn a_chat_webhook_is_queued_as_chat_and_its_format_round_trips(db: &DatabaseConnection) {
    setup(db).await;
    let admin = actor(Role::Admin);
    let mut c = catalog::export(db, &admin).await.expect("exports");
    let json = serde_json::to_string(&c).expect("json");
    assert!(!json.contains("webhook_format"), "the default is left out");
    if let Some(l) = c.launch_settings.iter_mut().find(|l| l.id == "demo.echo.1") {
        l.channels.webhook_format = am_domain::notify::WebhookFormat::Chat;
    }
    catalog::import(db, &admin, c).await.expect("imports");
    let back = catalog::export(db, &admin).await.expect("exports");
    let ls = back
        .launch_setting("demo.echo.1")
        .expect("the launch setting");
    assert_eq!(
        ls.channels.webhook_format,
        am_domain::notify::WebhookFormat::Chat
    );
    assert!(
        serde_json::to_string(&back)
            .expect("json")
            .contains(r#""webhook_format":"chat""#)
    );

    disable(db, "demo.echo.1", "noisy").await;
    disable(db, "demo.sleep.nightly", "maintenance").await;
    let n = all(db).await;
    assert_eq!(n.len(), 2);
    assert_eq!(
        (n[0].endpoint.as_str(), n[0].channel.as_str()),
        (LS_HOOK, "chat")
    );
    assert_eq!(
        (n[1].endpoint.as_str(), n[1].channel.as_str()),
        (APP_HOOK, "webhook")
    );
}

async fn e_mail_goes_beside_the_webhook_each_channel_chosen_on_its_own(db: &DatabaseConnection) {
    setup(db).await;
    let admin = actor(Role::Admin);
    let mut c = catalog::export(db, &admin).await.expect("exports");
    c.applications[0].channels.notify_email = Some("ops@example.org, oncall@example.org".into());
    if let Some(l) = c
        .launch_settings
        .iter_mut()
        .find(|l| l.id == "demo.sleep.nightly")
    {
        l.channels.notify_email = Some(" billing@example.org ".into());
    }
    catalog::import(db, &admin, c.clone())
        .await
        .expect("imports");
    let back = catalog::export(db, &admin).await.expect("exports");
    assert_eq!(
        back.applications[0].channels.notify_email.as_deref(),
        Some("ops@example.org, oncall@example.org"),
        "the list round-trips through export"
    );

    // A bad address is refused with where it is, and nothing is written.
    let mut bad = back.clone();
    bad.applications[0].channels.notify_email = Some("ops@example.org, not-an-address".into());
    let e = catalog::import(db, &admin, bad).await.expect_err("refused");
    let ServiceError::Invalid(errors) = e else {
        panic!("{e:?}")
    };
    assert_eq!(errors.0[0].path, "applications[0].notify_email");
    assert!(
        errors.0[0].message.contains("'not-an-address'"),
        "{errors:?}"
    );
    assert_eq!(
        catalog::export(db, &admin).await.expect("exports"),
        back,
        "unchanged"
    );

    // demo.echo.1 has its own webhook and no e-mail: its webhook and the application's list.
    disable(db, "demo.echo.1", "noisy").await;
    // demo.sleep.nightly has its own list and no webhook: the application's webhook and its list.
    disable(db, "demo.sleep.nightly", "maintenance").await;
    let sent: Vec<(String, String)> = all(db)
        .await
        .into_iter()
        .map(|n| (n.channel, n.endpoint))
        .collect();
    let pair = |c: &str, e: &str| (c.to_owned(), e.to_owned());
    assert_eq!(
        sent,
        [
            pair("webhook", LS_HOOK),
            pair("email", "ops@example.org, oncall@example.org"),
            pair("webhook", APP_HOOK),
            pair("email", "billing@example.org"),
        ]
    );

    // Send test picks the channel asked for.
    let operator = actor(Role::Operator);
    let app = EntityRef::Application("demo".into());
    let id = notifications::send_test(db, &operator, &app, Some(am_domain::notify::Channel::Email))
        .await
        .expect("queues");
    let n = notifications::get(db, &operator, id).await.expect("reads");
    assert_eq!(n.channel, "email");
    assert_eq!(n.endpoint, "ops@example.org, oncall@example.org");
    assert!(!n.signed);
    let mut c = catalog::export(db, &admin).await.expect("exports");
    c.applications[0].channels.notify_email = None;
    catalog::import(db, &admin, c).await.expect("imports");
    let e = notifications::send_test(db, &operator, &app, Some(am_domain::notify::Channel::Email))
        .await
        .expect_err("no addresses");
    let ServiceError::Invalid(errors) = e else {
        panic!("{e:?}")
    };
    assert_eq!(errors.0[0].path, "notify_email");
}

/// Runs `ls` on `host` and has the node report it ended with `result`; returns the activation.
async fn run_ending(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    ls: &str,
    host: &str,
    result: ActivationResult,
) -> uuid::Uuid {
    let key = EntityRef::LaunchSetting(ls.into());
    let id = run_now(db, cfg, &actor(Role::Operator), &key)
        .await
        .expect("runs");
    let end = ActivationEvent::Finished {
        result,
        error: (result == ActivationResult::Failed).then(|| "DbTimeout: no answer in 30 s".into()),
        counters: None,
    };
    let out = apply(
        db,
        cfg,
        &[
            report(host, id, ls, 1, ActivationEvent::Accepted),
            report(host, id, ls, 1, end),
        ],
        Utc::now(),
    )
    .await;
    assert_eq!(out.applied, 2);
    id
}

/// `activation_failed` is opt-in per launch setting: a failed run of one that asks is told
/// with its error and a link to the activation, in the transaction that ends it; a second
/// failure within the folding window is counted on the first; a success, or a failure of a
/// launch setting that does not ask, tells nothing.
async fn a_failed_run_is_told_only_when_its_launch_setting_asks(db: &DatabaseConnection) {
    let mut c = demo_catalog();
    c.applications[0].channels.webhook_url = Some(APP_HOOK.into());
    let asks = "demo.fail.nightly";
    let quiet = "demo.sleep.nightly";
    for l in c.launch_settings.iter_mut().filter(|l| l.id == asks) {
        l.notify_on_failure = true;
    }
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("imports");
    let exported = catalog::export(db, &actor(Role::Viewer))
        .await
        .expect("exports");
    let flags: Vec<(&str, bool)> = exported
        .launch_settings
        .iter()
        .map(|l| (l.id.as_str(), l.notify_on_failure))
        .filter(|(_, on)| *on)
        .collect();
    assert_eq!(flags, vec![(asks, true)], "the flag round-trips");
    let cfg = RuntimeConfig::new("t");
    node_up(db, "demo-b", Utc::now()).await;

    run_ending(db, &cfg, quiet, "demo-b", ActivationResult::Failed).await;
    run_ending(db, &cfg, asks, "demo-b", ActivationResult::Succeeded).await;
    assert!(all(db).await.is_empty(), "nothing asked for: nothing told");

    let failed = run_ending(db, &cfg, asks, "demo-b", ActivationResult::Failed).await;
    let told = all(db).await;
    assert_eq!(told.len(), 1, "{told:?}");
    let n = &told[0];
    assert_eq!(n.event, Event::ActivationFailed.as_str());
    assert_eq!(n.endpoint, APP_HOOK);
    assert_eq!(n.launch_setting_id.as_deref(), Some(asks));
    assert_eq!(n.application_id.as_deref(), Some("demo"));
    assert_eq!(n.payload["activation"], failed.to_string());
    assert_eq!(n.payload["error_message"], "DbTimeout: no answer in 30 s");
    assert_eq!(n.payload["url"], format!("/activations/{failed}"));

    run_ending(db, &cfg, asks, "demo-b", ActivationResult::Failed).await;
    let told = all(db).await;
    assert_eq!(told.len(), 1, "the repeat folds into the first");
    assert_eq!(told[0].count, 2);
}
