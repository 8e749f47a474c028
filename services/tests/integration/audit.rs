//! Reading the audit log: logins (with their address and the reason a login failed), catalog
//! changes with their cause, filters, pages and secrets that never reach it.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::read::audit::AuditFilter;
use am_domain::{roles::Role, usage::EntityRef};
use am_services::{
    ServiceError, Services, Settings, accounts, audit, catalog, health::BrokerStatus,
};
use sea_orm::DatabaseConnection;
use serde_json::json;

on_both_backends!(
    logins_are_audited_with_their_address_and_failures_with_why,
    catalog_changes_are_filtered_and_paged_without_secrets,
);

fn filter(f: impl FnOnce(&mut AuditFilter)) -> AuditFilter {
    let mut out = AuditFilter::default();
    f(&mut out);
    out
}

async fn logins_are_audited_with_their_address_and_failures_with_why(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    accounts::create_user(db, &admin, "vera", "correct horse battery", Role::Viewer)
        .await
        .expect("user");
    let s = Services::new(db.clone(), BrokerStatus::default(), Settings::default());
    let p = accounts::authenticate(&s, "vera", "correct horse battery", "10.0.0.7")
        .await
        .expect("login");
    assert_eq!(p.address.as_deref(), Some("10.0.0.7"));
    assert!(
        accounts::authenticate(&s, "vera", "wrong", "10.0.0.8")
            .await
            .is_err()
    );
    assert!(
        accounts::authenticate(&s, &"x".repeat(5000), "wrong", "10.0.0.9")
            .await
            .is_err()
    );
    let logins = audit::list(
        db,
        &admin,
        &filter(|f| f.entity_type = Some("user".into())),
        None,
        100,
    )
    .await
    .expect("lists");
    let seen: Vec<(&str, &str, Option<&str>, Option<&str>)> = logins
        .entries
        .iter()
        .map(|e| {
            (
                e.action.as_str(),
                e.entity_id.as_str(),
                e.address.as_deref(),
                e.cause.as_deref(),
            )
        })
        .collect();
    let long = "x".repeat(100);
    assert_eq!(
        seen,
        [
            (
                "login_failed",
                long.as_str(),
                Some("10.0.0.9"),
                Some("no such user")
            ),
            (
                "login_failed",
                "vera",
                Some("10.0.0.8"),
                Some("wrong password")
            ),
            ("login", "vera", Some("10.0.0.7"), None),
            ("create", "vera", None, None),
        ],
        "newest first; a sent name is stored at most 100 characters long"
    );
    // Anyone but an admin reads neither the names typed nor why they failed.
    let as_viewer = audit::list(
        db,
        &p,
        &filter(|f| f.entity_type = Some("user".into())),
        None,
        100,
    )
    .await
    .expect("lists");
    let failed: Vec<(&str, &str, Option<&str>)> = as_viewer
        .entries
        .iter()
        .filter(|e| e.action == "login_failed")
        .map(|e| (e.actor.as_str(), e.entity_id.as_str(), e.cause.as_deref()))
        .collect();
    assert_eq!(failed, [("(hidden)", "(hidden)", None); 2]);
}

async fn catalog_changes_are_filtered_and_paged_without_secrets(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    catalog::import(db, &admin, demo_catalog())
        .await
        .expect("imports");
    let key = EntityRef::LaunchSetting("demo.echo.1".into());
    catalog::set_enabled(db, &actor(Role::Operator), &key, false, "maintenance")
        .await
        .expect("disables");
    catalog::set_webhook_secret(
        db,
        &admin,
        &EntityRef::Application("demo".into()),
        "hush-hush",
    )
    .await
    .expect("secret set");
    let viewer = actor(Role::Viewer);
    let history = filter(|f| {
        f.entity_type = Some("launch_setting".into());
        f.entity_id = Some("demo.echo.1".into());
    });
    let page = audit::list(db, &viewer, &history, None, 1)
        .await
        .expect("lists");
    assert_eq!(page.entries.len(), 1);
    let newest = &page.entries[0];
    assert_eq!(
        (newest.action.as_str(), newest.cause.as_deref()),
        ("update", Some("maintenance"))
    );
    let changes = am_domain::audit::changes(newest.before.as_ref(), newest.after.as_ref());
    assert_eq!(
        changes.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        ["enabled"],
        "only what changed"
    );
    assert_eq!(
        (changes[0].before.clone(), changes[0].after.clone()),
        (Some(json!(true)), Some(json!(false))),
        "a disable reads true → false"
    );
    let rest = audit::list(db, &viewer, &history, page.next, 100)
        .await
        .expect("next page");
    assert_eq!(rest.entries.len(), 1);
    assert_eq!(rest.entries[0].action, "create");
    assert_eq!(rest.next, None);

    // Whoever acted, in a time range; a range that ends before it starts is refused by name.
    let by_operator = audit::list(
        db,
        &viewer,
        &filter(|f| {
            f.actor = Some(actor(Role::Operator).name);
            f.from = Some("2000-01-01".into());
            f.to = Some("2999-01-01T00:00".into());
        }),
        None,
        100,
    )
    .await
    .expect("lists");
    assert_eq!(by_operator.entries.len(), 1);
    let refused = audit::list(
        db,
        &viewer,
        &filter(|f| {
            f.from = Some("2030-01-02".into());
            f.to = Some("2030-01-01".into());
        }),
        None,
        100,
    )
    .await;
    assert!(
        matches!(refused, Err(ServiceError::Invalid(_))),
        "{refused:?}"
    );

    // No secret anywhere in the log.
    let all = audit::export_page(db, &viewer, &AuditFilter::default(), None)
        .await
        .expect("exports");
    let text = serde_json::to_string(&all.entries).expect("json");
    assert!(!text.contains("hush-hush"));
}
