//! `GET /api/v1/broker` and `POST /api/v1/broker/reconcile`.

use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::roles::Role;
use am_services::entity::audit_log;
use axum::http::StatusCode;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

on_both_backends!(broker_state_is_shown_and_a_full_pass_is_requested_by_operators);

async fn broker_state_is_shown_and_a_full_pass_is_requested_by_operators(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(demo_catalog()))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());

    let viewer = app.token(Role::Viewer).await;
    assert_eq!(
        app.api("GET", "/api/v1/broker", None, None).await.status,
        StatusCode::UNAUTHORIZED
    );
    let r = app.api("GET", "/api/v1/broker", Some(&viewer), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let b = r.json();
    // No reconciler has run in this test: the catalog is ahead of the broker.
    assert_eq!(b["in_sync"], false);
    assert!(b["catalog_revision"].as_i64().is_some_and(|r| r > 0));
    assert_eq!(b["applied_revision"], serde_json::Value::Null);
    assert_eq!(b["leaving"], serde_json::json!([]));

    let r = app
        .api("POST", "/api/v1/broker/reconcile", Some(&viewer), None)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let operator = app.token(Role::Operator).await;
    let r = app
        .api("POST", "/api/v1/broker/reconcile", Some(&operator), None)
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    let b = app
        .api("GET", "/api/v1/broker", Some(&viewer), None)
        .await
        .json();
    assert!(b["full_requested_at"].as_str().is_some(), "{b}");
    let audited = audit_log::Entity::find()
        .filter(audit_log::Column::EntityType.eq("broker"))
        .filter(audit_log::Column::Action.eq("reconcile"))
        .all(&app.services.db)
        .await
        .expect("audit");
    assert_eq!(audited.len(), 1);
}
