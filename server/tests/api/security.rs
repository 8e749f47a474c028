use crate::browser::{page, session};
use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::roles::Role;
use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};

on_both_backends!(
    api_needs_a_token_and_the_right_role,
    browser_writes_need_an_allowed_origin,
    user_text_in_a_textarea_is_escaped,
);

async fn api_needs_a_token_and_the_right_role(app: TestApp) {
    let r = app.api("GET", "/api/v1/catalog", None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r.json()["error"].as_str().is_some());
    assert_eq!(
        r.headers
            .get(header::WWW_AUTHENTICATE)
            .map(|v| v.to_str().ok()),
        Some(Some("Bearer"))
    );

    let r = app
        .api("GET", "/api/v1/catalog", Some("amt_not-a-real-token"), None)
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    let viewer = app.token(Role::Viewer).await;
    let r = app.api("GET", "/api/v1/catalog", Some(&viewer), None).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = app
        .api(
            "PUT",
            "/api/v1/catalog",
            Some(&viewer),
            Some(demo_catalog()),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text());
    assert!(
        r.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("admin"))
    );
    let pool = serde_json::json!({"id": "p1", "hosts": []});
    let r = app
        .api("POST", "/api/v1/pools", Some(&viewer), Some(pool.clone()))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    let operator = app.token(Role::Operator).await;
    let r = app
        .api("POST", "/api/v1/pools", Some(&operator), Some(pool.clone()))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    let admin = app.token(Role::Admin).await;
    let r = app
        .api("POST", "/api/v1/pools", Some(&admin), Some(pool))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
}

async fn browser_writes_need_an_allowed_origin(app: TestApp) {
    let form = |origin: Option<&str>| {
        let mut b = Request::builder()
            .method("POST")
            .uri("/ui/login")
            .header(header::HOST, "127.0.0.1:3000")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(o) = origin {
            b = b.header(header::ORIGIN, o);
        }
        b.body(Body::from("name=admin&password=wrong-password"))
            .expect("request")
    };
    assert_eq!(app.send(form(None)).await.status, StatusCode::FORBIDDEN);
    assert_eq!(
        app.send(form(Some("http://evil.example"))).await.status,
        StatusCode::FORBIDDEN
    );
    // Same origin: reaches the server function, which rejects the password.
    let r = app.send(form(Some("http://127.0.0.1:3000"))).await;
    assert_ne!(r.status, StatusCode::FORBIDDEN, "{}", r.text());
}

/// Regression: a textarea's content was written unescaped, so a filter value closing the
/// textarea ran a script in every browser that opened the launch setting.
async fn user_text_in_a_textarea_is_escaped(app: TestApp) {
    let payload = "</textarea><script>alert('xss')</script>";
    let mut catalog = demo_catalog();
    let ls = catalog["launch_settings"]
        .as_array_mut()
        .and_then(|all| all.iter_mut().find(|ls| ls["id"] == "demo.echo.1"))
        .expect("demo.echo.1");
    ls["filter"] = serde_json::json!({ "headers": { "tenant": payload } });
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(catalog))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());

    let cookie = session(&app, "vic", Role::Viewer).await;
    let html = page(&app, &cookie, "/launch-settings/demo.echo.1").await;
    assert!(!html.contains("<script>alert("), "script in the page");
    assert!(
        html.contains("tenant=&lt;/textarea&gt;&lt;script&gt;alert('xss')&lt;/script&gt;"),
        "the filter is shown as text"
    );
}
