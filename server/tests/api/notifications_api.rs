use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::roles::Role;
use axum::http::StatusCode;
use serde_json::json;

on_both_backends!(notifications_are_listed_tested_and_resent_through_the_api);

async fn notifications_are_listed_tested_and_resent_through_the_api(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let operator = app.token(Role::Operator).await;
    let viewer = app.token(Role::Viewer).await;
    let mut catalog = demo_catalog();
    catalog["applications"][0]["webhook_url"] = json!("http://127.0.0.1:9/hook");
    catalog["applications"][0]["webhook_secret"] = json!("s3cret");
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(catalog))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    // The secret never comes back.
    let r = app
        .api("GET", "/api/v1/applications/demo", Some(&viewer), None)
        .await;
    assert!(!r.text().contains("s3cret") && !r.text().contains("webhook_secret"));

    // Send test: operators, exactly one target, a webhook to test.
    let body = json!({ "application": "demo" });
    let r = app
        .api(
            "POST",
            "/api/v1/notifications/test",
            Some(&viewer),
            Some(body.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app
        .api(
            "POST",
            "/api/v1/notifications/test",
            Some(&operator),
            Some(body),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    let queued = r.json();
    assert_eq!(queued["event"], "test");
    assert_eq!(queued["status"], "pending");
    assert_eq!(queued["signed"], true);
    assert!(queued.get("secret").is_none(), "{queued}");
    let id = queued["id"].as_i64().expect("an id");
    let r = app
        .api(
            "POST",
            "/api/v1/notifications/test",
            Some(&operator),
            Some(json!({ "application": "demo", "launch_setting": "demo.echo.1" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    let r = app
        .api(
            "POST",
            "/api/v1/notifications/test",
            Some(&operator),
            Some(json!({ "application": "nope" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text());

    // Listed with the filters; one by id; a bad filter names its parameter.
    let r = app
        .api(
            "GET",
            "/api/v1/notifications?event=test&status=pending&application=demo",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let page = r.json();
    assert_eq!(page["items"][0]["id"], id);
    for field in [
        "id",
        "event",
        "application",
        "status",
        "attempts",
        "last_error",
    ] {
        assert!(page["items"][0].get(field).is_some(), "{field} in {page}");
    }
    let r = app
        .api(
            "GET",
            "/api/v1/notifications?status=lost",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text().contains("status"), "{}", r.text());
    let r = app
        .api(
            "GET",
            &format!("/api/v1/notifications/{id}"),
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = app
        .api("GET", "/api/v1/notifications/999999", Some(&viewer), None)
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // Resend: refused while pending.
    let r = app
        .api(
            "POST",
            &format!("/api/v1/notifications/{id}/resend"),
            Some(&operator),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text());

    // The OpenAPI document describes them.
    let r = app
        .api("GET", "/api/v1/openapi.json", Some(&viewer), None)
        .await;
    let doc = r.json();
    for path in [
        "/api/v1/notifications",
        "/api/v1/notifications/{id}",
        "/api/v1/notifications/{id}/resend",
        "/api/v1/notifications/test",
    ] {
        assert!(
            doc["paths"].get(path).is_some(),
            "{path} in the OpenAPI document"
        );
    }
}
