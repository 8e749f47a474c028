//! Reading the catalog for pages: filtered, paginated lists and classifier search.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::{
    catalog::{Agent, ClassifierValue, LaunchSetting, Pool},
    roles::Role,
};
use am_services::{
    catalog::{self, ListFilter},
    classifiers,
};
use sea_orm::DatabaseConnection;
use std::time::{Duration, Instant};

on_both_backends!(
    lists_are_filtered_and_paginated_on_the_server,
    classifier_search_is_paged_case_insensitive_and_fast,
    classifier_lookup_returns_known_codes_only,
    run_status_follows_enable_and_disable,
);

async fn lists_are_filtered_and_paginated_on_the_server(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    let viewer = actor(Role::Viewer);
    let mut c = demo_catalog();
    for i in 0..30 {
        c.pools.push(Pool {
            id: format!("pool-{i:02}"),
            title: format!("Pool number {i}"),
            hosts: vec![format!("host-{i}")],
        });
    }
    catalog::import(db, &admin, c).await.expect("import");

    let page = |text: &str, application: &str, offset, limit| ListFilter {
        text: text.into(),
        application: application.into(),
        offset,
        limit,
    };
    let all = catalog::browse::<Pool>(db, &viewer, &page("", "", 0, 10))
        .await
        .expect("browse");
    assert_eq!(all.total, 31);
    assert_eq!(all.items.len(), 10);
    assert_eq!(all.items[0].id, "demo-pool");
    let third = catalog::browse::<Pool>(db, &viewer, &page("", "", 30, 10))
        .await
        .expect("browse");
    assert_eq!(third.items.len(), 1);
    // The text matches ids, titles and (for pools) hosts, whatever the case.
    let by_host = catalog::browse::<Pool>(db, &viewer, &page("HOST-7", "", 0, 10))
        .await
        .expect("browse");
    assert_eq!(
        by_host
            .items
            .iter()
            .map(|p| p.id.as_str())
            .collect::<Vec<_>>(),
        ["pool-07"]
    );
    let agents = catalog::browse::<Agent>(db, &viewer, &page("", "demo", 0, 100))
        .await
        .expect("browse");
    assert_eq!(agents.total, 5);
    let none = catalog::browse::<Agent>(db, &viewer, &page("", "other", 0, 100))
        .await
        .expect("browse");
    assert_eq!(none.total, 0);
    let stream = catalog::browse::<LaunchSetting>(db, &viewer, &page("flaky", "", 0, 100))
        .await
        .expect("browse");
    assert_eq!(stream.total, 1);
    // The overview leaves classifier values out.
    let overview = catalog::overview(db, &viewer).await.expect("overview");
    assert_eq!(overview.classifiers.len(), 1);
    assert!(overview.classifiers[0].values.is_empty());
}

async fn classifier_search_is_paged_case_insensitive_and_fast(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    let viewer = actor(Role::Viewer);
    let mut c = demo_catalog();
    c.classifiers[0].values = (0..50_000)
        .map(|i| ClassifierValue {
            code: format!("org-{i:05}"),
            label: format!("Organisation {i:05} of 100%_pure"),
        })
        .collect();
    c.launch_settings.retain(|l| l.agent != "echo");
    for g in &mut c.schedule_groups {
        g.members
            .retain(|m| c.launch_settings.iter().any(|l| &l.id == m));
    }
    catalog::import(db, &admin, c).await.expect("import");

    let started = Instant::now();
    let first = classifiers::search(db, &viewer, "demo", "organisations", "", 20)
        .await
        .expect("search");
    assert_eq!(first.values.len(), 20);
    assert!(first.more);
    assert_eq!(first.values[0].code, "org-00000");
    let one = classifiers::search(
        db,
        &viewer,
        "demo",
        "organisations",
        "ORGANISATION 04242",
        20,
    )
    .await
    .expect("search");
    assert_eq!(one.values.len(), 1);
    assert_eq!(one.values[0].code, "org-04242");
    assert!(!one.more);
    let by_code = classifiers::search(db, &viewer, "demo", "organisations", "org-4999", 20)
        .await
        .expect("search");
    assert_eq!(by_code.values.len(), 10, "org-49990 to org-49999");
    // LIKE wildcards in the text are literal: `%_` matches only labels containing them.
    let literal = classifiers::search(db, &viewer, "demo", "organisations", "0%_", 5)
        .await
        .expect("search");
    assert_eq!(literal.values.len(), 5);
    let nothing = classifiers::search(db, &viewer, "demo", "organisations", "x%y", 5)
        .await
        .expect("search");
    assert!(nothing.values.is_empty());
    let none = classifiers::search(db, &viewer, "demo", "missing", "", 5)
        .await
        .expect("search");
    assert!(none.values.is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "searches over 50,000 values took {:?}",
        started.elapsed()
    );
}

async fn classifier_lookup_returns_known_codes_only(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    catalog::import(db, &admin, demo_catalog())
        .await
        .expect("import");
    let found = classifiers::lookup(
        db,
        &actor(Role::Viewer),
        "demo",
        "organisations",
        &["globex".into(), "nope".into(), "acme".into()],
    )
    .await
    .expect("lookup");
    let mut codes: Vec<_> = found.into_iter().map(|v| v.code).collect();
    codes.sort();
    assert_eq!(codes, ["acme", "globex"]);
}

async fn run_status_follows_enable_and_disable(db: &DatabaseConnection) {
    use am_domain::usage::EntityRef;
    use am_services::run_status;
    let admin = actor(Role::Admin);
    let viewer = actor(Role::Viewer);
    catalog::import(db, &admin, demo_catalog())
        .await
        .expect("import");
    let ids = vec!["demo.echo.1".to_owned(), "missing".to_owned()];
    let before = run_status::of_launch_settings(db, &viewer, &ids)
        .await
        .expect("status");
    assert_eq!(before.len(), 1);
    assert_eq!(before["demo.echo.1"].current, "waiting");
    assert_eq!(before["demo.echo.1"].last_result, None);
    catalog::set_enabled(
        db,
        &actor(Role::Operator),
        &EntityRef::ScheduleGroup("demo.nightly".into()),
        false,
        "test",
    )
    .await
    .expect("disable");
    let groups = run_status::of_schedule_groups(db, &viewer, &["demo.nightly".into()])
        .await
        .expect("status");
    assert_eq!(groups["demo.nightly"].current, "disabled");
}
