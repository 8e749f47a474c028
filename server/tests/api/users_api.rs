//! `/api/v1/users`: admins create people, change roles, disable and set passwords; the last
//! active admin stays; everyone else gets 403.

use crate::{TestApp, on_both_backends};
use am_domain::roles::Role;
use axum::http::StatusCode;
use serde_json::json;

on_both_backends!(admins_manage_users_through_the_api);

async fn admins_manage_users_through_the_api(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let operator = app.token(Role::Operator).await;
    let users = app.api("GET", "/api/v1/users", Some(&admin), None).await;
    assert_eq!(users.status, StatusCode::OK, "{}", users.text());
    let me = users
        .json()
        .as_array()
        .and_then(|a| a.iter().find(|u| u["role"] == "admin"))
        .and_then(|u| u["name"].as_str())
        .expect("the admin is listed")
        .to_owned();
    assert!(!users.text().contains("password"), "{}", users.text());

    let new = json!({ "name": "vic", "role": "viewer", "password": "a fine long password" });
    let r = app
        .api("POST", "/api/v1/users", Some(&operator), Some(new.clone()))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app
        .api("POST", "/api/v1/users", Some(&admin), Some(new.clone()))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    assert_eq!(r.json()["role"], "viewer");
    let r = app
        .api("POST", "/api/v1/users", Some(&admin), Some(new))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text());
    let r = app
        .api(
            "POST",
            "/api/v1/users",
            Some(&admin),
            Some(json!({ "name": "wes", "role": "viewer", "password": "short" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    assert!(r.text().contains("password"), "{}", r.text());

    // A role change, then a disable; unknown fields and users are refused by name.
    let r = app
        .api(
            "PATCH",
            "/api/v1/users/vic",
            Some(&admin),
            Some(json!({ "role": "operator" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["role"], "operator");
    let r = app
        .api(
            "PATCH",
            "/api/v1/users/vic",
            Some(&admin),
            Some(json!({ "disabled": true })),
        )
        .await;
    assert_eq!(r.json()["disabled"], true);
    let r = app
        .api(
            "PATCH",
            "/api/v1/users/vic",
            Some(&admin),
            Some(json!({ "colour": "red" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    assert!(r.text().contains("colour"), "{}", r.text());
    let r = app
        .api(
            "PATCH",
            "/api/v1/users/nobody",
            Some(&admin),
            Some(json!({ "disabled": true })),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text());

    // The only active admin cannot demote or disable themself.
    let r = app
        .api(
            "PATCH",
            &format!("/api/v1/users/{me}"),
            Some(&admin),
            Some(json!({ "role": "viewer" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text());
    assert!(r.text().contains("last active admin"), "{}", r.text());

    // Each change is in the audit log.
    let r = app
        .api(
            "GET",
            "/api/v1/audit?entity_type=user&entity_id=vic",
            Some(&operator),
            None,
        )
        .await;
    let actions: Vec<String> = r.json()["entries"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["action"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(actions, ["update", "update", "create"], "{}", r.text());

    let doc = app
        .api("GET", "/api/v1/openapi.json", Some(&operator), None)
        .await
        .json();
    assert!(doc["paths"]["/api/v1/users"]["post"].is_object());
    assert!(doc["paths"]["/api/v1/users/{name}"]["patch"].is_object());
}
