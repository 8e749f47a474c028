//! `GET /api/v1/audit` and its JSON-lines export: who changed what, filtered and paged, with
//! the address a change came from.

use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::roles::Role;
use axum::{
    body::Body,
    extract::ConnectInfo,
    http::{Request, StatusCode, header},
};
use serde_json::json;
use std::net::SocketAddr;

on_both_backends!(the_audit_log_is_filtered_paged_and_exported_through_the_api);

async fn the_audit_log_is_filtered_paged_and_exported_through_the_api(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let viewer = app.token(Role::Viewer).await;
    let mut catalog = demo_catalog();
    catalog["applications"][0]["webhook_secret"] = json!("s3cret-value");
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(catalog))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());

    // An operator disables a launch setting, from a known address.
    let operator = app.token(Role::Operator).await;
    let mut req = Request::builder()
        .method("POST")
        .uri("/api/v1/launch-settings/demo.echo.1/disable")
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::AUTHORIZATION, format!("Bearer {operator}"))
        .body(Body::empty())
        .expect("request");
    req.extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([10, 1, 2, 3], 40000))));
    let r = app.send(req).await;
    assert!(r.status.is_success(), "{} {}", r.status, r.text());

    // Its history, newest first: the disable (with who, where and why), then its creation.
    let r = app
        .api(
            "GET",
            "/api/v1/audit?entity_type=launch_setting&entity_id=demo.echo.1",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let page = r.json();
    let entries = page["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "{page}");
    assert_eq!(entries[0]["action"], "update");
    assert!(
        entries[0]["actor"]
            .as_str()
            .is_some_and(|a| a.starts_with("operator-")),
        "{page}"
    );
    assert_eq!(entries[0]["address"], "10.1.2.3");
    assert!(
        entries[0]["cause"]
            .as_str()
            .is_some_and(|c| c.starts_with("disabled by operator-")),
        "{page}"
    );
    // `enabled` is left out of a catalog document while it is true; the audit states it.
    assert_eq!(entries[0]["before"]["enabled"], true);
    assert_eq!(entries[0]["after"]["enabled"], false);
    assert_eq!(entries[1]["action"], "create");
    assert_eq!(entries[1]["address"], serde_json::Value::Null);

    // Pages by cursor: one at a time, then the rest.
    let r = app
        .api(
            "GET",
            "/api/v1/audit?entity_type=launch_setting&entity_id=demo.echo.1&limit=1",
            Some(&viewer),
            None,
        )
        .await;
    let first = r.json();
    assert_eq!(first["entries"].as_array().map(Vec::len), Some(1));
    let next = first["next"].as_i64().expect("a next page");
    let r = app
        .api(
            "GET",
            &format!(
                "/api/v1/audit?entity_type=launch_setting&entity_id=demo.echo.1&limit=1&after={next}"
            ),
            Some(&viewer),
            None,
        )
        .await;
    let second = r.json();
    assert_eq!(second["entries"][0]["action"], "create");
    assert_eq!(second["next"], serde_json::Value::Null);

    // Filters by action and actor; a malformed time or cursor names its parameter.
    let r = app
        .api(
            "GET",
            "/api/v1/audit?action=create&from=2000-01-01",
            Some(&viewer),
            None,
        )
        .await;
    let created = r.json()["entries"].as_array().map_or(0, Vec::len);
    assert!(created > 10, "the import created every entity: {created}");
    let r = app
        .api("GET", "/api/v1/audit?from=yesterday", Some(&viewer), None)
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    assert!(r.text().contains("from"), "{}", r.text());
    let r = app
        .api("GET", "/api/v1/audit?after=x", Some(&viewer), None)
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    let r = app.api("GET", "/api/v1/audit", None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    // The export has every matching entry, one JSON object per line, and no secret.
    let r = app
        .api(
            "GET",
            "/api/v1/audit/export?action=create",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        r.headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok()),
        Some("application/x-ndjson")
    );
    let text = r.text();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one entry per line"))
        .collect();
    assert_eq!(lines.len(), created);
    assert!(lines.iter().all(|l| l["action"] == "create"));
    assert!(!text.contains("s3cret-value"));
    let r = app
        .api(
            "GET",
            "/api/v1/audit/export?to=garbage",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());

    let doc = app
        .api("GET", "/api/v1/openapi.json", Some(&viewer), None)
        .await
        .json();
    for path in ["/api/v1/audit", "/api/v1/audit/export"] {
        assert!(doc["paths"].get(path).is_some(), "{path} documented");
    }
}
