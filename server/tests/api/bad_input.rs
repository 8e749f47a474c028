//! Bad input at every door, generated from the OpenAPI document so a new endpoint cannot be
//! forgotten: malformed JSON, bodies of the wrong type, unknown fields, bodies over the limit,
//! ids with odd characters, out-of-range and nonsense query values, unknown paths and methods
//! under `/api/`. Every answer must be a 4xx with the JSON error shape (never a 5xx, never a
//! hang), and the catalog, the users and the dead letters must be unchanged afterwards.

use crate::{TestApp, TestResponse, demo_catalog, on_both_backends};
use am_domain::roles::Role;
use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};
use std::time::Duration;

on_both_backends!(no_bad_input_breaks_a_door_or_changes_anything);

/// Path parameter values no entity has: odd characters, encoded separators, overlong, numbers
/// out of range.
fn odd_ids() -> Vec<String> {
    vec![
        "x".into(),
        "%00".into(),
        "..%2F..%2Fetc".into(),
        "a%20b%3Cscript%3E".into(),
        "%FF%FE".into(),
        "-1".into(),
        "99999999999999999999999".into(),
        "y".repeat(5_000),
    ]
}

/// Query values that are out of range, of the wrong type or not text at all.
fn odd_values() -> Vec<&'static str> {
    vec![
        "-1",
        "abc",
        "%FF",
        "99999999999999999999999",
        // Fits a u64, not the databases' signed 64-bit integers (an offset once panicked).
        "9223372036854775808",
        "18446744073709551615",
        "1e309",
        "%00",
        "",
    ]
}

/// Request bodies that no endpoint accepts: malformed, of the wrong JSON type, or made only of
/// fields nobody knows.
fn bad_bodies() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("application/json", b"{\"a\":".to_vec()),
        ("application/json", b"[]".to_vec()),
        ("application/json", b"\"a string\"".to_vec()),
        ("application/json", b"42".to_vec()),
        ("application/json", b"null".to_vec()),
        ("application/json", b"{\"unknown_field_xyz\": 1}".to_vec()),
        ("application/json", b"\xff\xfe\x00".to_vec()),
        ("text/plain", b"{}".to_vec()),
    ]
}

/// A body over every endpoint's limit (the catalog's is the largest, 32 MiB).
fn huge_body() -> Vec<u8> {
    let mut b = b"{\"x\":\"".to_vec();
    b.resize(33 * 1024 * 1024, b'a');
    b.extend_from_slice(b"\"}");
    b
}

async fn call(
    app: &TestApp,
    token: &str,
    method: &str,
    uri: &str,
    body: Option<(&str, Vec<u8>)>,
) -> TestResponse {
    let mut b = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::AUTHORIZATION, format!("Bearer {token}"));
    let req = match body {
        Some((kind, bytes)) => b.header(header::CONTENT_TYPE, kind).body(Body::from(bytes)),
        None => {
            b = b.header(header::CONTENT_LENGTH, "0");
            b.body(Body::empty())
        }
    }
    .expect("request");
    tokio::time::timeout(Duration::from_secs(20), app.send(req))
        .await
        .unwrap_or_else(|_| panic!("{method} {uri}: no answer within 20 s"))
}

/// What `r` must be for bad input: no server error, and a refusal in the JSON error shape.
fn check(what: &str, r: &TestResponse, failures: &mut Vec<String>) {
    if r.status.is_server_error() {
        failures.push(format!("{what}: {} {}", r.status, short(&r.text())));
        return;
    }
    if r.status.is_client_error() {
        let shaped = serde_json::from_slice::<serde_json::Value>(&r.body)
            .ok()
            .is_some_and(|v| v["error"].is_string());
        if !shaped {
            failures.push(format!(
                "{what}: {} without the JSON error shape: {}",
                r.status,
                short(&r.text())
            ));
        }
    }
}

fn short(s: &str) -> String {
    s.chars().take(160).collect()
}

/// What must not change: the catalog, the users and the dead letters.
async fn state(app: &TestApp, token: &str) -> (String, String, String) {
    let catalog = app.api("GET", "/api/v1/catalog", Some(token), None).await;
    let users = app.api("GET", "/api/v1/users", Some(token), None).await;
    let dead = app
        .api("GET", "/api/v1/dead-letters", Some(token), None)
        .await;
    for r in [&catalog, &users, &dead] {
        assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    }
    (catalog.text(), users.text(), dead.text())
}

async fn no_bad_input_breaks_a_door_or_changes_anything(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(demo_catalog()))
        .await;
    assert!(r.status.is_success(), "{} {}", r.status, r.text());
    let before = state(&app, &admin).await;
    let mut failures = Vec::new();
    let mut calls = 0;
    for operation in crate::operations(&app).await {
        // A stream never ends; its door is the same extractor stack as the rest.
        if operation.streams() {
            continue;
        }
        let (m, path) = (&operation.method, &operation.path);
        let params = operation.params();
        let in_path = |p: &serde_json::Value| p["in"] == "path";
        let has_body = operation.has_body();
        let filled = |value: &str| {
            params
                .iter()
                .filter(|p| in_path(p))
                .fold(path.clone(), |acc, p| {
                    acc.replace(
                        &format!("{{{}}}", p["name"].as_str().unwrap_or_default()),
                        value,
                    )
                })
        };
        let no_body = || has_body.then(|| ("application/json", b"{}".to_vec()));

        // Odd ids in every path parameter.
        if params.iter().any(in_path) {
            for id in odd_ids() {
                let uri = filled(&id);
                let r = call(&app, &admin, m, &uri, no_body()).await;
                calls += 1;
                check(&format!("{m} {uri}"), &r, &mut failures);
            }
        }
        let uri = filled("x");
        // Odd values in every query parameter.
        for p in params.iter().filter(|p| p["in"] == "query") {
            let name = p["name"].as_str().unwrap_or_default();
            for v in odd_values() {
                let q = format!("{uri}?{name}={v}");
                let r = call(&app, &admin, m, &q, no_body()).await;
                calls += 1;
                check(&format!("{m} {q}"), &r, &mut failures);
            }
        }
        // Bad bodies, and one over the limit.
        if has_body {
            for (kind, body) in bad_bodies() {
                let r = call(&app, &admin, m, &uri, Some((kind, body.clone()))).await;
                calls += 1;
                let what = format!(
                    "{m} {uri} with {kind} {}",
                    short(&String::from_utf8_lossy(&body))
                );
                if r.status.is_success() {
                    failures.push(format!("{what}: accepted ({})", r.status));
                }
                check(&what, &r, &mut failures);
            }
            let r = call(
                &app,
                &admin,
                m,
                &uri,
                Some(("application/json", huge_body())),
            )
            .await;
            calls += 1;
            if r.status != StatusCode::PAYLOAD_TOO_LARGE {
                failures.push(format!("{m} {uri} with 33 MiB: {} (not 413)", r.status));
            }
            check(&format!("{m} {uri} with 33 MiB"), &r, &mut failures);
        }
    }
    // A well-formed entity whose text holds a NUL character, which PostgreSQL cannot store.
    let nul = serde_json::json!({ "id": "nul", "title": "a\u{0}b", "default_pool": "demo-pool" });
    let r = call(
        &app,
        &admin,
        "PUT",
        "/api/v1/applications/nul",
        Some(("application/json", nul.to_string().into_bytes())),
    )
    .await;
    calls += 1;
    if !r.status.is_client_error() {
        failures.push(format!("an application titled with a NUL: {}", r.status));
    }
    check("an application titled with a NUL", &r, &mut failures);

    // Paths and methods nobody serves, under the API: a JSON 404 or 405, not the UI's page.
    for (m, uri) in [
        ("GET", "/api/v1/nope"),
        ("GET", "/api/v2/catalog"),
        ("GET", "/api/"),
        ("POST", "/api/v1/launch-settings/x/y/z"),
        ("PATCH", "/api/v1/nodes"),
        ("DELETE", "/api/v1/catalog"),
        ("PUT", "/api/v1/dashboard"),
    ] {
        let r = call(&app, &admin, m, uri, None).await;
        calls += 1;
        if !matches!(
            r.status,
            StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
        ) {
            failures.push(format!("{m} {uri}: {} (not 404 or 405)", r.status));
        }
        check(&format!("{m} {uri}"), &r, &mut failures);
    }
    assert!(
        calls > 500,
        "only {calls} calls: is the OpenAPI document read?"
    );
    assert!(
        failures.is_empty(),
        "{} of {calls} calls answered badly:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        state(&app, &admin).await,
        before,
        "bad input changed the catalog, the users or the dead letters"
    );
}
