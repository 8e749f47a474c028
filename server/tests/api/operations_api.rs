//! Bulk operations through the API and the real background-job worker (apalis on the test's
//! own database): started with 202, watched to the end, cancelled, refused with the reason,
//! and an operation recorded before a restart is run by the next manager's worker.

use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::{read::operations::OperationRequest, roles::Role};
use am_services::{
    Services,
    entity::{activations, failure_logs, launch_settings, operations as op_rows},
    operations,
    retention::RetentionPolicy,
};
use axum::http::StatusCode;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, Set, sea_query::Expr,
};
use serde_json::{Value, json};
use server::jobs::{self, JobStore};
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

on_both_backends!(
    operations_api_starts_lists_shows_and_cancels,
    the_worker_runs_queued_and_restarted_operations_to_the_end,
    the_worker_runs_the_retention_sweep,
    an_idle_worker_takes_a_new_operation_at_once,
);

/// The background-job worker of a manager on the test's database, and services that queue
/// started operations to it (the API's own services have no worker).
struct Worker {
    services: Services,
    store: JobStore,
    stop: CancellationToken,
    tasks: tokio::task::JoinSet<()>,
    /// No broker here; kept so the worker's link stays open (not "stopping").
    _link: tokio::sync::watch::Sender<Option<Arc<lapin::Connection>>>,
}

impl Worker {
    async fn start(app: &TestApp) -> Worker {
        let stop = CancellationToken::new();
        let store = JobStore::open(&app.services.db).await.expect("job tables");
        let (link_tx, link) = server::broker::link();
        let services = app
            .services
            .clone()
            .with_operation_queue(Arc::new(store.clone()));
        let tasks = jobs::spawn(
            store.clone(),
            &services,
            link,
            RetentionPolicy::default(),
            stop.clone(),
        );
        Worker {
            services,
            store,
            stop,
            tasks,
            _link: link_tx,
        }
    }

    async fn stop(mut self) {
        self.stop.cancel();
        while self.tasks.join_next().await.is_some() {}
    }
}

async fn with_catalog(app: &TestApp) -> String {
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(demo_catalog()))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    for id in ["demo.echo.1", "demo.flaky.1"] {
        let r = app
            .api(
                "POST",
                &format!("/api/v1/launch-settings/{id}/disable"),
                Some(&admin),
                None,
            )
            .await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    }
    admin
}

async fn operations_api_starts_lists_shows_and_cancels(app: TestApp) {
    with_catalog(&app).await;
    let operator = app.token(Role::Operator).await;
    let viewer = app.token(Role::Viewer).await;
    let request = json!({"kind": "enable-launch-settings", "ids": ["demo.echo.1", "demo.flaky.1"]});

    let r = app
        .api(
            "POST",
            "/api/v1/operations",
            Some(&viewer),
            Some(request.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text());
    let r = app.api("GET", "/api/v1/operations", None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    let r = app
        .api(
            "POST",
            "/api/v1/operations",
            Some(&operator),
            Some(json!({"kind": "enable-launch-settings", "ids": ["demo.echo.1", "no.such"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    let body = r.json();
    assert_eq!(body["errors"][0]["path"], "ids[1]", "{body}");
    let r = app
        .api(
            "POST",
            "/api/v1/operations",
            Some(&operator),
            Some(json!({"kind": "launch-rockets"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    assert!(r.text().contains("launch-rockets"), "{}", r.text());
    // Replaying unrouted messages names a data queue that exists (what it moves is the
    // broker's business: tests/runtime/unrouted.rs).
    let r = app
        .api(
            "POST",
            "/api/v1/operations",
            Some(&operator),
            Some(json!({"kind": "replay-unrouted", "data_queue": "no.such"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    let body = r.json();
    assert_eq!(body["errors"][0]["path"], "data_queue", "{body}");
    assert!(r.text().contains("no data queue `no.such`"), "{}", r.text());

    let r = app
        .api("POST", "/api/v1/operations", Some(&operator), Some(request))
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    let op = r.json();
    assert_eq!(op["status"], "queued");
    assert_eq!(op["total"], 2);
    assert_eq!(op["kind"], "enable-launch-settings");
    let id = op["id"].as_str().expect("id").to_owned();

    let r = app
        .api(
            "GET",
            &format!("/api/v1/operations/{id}"),
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["request"]["ids"][1], "demo.flaky.1");
    let r = app
        .api("GET", "/api/v1/operations", Some(&viewer), None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.json()
            .as_array()
            .expect("list")
            .iter()
            .any(|o| o["id"] == id.as_str())
    );

    let r = app
        .api(
            "POST",
            &format!("/api/v1/operations/{id}/cancel"),
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app
        .api(
            "POST",
            &format!("/api/v1/operations/{id}/cancel"),
            Some(&operator),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["status"], "cancelled");
    let r = app
        .api(
            "POST",
            &format!("/api/v1/operations/{id}/cancel"),
            Some(&operator),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text());

    let r = app
        .api(
            "GET",
            &format!("/api/v1/operations/{}", uuid::Uuid::new_v4()),
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = app
        .api("GET", "/api/v1/operations/not-a-uuid", Some(&viewer), None)
        .await;
    // Anything but a UUID names no operation.
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text());
}

async fn wait_for_status(app: &TestApp, token: &str, id: &str, want: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let op = app
            .api(
                "GET",
                &format!("/api/v1/operations/{id}"),
                Some(token),
                None,
            )
            .await
            .json();
        if op["status"] == want {
            return op;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "operation never reached {want}: {op}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn enabled(app: &TestApp, id: &str) -> bool {
    launch_settings::Entity::find_by_id(id.to_owned())
        .one(&app.services.db)
        .await
        .expect("read")
        .expect("exists")
        .enabled
}

async fn the_worker_runs_queued_and_restarted_operations_to_the_end(app: TestApp) {
    with_catalog(&app).await;
    let operator = app.token(Role::Operator).await;
    let who = am_services::accounts::resolve_token(&app.services.db, &operator, "")
        .await
        .expect("token resolves")
        .expect("a known token");

    // A manager that recorded an operation and stopped before its job was queued (the API's
    // services here have no worker): the next manager's worker finds and runs it.
    let r = app
        .api(
            "POST",
            "/api/v1/operations",
            Some(&operator),
            Some(json!({"kind": "enable-launch-settings", "ids": ["demo.echo.1"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    let orphan = r.json()["id"].as_str().expect("id").to_owned();
    let row = op_rows::Entity::find_by_id(uuid::Uuid::parse_str(&orphan).expect("uuid"))
        .one(&app.services.db)
        .await
        .expect("read")
        .expect("exists");
    let mut row: op_rows::ActiveModel = row.into();
    row.updated_at = Set(chrono::Utc::now() - operations::QUEUED_GRACE * 2);
    row.update(&app.services.db).await.expect("backdate");

    let worker = Worker::start(&app).await;
    let services = &worker.services;

    let done = wait_for_status(&app, &operator, &orphan, "succeeded").await;
    assert_eq!(
        (done["done"].as_i64(), done["total"].as_i64()),
        (Some(1), Some(1))
    );
    assert!(enabled(&app, "demo.echo.1").await);

    // Started with the worker running: queued at once, run at once.
    let op = operations::start(
        services,
        &who,
        OperationRequest::EnableLaunchSettings {
            ids: vec!["demo.flaky.1".into()],
        },
    )
    .await
    .expect("starts");
    let done = wait_for_status(&app, &operator, &op.id.to_string(), "succeeded").await;
    assert_eq!(done["done"].as_i64(), Some(1));
    assert!(enabled(&app, "demo.flaky.1").await);

    worker.stop().await;
}

async fn the_worker_runs_the_retention_sweep(app: TestApp) {
    with_catalog(&app).await;
    let db = &app.services.db;
    // demo.echo.1 last succeeded: its failure logs go; demo.flaky.1 never ran: its stay.
    let now = chrono::Utc::now();
    let run = activations::ActiveModel {
        id: Set(uuid::Uuid::now_v7()),
        launch_setting_id: Set(Some("demo.echo.1".into())),
        trigger: Set("manual".into()),
        status: Set("succeeded".into()),
        created_at: Set(now - chrono::Duration::minutes(1)),
        started_at: Set(Some(now - chrono::Duration::minutes(1))),
        finished_at: Set(Some(now)),
        application_id: Set(Some("demo".into())),
        fencing_token: Set(1),
        ..Default::default()
    }
    .insert(db)
    .await
    .expect("activation");
    launch_settings::Entity::update_many()
        .col_expr(
            launch_settings::Column::LastResult,
            Expr::value(Some("succeeded")),
        )
        .col_expr(
            launch_settings::Column::LastResultAt,
            Expr::value(Some(now)),
        )
        .col_expr(
            launch_settings::Column::LastActivationId,
            Expr::value(Some(run.id)),
        )
        .filter(launch_settings::Column::Id.eq("demo.echo.1"))
        .exec(db)
        .await
        .expect("last result");
    let failure = |ls: &str| failure_logs::ActiveModel {
        launch_setting_id: Set(ls.into()),
        activation_id: Set(uuid::Uuid::now_v7()),
        host: Set("h1".into()),
        application_id: Set("demo".into()),
        agent_id: Set("echo".into()),
        error_type: Set("Boom".into()),
        message: Set("boom".into()),
        occurred_at: Set(chrono::Utc::now() - chrono::Duration::hours(1)),
        ..Default::default()
    };
    failure_logs::Entity::insert_many([
        failure("demo.echo.1"),
        failure("demo.echo.1"),
        failure("demo.flaky.1"),
    ])
    .exec(db)
    .await
    .expect("failures");

    let worker = Worker::start(&app).await;
    worker
        .store
        .push(jobs::Job::Retention)
        .await
        .expect("queued");
    let count = |ls: &'static str| async move {
        failure_logs::Entity::find()
            .filter(failure_logs::Column::LaunchSettingId.eq(ls))
            .count(db)
            .await
            .expect("count")
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while count("demo.echo.1").await > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the sweep never ran"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(count("demo.flaky.1").await, 1);
    worker.stop().await;
}

async fn an_idle_worker_takes_a_new_operation_at_once(app: TestApp) {
    with_catalog(&app).await;
    let operator = app.token(Role::Operator).await;
    let who = am_services::accounts::resolve_token(&app.services.db, &operator, "")
        .await
        .expect("token resolves")
        .expect("a known token");
    let worker = Worker::start(&app).await;
    let services = &worker.services;
    // Idle for a while, as a manager mostly is.
    tokio::time::sleep(Duration::from_secs(6)).await;
    for id in ["demo.echo.1", "demo.flaky.1"] {
        let started = tokio::time::Instant::now();
        let op = operations::start(
            services,
            &who,
            OperationRequest::EnableLaunchSettings {
                ids: vec![id.into()],
            },
        )
        .await
        .expect("starts");
        wait_for_status(&app, &operator, &op.id.to_string(), "succeeded").await;
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(3),
            "{id}: picked up after {took:?}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    worker.stop().await;
}
