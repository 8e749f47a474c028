use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::{
    catalog::{Application, DataQueue, DataQueueKind, LaunchKind, Pool},
    roles::Role,
    usage::EntityRef,
};
use am_services::{ServiceError, catalog, entity::audit_log};
use sea_orm::{
    ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait, PaginatorTrait, Statement,
};

on_both_backends!(
    import_then_export_gives_back_an_equal_document,
    import_with_several_mistakes_lists_each_and_changes_nothing,
    entity_crud_is_validated_and_audited,
    deleting_something_in_use_is_refused_naming_the_user,
    roles_are_enforced_by_the_service,
    scheduled_launch_settings_are_saved_with_their_groups,
    concurrent_writers_are_serialized,
    a_large_classifier_is_read_by_its_key_right_after_the_import,
);

async fn import_then_export_gives_back_an_equal_document(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    let demo = demo_catalog();
    let summary = catalog::import(db, &admin, demo.clone())
        .await
        .expect("import");
    assert_eq!(
        summary.created.len(),
        1 + 1 + 2 + 1 + 5 + 6 + 2,
        "{summary:?}"
    );
    let exported = catalog::export(db, &admin).await.expect("export");
    assert_eq!(exported, demo);
    // Importing the same document again changes nothing.
    let again = catalog::import(db, &admin, exported.clone())
        .await
        .expect("re-import");
    assert!(again.is_empty(), "{again:?}");
    // An empty catalog deletes everything, children before parents.
    let wipe = catalog::import(db, &admin, am_domain::catalog::Catalog::new())
        .await
        .expect("wipe");
    assert_eq!(wipe.deleted.len(), summary.created.len());
    assert_eq!(
        catalog::export(db, &admin).await.expect("export"),
        am_domain::catalog::Catalog::new()
    );
}

async fn import_with_several_mistakes_lists_each_and_changes_nothing(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    let mut bad = demo_catalog();
    bad.applications[0].default_pool = "no-such-pool".into();
    let ls = bad
        .launch_settings
        .iter_mut()
        .find(|l| l.id == "demo.echo.1")
        .expect("echo");
    ls.parameters
        .insert("organisations".into(), serde_json::json!(["acme", "x"]));
    bad.schedule_groups[0].cron = "61 0 * * *".into();
    let Err(ServiceError::Invalid(errors)) = catalog::import(db, &admin, bad).await else {
        panic!("expected validation errors");
    };
    let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    assert!(paths.contains(&"applications[0].default_pool"), "{paths:?}");
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("schedule_groups[0].cron")),
        "{paths:?}"
    );
    let bad_value = errors
        .iter()
        .find(|e| {
            e.path.starts_with("launch_settings[") && e.path.contains("parameters.organisations")
        })
        .expect("classifier error");
    assert!(
        bad_value
            .message
            .contains("value 'x' is not in classifier 'organisations'"),
        "{bad_value}"
    );
    assert_eq!(
        catalog::export(db, &admin).await.expect("export"),
        am_domain::catalog::Catalog::new()
    );
    assert_eq!(
        audit_log::Entity::find().count(db).await.expect("count"),
        0,
        "nothing half-written"
    );
}

async fn entity_crud_is_validated_and_audited(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    let pool = Pool {
        id: "p1".into(),
        title: "Pool".into(),
        hosts: vec!["host-a".into(), "host-b".into()],
    };
    catalog::create(db, &admin, pool.clone())
        .await
        .expect("pool");
    let app = Application {
        id: "billing".into(),
        title: "Billing".into(),
        default_pool: "p1".into(),
        channels: Default::default(),
    };
    catalog::create(db, &admin, app.clone()).await.expect("app");

    // Duplicate id.
    assert!(matches!(
        catalog::create(db, &admin, app.clone()).await,
        Err(ServiceError::Conflict(_))
    ));

    // A rule broken in the entity is reported relative to it.
    let bad = DataQueue {
        id: "Bad Id".into(),
        title: String::new(),
        kind: DataQueueKind::Queue,
        address: None,
        delay: None,
    };
    let Err(ServiceError::Invalid(errors)) = catalog::create(db, &admin, bad).await else {
        panic!("invalid id")
    };
    assert!(errors.iter().any(|e| e.path == "id"), "{errors}");

    // Update with hosts changed, then read back.
    let mut pool2 = pool.clone();
    pool2.hosts = vec!["host-c".into()];
    catalog::update(db, &admin, &EntityRef::Pool("p1".into()), pool2.clone())
        .await
        .expect("update");
    let got: Pool = catalog::get(db, &admin, &EntityRef::Pool("p1".into()))
        .await
        .expect("get");
    assert_eq!(got, pool2);

    // Renames are refused.
    let mut renamed = pool2.clone();
    renamed.id = "p2".into();
    assert!(matches!(
        catalog::update(db, &admin, &EntityRef::Pool("p1".into()), renamed).await,
        Err(ServiceError::Invalid(_))
    ));

    // Unknown entity.
    assert!(matches!(
        catalog::get::<Pool>(db, &admin, &EntityRef::Pool("nope".into())).await,
        Err(ServiceError::NotFound(_))
    ));

    let entries = audit_log::Entity::find().all(db).await.expect("audit");
    let actions: Vec<(String, String, String)> = entries
        .iter()
        .map(|e| (e.action.clone(), e.entity_type.clone(), e.entity_id.clone()))
        .collect();
    assert_eq!(
        actions,
        vec![
            ("create".into(), "pool".into(), "p1".into()),
            ("create".into(), "application".into(), "billing".into()),
            ("update".into(), "pool".into(), "p1".into()),
        ]
    );
    let update = &entries[2];
    assert_eq!(update.actor, admin.name);
    assert!(
        update
            .before
            .as_ref()
            .is_some_and(|b| b["hosts"] == serde_json::json!(["host-a", "host-b"]))
    );
    assert!(
        update
            .after
            .as_ref()
            .is_some_and(|a| a["hosts"] == serde_json::json!(["host-c"]))
    );
}

async fn deleting_something_in_use_is_refused_naming_the_user(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    catalog::import(db, &admin, demo_catalog())
        .await
        .expect("import");
    let err = catalog::delete::<Pool>(db, &admin, &EntityRef::Pool("demo-pool".into()))
        .await
        .expect_err("in use");
    let ServiceError::Conflict(message) = err else {
        panic!("expected a conflict, got {err:?}")
    };
    assert!(message.contains("application 'demo'"), "{message}");

    let err = catalog::delete::<am_domain::catalog::Agent>(
        db,
        &admin,
        &EntityRef::Agent {
            application: "demo".into(),
            id: "poison".into(),
        },
    )
    .await
    .expect_err("agent in use");
    assert!(err.to_string().contains("demo.poison.1"), "{err}");

    // Not in use: goes.
    catalog::delete::<am_domain::catalog::LaunchSetting>(
        db,
        &admin,
        &EntityRef::LaunchSetting("demo.poison.1".into()),
    )
    .await
    .expect("delete LS");
    catalog::delete::<am_domain::catalog::Agent>(
        db,
        &admin,
        &EntityRef::Agent {
            application: "demo".into(),
            id: "poison".into(),
        },
    )
    .await
    .expect("delete agent");
}

async fn roles_are_enforced_by_the_service(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    catalog::import(db, &admin, demo_catalog())
        .await
        .expect("import");
    let viewer = actor(Role::Viewer);
    let operator = actor(Role::Operator);
    let pool = Pool {
        id: "p9".into(),
        title: String::new(),
        hosts: vec![],
    };
    assert!(matches!(
        catalog::create(db, &viewer, pool.clone()).await,
        Err(ServiceError::Forbidden { .. })
    ));
    assert!(matches!(
        catalog::create(db, &operator, pool).await,
        Err(ServiceError::Forbidden { .. })
    ));
    assert!(catalog::export(db, &viewer).await.is_ok());

    let key = EntityRef::LaunchSetting("demo.echo.1".into());
    assert!(matches!(
        catalog::set_enabled(db, &viewer, &key, false, "test").await,
        Err(ServiceError::Forbidden { .. })
    ));
    catalog::set_enabled(db, &operator, &key, false, "maintenance")
        .await
        .expect("operator disables");
    let ls: am_domain::catalog::LaunchSetting = catalog::get(db, &viewer, &key).await.expect("get");
    assert!(!ls.enabled);
    let last = audit_log::Entity::find()
        .all(db)
        .await
        .expect("audit")
        .pop()
        .expect("entry");
    assert_eq!(last.cause.as_deref(), Some("maintenance"));
    assert_eq!(last.actor, operator.name);
}

async fn scheduled_launch_settings_are_saved_with_their_groups(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    catalog::import(db, &admin, demo_catalog())
        .await
        .expect("import");
    let mut ls: am_domain::catalog::LaunchSetting = catalog::get(
        db,
        &admin,
        &EntityRef::LaunchSetting("demo.sleep.nightly".into()),
    )
    .await
    .expect("get");
    ls.id = "demo.sleep.extra".into();
    assert_eq!(ls.kind, LaunchKind::Scheduled);

    let Err(ServiceError::Invalid(errors)) =
        catalog::save_launch_setting(db, &admin, ls.clone(), None, true).await
    else {
        panic!("a scheduled launch setting outside any group is invalid");
    };
    assert!(
        errors.iter().any(|e| e.message.contains("group")),
        "{errors}"
    );

    catalog::save_launch_setting(
        db,
        &admin,
        ls.clone(),
        Some(vec!["demo.nightly".into()]),
        true,
    )
    .await
    .expect("saved with its group");
    let group: am_domain::catalog::ScheduleGroup =
        catalog::get(db, &admin, &EntityRef::ScheduleGroup("demo.nightly".into()))
            .await
            .expect("group");
    assert_eq!(
        group.members,
        ["demo.sleep.nightly", "demo.echo.drain", "demo.sleep.extra"]
    );

    // Reordering members is persisted as given.
    let mut reordered = group.clone();
    reordered.members.reverse();
    catalog::update(
        db,
        &admin,
        &EntityRef::ScheduleGroup("demo.nightly".into()),
        reordered.clone(),
    )
    .await
    .expect("reorder");
    let again: am_domain::catalog::ScheduleGroup =
        catalog::get(db, &admin, &EntityRef::ScheduleGroup("demo.nightly".into()))
            .await
            .expect("group");
    assert_eq!(again.members, reordered.members);
}

async fn concurrent_writers_are_serialized(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    catalog::import(db, &admin, demo_catalog())
        .await
        .expect("import");
    let mut tasks = Vec::new();
    for i in 0..8 {
        let db = db.clone();
        let admin = admin.clone();
        tasks.push(tokio::spawn(async move {
            let q = DataQueue {
                id: format!("q{i}"),
                title: String::new(),
                kind: DataQueueKind::Topic,
                address: None,
                delay: None,
            };
            catalog::create(&db, &admin, q).await
        }));
    }
    for t in tasks {
        t.await.expect("task").expect("create");
    }
    let queues: Vec<DataQueue> = catalog::list(db, &admin).await.expect("list");
    assert_eq!(queues.len(), 2 + 8);
}

/// A classifier of 20,000 values: PostgreSQL has statistics of them as soon as the import
/// commits (else its first readers scan every value through the order index), and a label
/// lookup reads them by key.
async fn a_large_classifier_is_read_by_its_key_right_after_the_import(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    let mut c = demo_catalog();
    // The demo's own values stay: its launch settings name them.
    c.classifiers[0]
        .values
        .extend((0..20_000).map(|i| am_domain::catalog::ClassifierValue {
            code: format!("c{i}"),
            label: format!("Value {i}"),
        }));
    catalog::import(db, &admin, c).await.expect("import");
    let codes: Vec<String> = ["c1", "c19999", "nope"].map(String::from).into();
    let found = am_services::classifiers::lookup(db, &admin, "demo", "organisations", &codes)
        .await
        .expect("lookup");
    assert_eq!(found.len(), 2);
    if db.get_database_backend() != DbBackend::Postgres {
        return;
    }
    let plan: Vec<String> = db
        .query_all_raw(Statement::from_string(
            DbBackend::Postgres,
            "EXPLAIN SELECT * FROM classifier_values WHERE application_id = 'demo' \
             AND classifier_name = 'organisations' AND code IN ('c1', 'c2', 'c3')",
        ))
        .await
        .expect("explain")
        .iter()
        .filter_map(|r| r.try_get_by_index::<String>(0).ok())
        .collect();
    assert!(
        plan.iter().any(|l| l.contains("pk_classifier_values")),
        "the lookup reads by key: {plan:#?}"
    );
}
