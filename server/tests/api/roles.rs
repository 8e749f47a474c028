//! The role matrix, generated from the OpenAPI document: every documented operation called
//! without a token and as a viewer, an operator and an admin. Each operation's least role is
//! written down here once; an operation missing from the table (a new route) fails the test
//! until someone decides who may call it.

use crate::{TestApp, TestResponse, on_both_backends};
use am_domain::roles::Role;
use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};
use std::collections::BTreeMap;

on_both_backends!(every_operation_admits_exactly_its_roles);

/// The least role of each documented operation (`METHOD path`).
/// `None`: open to anyone (the probes).
fn least_roles() -> BTreeMap<&'static str, Option<Role>> {
    const A: Option<Role> = Some(Role::Admin);
    const O: Option<Role> = Some(Role::Operator);
    const V: Option<Role> = Some(Role::Viewer);
    BTreeMap::from([
        ("GET /healthz", None),
        ("GET /readyz", None),
        ("GET /api/v1/activations", V),
        ("GET /api/v1/activations/{id}", V),
        ("POST /api/v1/activations/{id}/interrupt", O),
        ("POST /api/v1/activations/{id}/rerun", O),
        ("GET /api/v1/agents", V),
        ("POST /api/v1/agents", A),
        ("DELETE /api/v1/agents/{application}/{id}", A),
        ("GET /api/v1/agents/{application}/{id}", V),
        ("PUT /api/v1/agents/{application}/{id}", A),
        ("GET /api/v1/applications", V),
        ("POST /api/v1/applications", A),
        ("DELETE /api/v1/applications/{id}", A),
        ("GET /api/v1/applications/{id}", V),
        ("PUT /api/v1/applications/{id}", A),
        ("GET /api/v1/audit", V),
        ("GET /api/v1/audit/export", V),
        ("GET /api/v1/broker", V),
        ("POST /api/v1/broker/reconcile", O),
        ("GET /api/v1/catalog", V),
        ("PUT /api/v1/catalog", A),
        ("GET /api/v1/dashboard", V),
        ("GET /api/v1/dashboard/events", V),
        ("GET /api/v1/data-queues", V),
        ("POST /api/v1/data-queues", A),
        ("DELETE /api/v1/data-queues/{id}", A),
        ("GET /api/v1/data-queues/{id}", V),
        ("PUT /api/v1/data-queues/{id}", A),
        ("GET /api/v1/dead-letters", V),
        ("POST /api/v1/dead-letters/delete", O),
        ("POST /api/v1/dead-letters/replay", O),
        ("GET /api/v1/dead-letters/{id}", V),
        ("GET /api/v1/failures", V),
        ("GET /api/v1/failures/activations/{id}/hosts", V),
        ("GET /api/v1/failures/launch-settings", V),
        ("GET /api/v1/failures/launch-settings/{id}/activations", V),
        ("GET /api/v1/launch-settings", V),
        ("POST /api/v1/launch-settings", A),
        ("DELETE /api/v1/launch-settings/{id}", A),
        ("GET /api/v1/launch-settings/{id}", V),
        ("PUT /api/v1/launch-settings/{id}", A),
        ("POST /api/v1/launch-settings/{id}/disable", O),
        ("POST /api/v1/launch-settings/{id}/enable", O),
        ("DELETE /api/v1/launch-settings/{id}/quarantines/{host}", O),
        ("POST /api/v1/launch-settings/{id}/run", O),
        ("GET /api/v1/launch-settings/{id}/throughput", V),
        ("GET /api/v1/nodes", V),
        ("GET /api/v1/notifications", V),
        ("POST /api/v1/notifications/test", O),
        ("GET /api/v1/notifications/{id}", V),
        ("POST /api/v1/notifications/{id}/resend", O),
        ("GET /api/v1/operations", V),
        ("POST /api/v1/operations", O),
        ("GET /api/v1/operations/{id}", V),
        ("POST /api/v1/operations/{id}/cancel", O),
        ("GET /api/v1/pools", V),
        ("POST /api/v1/pools", A),
        ("DELETE /api/v1/pools/{id}", A),
        ("GET /api/v1/pools/{id}", V),
        ("PUT /api/v1/pools/{id}", A),
        ("GET /api/v1/schedule-groups", V),
        ("POST /api/v1/schedule-groups", A),
        ("DELETE /api/v1/schedule-groups/{id}", A),
        ("GET /api/v1/schedule-groups/{id}", V),
        ("PUT /api/v1/schedule-groups/{id}", A),
        ("POST /api/v1/schedule-groups/{id}/disable", O),
        ("POST /api/v1/schedule-groups/{id}/enable", O),
        ("POST /api/v1/schedule-groups/{id}/run", O),
        ("GET /api/v1/search", V),
        ("GET /api/v1/sessions", V),
        ("DELETE /api/v1/sessions/{handle}", V),
        ("GET /api/v1/tokens", V),
        ("POST /api/v1/tokens", V),
        ("DELETE /api/v1/tokens/{id}", V),
        ("GET /api/v1/users", A),
        ("POST /api/v1/users", A),
        ("PATCH /api/v1/users/{name}", A),
    ])
}

async fn call(
    app: &TestApp,
    token: Option<&str>,
    method: &str,
    uri: &str,
    body: bool,
) -> TestResponse {
    let mut b = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::HOST, "127.0.0.1:3000");
    if let Some(t) = token {
        b = b.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let req = if body {
        b.header(header::CONTENT_TYPE, "application/json")
            .body(Body::from("{}"))
    } else {
        b.body(Body::empty())
    }
    .expect("request");
    app.send(req).await
}

async fn every_operation_admits_exactly_its_roles(app: TestApp) {
    let tokens = [
        (Role::Viewer, app.token(Role::Viewer).await),
        (Role::Operator, app.token(Role::Operator).await),
        (Role::Admin, app.token(Role::Admin).await),
    ];
    let table = least_roles();
    let mut seen = Vec::new();
    let mut wrong = Vec::new();
    for operation in crate::operations(&app).await {
        let (m, path) = (&operation.method, &operation.path);
        let key = format!("{m} {path}");
        let Some(least) = table.get(key.as_str()) else {
            wrong.push(format!("{key}: not in the role table; add its least role"));
            continue;
        };
        seen.push(key.clone());
        // A stream never ends: its role is checked in dashboard_api.
        if operation.streams() {
            continue;
        }
        let uri = path.replace('{', "x").replace('}', "");
        let body = operation.has_body();
        let r = call(&app, None, m, &uri, body).await;
        let refused = |s: StatusCode| s == StatusCode::UNAUTHORIZED || s == StatusCode::FORBIDDEN;
        if least.is_some() != refused(r.status) {
            wrong.push(format!("{key} without a token: {}", r.status));
        }
        for (role, t) in &tokens {
            let r = call(&app, Some(t), m, &uri, body).await;
            let admitted = least.is_none_or(|need| role.allows(need));
            let expected = if admitted { "admitted" } else { "403" };
            let ok = if admitted {
                !refused(r.status)
            } else {
                r.status == StatusCode::FORBIDDEN
            };
            if !ok {
                wrong.push(format!(
                    "{key} as {role}: {} (expected {expected}) {}",
                    r.status,
                    r.text()
                ));
            }
        }
    }
    for key in table.keys() {
        if !seen.iter().any(|s| s == key) {
            wrong.push(format!("{key}: in the role table but not documented"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
