//! `/api/v1/tokens`: a user's own tokens, shown once, with their role and last use; revoked,
//! a token stops at once.

use crate::{TestApp, on_both_backends};
use am_domain::roles::Role;
use axum::http::StatusCode;
use serde_json::json;

on_both_backends!(users_create_list_and_revoke_their_tokens_through_the_api);

async fn users_create_list_and_revoke_their_tokens_through_the_api(app: TestApp) {
    let operator = app.token(Role::Operator).await;
    let r = app
        .api(
            "POST",
            "/api/v1/tokens",
            Some(&operator),
            Some(json!({ "name": "grafana", "role": "viewer", "expires_at": "2999-01-01T00:00:00Z" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let created = r.json();
    let scraper = created["token"].as_str().expect("the token").to_owned();
    assert_eq!(created["role"], "viewer");
    let id = created["id"].as_i64().expect("an id");

    // The scraper token reads, but acts as a viewer.
    let r = app.api("GET", "/api/v1/nodes", Some(&scraper), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = app
        .api(
            "POST",
            "/api/v1/launch-settings/x/disable",
            Some(&scraper),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text());

    // Above one's own role, or with an unknown field: refused by name.
    let r = app
        .api(
            "POST",
            "/api/v1/tokens",
            Some(&operator),
            Some(json!({ "name": "x", "role": "admin" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    assert!(r.text().contains("role"), "{}", r.text());
    let r = app
        .api(
            "POST",
            "/api/v1/tokens",
            Some(&operator),
            Some(json!({ "name": "x", "scope": "all" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());

    // Listed without secrets; everyone's only for admins.
    let r = app
        .api("GET", "/api/v1/tokens", Some(&operator), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let listed = r.json();
    assert!(!r.text().contains(&scraper));
    assert!(
        listed.as_array().is_some_and(|a| a
            .iter()
            .any(|t| t["id"] == id && t["last_used_at"].is_string())),
        "{listed}"
    );
    let r = app
        .api("GET", "/api/v1/tokens?all=true", Some(&operator), None)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    // Revoked, it stops at once; someone else's is not found.
    let viewer = app.token(Role::Viewer).await;
    let r = app
        .api(
            "DELETE",
            &format!("/api/v1/tokens/{id}"),
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text());
    let r = app
        .api(
            "DELETE",
            &format!("/api/v1/tokens/{id}"),
            Some(&operator),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert!(r.json()["revoked_at"].is_string());
    let r = app.api("GET", "/api/v1/nodes", Some(&scraper), None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = app
        .api("DELETE", "/api/v1/tokens/abc", Some(&operator), None)
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    let doc = app
        .api("GET", "/api/v1/openapi.json", Some(&operator), None)
        .await
        .json();
    assert!(doc["paths"]["/api/v1/tokens"]["post"].is_object());
    assert!(doc["paths"]["/api/v1/tokens/{id}"]["delete"].is_object());
}
