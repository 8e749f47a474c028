//! Small parts of the API contract: a 405 names the methods the path takes, a write without a
//! token is a 401 (not an Origin refusal), nothing a signed-in caller is shown is cached, a
//! failure drill-down of a launch setting that never existed is a 404, and what only admins
//! may read (names typed at failed logins, webhook URLs past their host) stays with them.

use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::roles::Role;
use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};
use serde_json::json;

on_both_backends!(
    refusals_say_what_the_path_takes_and_who_may_write,
    nothing_a_signed_in_caller_sees_is_cached,
    a_launch_setting_that_never_existed_has_no_failures_page,
    only_admins_read_failed_login_names_and_whole_webhook_urls,
);

async fn refusals_say_what_the_path_takes_and_who_may_write(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("DELETE", "/api/v1/catalog", Some(&admin), None)
        .await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        r.headers.get(header::ALLOW).and_then(|v| v.to_str().ok()),
        Some("GET, PUT")
    );
    assert!(
        r.json()["error"]
            .as_str()
            .is_some_and(|e| e.ends_with("it takes: GET, PUT")),
        "{}",
        r.text()
    );
    // No token, no session: a 401 whatever the Origin says.
    for origin in [None, Some("http://evil.example")] {
        let mut b = Request::builder()
            .method("POST")
            .uri("/api/v1/pools")
            .header(header::HOST, "127.0.0.1:3000")
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(o) = origin {
            b = b.header(header::ORIGIN, o);
        }
        let r = app
            .send(
                b.body(Body::from(r#"{"id":"p","hosts":[]}"#))
                    .expect("request"),
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNAUTHORIZED,
            "{origin:?}: {}",
            r.text()
        );
    }
}

async fn nothing_a_signed_in_caller_sees_is_cached(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    for path in ["/api/v1/catalog", "/api/v1/tokens", "/api/v1/nope"] {
        let r = app.api("GET", path, Some(&admin), None).await;
        assert_eq!(
            r.headers
                .get(header::CACHE_CONTROL)
                .and_then(|v| v.to_str().ok()),
            Some("no-store"),
            "{path}"
        );
    }
    let r = app
        .api(
            "POST",
            "/api/v1/tokens",
            Some(&admin),
            Some(json!({"name": "ci"})),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text());
    assert_eq!(
        r.headers
            .get(header::CACHE_CONTROL)
            .and_then(|v| v.to_str().ok()),
        Some("no-store"),
        "a new token's secret"
    );
    // Public answers keep their own caching.
    let r = app.api("GET", "/healthz", Some(&admin), None).await;
    assert_ne!(
        r.headers
            .get(header::CACHE_CONTROL)
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
}

async fn a_launch_setting_that_never_existed_has_no_failures_page(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(demo_catalog()))
        .await;
    assert!(r.status.is_success(), "{}", r.text());
    let viewer = app.token(Role::Viewer).await;
    let r = app
        .api(
            "GET",
            "/api/v1/failures/launch-settings/never.was/activations",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text());
    let r = app
        .api(
            "GET",
            "/api/v1/failures/launch-settings/demo.echo.1/activations",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "an existing one without failures: {}",
        r.text()
    );
}

async fn only_admins_read_failed_login_names_and_whole_webhook_urls(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let hook = "https://hooks.slack.example/services/T0/B0/very-secret";
    let mut catalog = demo_catalog();
    catalog["applications"][0]["webhook_url"] = json!(hook);
    catalog["applications"][0]["webhook_secret"] = json!("first-secret");
    let r = app
        .api(
            "PUT",
            "/api/v1/catalog",
            Some(&admin),
            Some(catalog.clone()),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text());
    let app_id = catalog["applications"][0]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    // A secret changed through the API: audited with why, though it is never shown.
    catalog["applications"][0]["webhook_secret"] = json!("second-secret");
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(catalog))
        .await;
    assert!(r.status.is_success(), "{}", r.text());
    let r = app
        .api(
            "GET",
            &format!("/api/v1/audit?entity_type=application&entity_id={app_id}"),
            Some(&admin),
            None,
        )
        .await;
    let entries = r.json()["entries"].clone();
    assert!(
        entries[0]["cause"]
            .as_str()
            .is_some_and(|c| c.contains("webhook secret changed")),
        "{entries}"
    );
    assert!(!r.text().contains("second-secret"), "{}", r.text());

    // A failed login with a typed name.
    let login = Request::builder()
        .method("POST")
        .uri("/ui/login")
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::ORIGIN, "http://127.0.0.1:3000")
        .header(header::ACCEPT, "application/json")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("name=maybe-a-user&password=not-the-password"))
        .expect("request");
    assert_eq!(app.send(login).await.status, StatusCode::UNAUTHORIZED);

    let viewer = app.token(Role::Viewer).await;
    let as_viewer = app
        .api(
            "GET",
            "/api/v1/audit?action=login_failed",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(as_viewer.status, StatusCode::OK);
    let text = as_viewer.text();
    assert!(!text.contains("maybe-a-user"), "{text}");
    assert!(!text.contains("no such user"), "{text}");
    assert_eq!(as_viewer.json()["entries"][0]["actor"], "(hidden)");
    // Nor can a viewer probe for the name with a filter.
    let probe = app
        .api(
            "GET",
            "/api/v1/audit?actor=maybe-a-user",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(probe.json()["entries"], json!([]), "{}", probe.text());
    let as_admin = app
        .api(
            "GET",
            "/api/v1/audit?action=login_failed",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(as_admin.json()["entries"][0]["actor"], "maybe-a-user");
    assert_eq!(as_admin.json()["entries"][0]["cause"], "no such user");

    // Webhook URLs: whole for admins, up to the host for everyone else, in reads and the log.
    let path = format!("/api/v1/applications/{app_id}");
    let r = app.api("GET", &path, Some(&admin), None).await;
    assert_eq!(r.json()["webhook_url"], hook);
    let r = app.api("GET", &path, Some(&viewer), None).await;
    assert_eq!(r.json()["webhook_url"], "https://hooks.slack.example/•••");
    let r = app.api("GET", "/api/v1/catalog", Some(&viewer), None).await;
    assert!(!r.text().contains("very-secret"), "{}", r.text());
    let r = app
        .api(
            "GET",
            "/api/v1/audit?entity_type=application",
            Some(&viewer),
            None,
        )
        .await;
    assert!(!r.text().contains("very-secret"), "{}", r.text());
    assert!(r.text().contains("hooks.slack.example"), "{}", r.text());
}
