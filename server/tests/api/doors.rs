//! The same door for the server functions as for the API, a login limiter nobody can turn
//! against another person, no query value that reaches a panic, and a catalog export that
//! always imports again.

use crate::browser::session;
use crate::{TestApp, TestResponse, demo_catalog, on_both_backends};
use am_domain::roles::Role;
use axum::{
    body::Body,
    extract::ConnectInfo,
    http::{Request, StatusCode, header},
};
use serde_json::json;
use std::net::SocketAddr;

on_both_backends!(
    every_server_function_refuses_control_characters_before_it_runs,
    a_login_name_with_a_nul_is_refused_and_not_audited,
    control_characters_never_reach_the_catalog_through_a_form,
    an_export_with_hostile_characters_imports_again,
    a_wrong_password_from_one_address_locks_no_one_else_out,
    page_numbers_past_the_last_are_refused_not_a_panic,
    a_bulk_selection_out_of_bounds_is_refused_and_changes_nothing,
);

fn server_fn_call(
    path: &str,
    cookie: Option<&str>,
    content_type: &str,
    body: impl Into<Body>,
) -> Request<Body> {
    let mut b = Request::builder()
        .method("POST")
        .uri(path)
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::ORIGIN, "http://127.0.0.1:3000")
        .header(header::ACCEPT, "application/json")
        .header(header::CONTENT_TYPE, content_type);
    if let Some(c) = cookie {
        b = b.header(header::COOKIE, c);
    }
    b.body(body.into()).expect("request")
}

fn refused_for_control_character(r: &TestResponse) -> bool {
    r.status == StatusCode::BAD_REQUEST && r.text().contains("control character U+0000")
}

/// Generated from the server functions the binary registers, so a new one cannot be left out:
/// a NUL in a form field, in a JSON string and in the query string is a 400 naming the
/// argument, whatever the function and whatever its arguments.
async fn every_server_function_refuses_control_characters_before_it_runs(app: TestApp) {
    let cookie = session(&app, "door-admin", Role::Admin).await;
    let before = app
        .api(
            "GET",
            "/api/v1/catalog",
            Some(&app.token(Role::Admin).await),
            None,
        )
        .await
        .text();
    let paths: Vec<&str> = leptos::server_fn::axum::server_fn_paths()
        .map(|(path, _)| path)
        .filter(|p| p.starts_with("/ui/"))
        .collect();
    assert!(
        paths.len() > 40,
        "only {} server functions found",
        paths.len()
    );
    let mut failures = Vec::new();
    for path in paths {
        let calls = [
            server_fn_call(
                path,
                Some(&cookie),
                "application/x-www-form-urlencoded",
                "title=a%00b&name=x",
            ),
            server_fn_call(
                path,
                Some(&cookie),
                "application/json",
                r#"{"entity":{"title":"a\u0000b"}}"#,
            ),
            server_fn_call(&format!("{path}?q=%00"), Some(&cookie), "text/plain", ""),
        ];
        for (i, req) in calls.into_iter().enumerate() {
            let r = app.send(req).await;
            if !refused_for_control_character(&r) {
                failures.push(format!("{path} (call {i}): {} {}", r.status, r.text()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let after = app
        .api(
            "GET",
            "/api/v1/catalog",
            Some(&app.token(Role::Admin).await),
            None,
        )
        .await
        .text();
    assert_eq!(before, after, "a refused call changed the catalog");
}

async fn a_login_name_with_a_nul_is_refused_and_not_audited(app: TestApp) {
    let r = app
        .send(server_fn_call(
            "/ui/login",
            None,
            "application/x-www-form-urlencoded",
            "name=ghost%00user&password=whatever-it-is",
        ))
        .await;
    assert!(
        refused_for_control_character(&r),
        "{} {}",
        r.status,
        r.text()
    );
    assert!(r.text().contains("`name`"), "{}", r.text());
    // A name with a line break passes the door (free text may break lines) and is audited
    // with the break written as an escape, so it cannot forge a second line.
    let r = app
        .send(server_fn_call(
            "/ui/login",
            None,
            "application/x-www-form-urlencoded",
            "name=ghost%0Auser&password=whatever-it-is",
        ))
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text());
    let admin = app.token(Role::Admin).await;
    let audit = app
        .api(
            "GET",
            "/api/v1/audit?action=login_failed",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(audit.status, StatusCode::OK, "{}", audit.text());
    let entries = audit.json()["entries"].clone();
    let names: Vec<&str> = entries
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["entity_id"].as_str())
        .collect();
    assert_eq!(names, ["ghost\\nuser"], "{entries}");
}

async fn control_characters_never_reach_the_catalog_through_a_form(app: TestApp) {
    let cookie = session(&app, "form-admin", Role::Admin).await;
    let save = |title: &str| {
        let body = json!({
            "entity": {"kind": "pool", "entity": {"id": "hostile", "title": title, "hosts": []}},
            "create": true,
        });
        server_fn_call(
            "/ui/save_entity",
            Some(&cookie),
            "application/json",
            body.to_string(),
        )
    };
    let r = app.send(save("a\u{0}b")).await;
    assert!(
        refused_for_control_character(&r),
        "{} {}",
        r.status,
        r.text()
    );
    // Past the door (a tab is free text there), the catalog's rule for titles refuses it.
    let r = app.send(save("a\tb")).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    assert!(r.text().contains("U+0009"), "{}", r.text());
    let r = app.send(save("<b>&amp; \"quoted\" ✓ 日本語</b>")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let admin = app.token(Role::Admin).await;
    let pool = app
        .api("GET", "/api/v1/pools/hostile", Some(&admin), None)
        .await;
    assert_eq!(pool.json()["title"], "<b>&amp; \"quoted\" ✓ 日本語</b>");
}

/// Every text field of the catalog holding characters that are hostile but allowed: markup,
/// quotes, backslashes, non-Latin scripts, emoji, a no-break space, line breaks and tabs where
/// free text may hold them. What the manager exports, it imports again unchanged.
async fn an_export_with_hostile_characters_imports_again(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let hostile = "<script>alert('x')</script> & \"q\" \\ ✓ 日本語 😀\u{a0}end";
    let mut catalog = demo_catalog();
    for kind in [
        "applications",
        "pools",
        "data_queues",
        "agents",
        "launch_settings",
        "schedule_groups",
    ] {
        for e in catalog[kind].as_array_mut().expect(kind) {
            e["title"] = json!(hostile);
        }
    }
    for a in catalog["agents"].as_array_mut().expect("agents") {
        for p in a["parameters"].as_array_mut().into_iter().flatten() {
            p["title"] = json!(hostile);
            p["description"] = json!(format!("{hostile}\nsecond line\twith a tab"));
        }
    }
    for ls in catalog["launch_settings"]
        .as_array_mut()
        .expect("launch settings")
    {
        if ls["kind"] == "stream" {
            ls["filter"] = json!({"headers": {"tenant": hostile}});
        }
    }
    catalog["applications"][0]["webhook_url"] =
        json!("https://hooks.example/a?b=%3Cc%3E&d=%22e%22");
    catalog["applications"][0]["webhook_secret"] = json!(hostile);
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(catalog))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let exported = app.api("GET", "/api/v1/catalog", Some(&admin), None).await;
    assert_eq!(exported.status, StatusCode::OK);
    assert!(exported.text().contains("日本語"), "{}", exported.text());
    let r = app
        .api(
            "PUT",
            "/api/v1/catalog",
            Some(&admin),
            Some(exported.json()),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "the export did not import: {}",
        r.text()
    );
    let again = app.api("GET", "/api/v1/catalog", Some(&admin), None).await;
    let strip = |mut v: serde_json::Value| {
        v.as_object_mut().map(|o| o.remove("revision"));
        v
    };
    assert_eq!(strip(again.json()), strip(exported.json()));
}

fn login_from(address: [u8; 4], name: &str, password: &str) -> Request<Body> {
    let mut req = server_fn_call(
        "/ui/login",
        None,
        "application/x-www-form-urlencoded",
        format!("name={name}&password={}", password.replace(' ', "+")),
    );
    req.extensions_mut()
        .insert(ConnectInfo(SocketAddr::from((address, 40000))));
    req
}

/// 30 parallel wrong passwords from one address: 5 are checked, 25 refused with Retry-After;
/// the right password from another address is then let in at once, and from the guessing
/// address after the wait only.
async fn a_wrong_password_from_one_address_locks_no_one_else_out(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let r = app
        .api(
            "POST",
            "/api/v1/users",
            Some(&admin),
            Some(json!({"name": "victim", "password": "the right password", "role": "admin"})),
        )
        .await;
    assert!(r.status.is_success(), "{} {}", r.status, r.text());
    let guesses = (0..30).map(|_| app.send(login_from([10, 6, 6, 6], "victim", "a wrong guess")));
    let answers = futures_util::future::join_all(guesses).await;
    let count = |s: StatusCode| answers.iter().filter(|r| r.status == s).count();
    assert_eq!(
        (
            count(StatusCode::UNAUTHORIZED),
            count(StatusCode::TOO_MANY_REQUESTS)
        ),
        (5, 25),
        "{:?}",
        answers.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    for r in answers
        .iter()
        .filter(|r| r.status == StatusCode::TOO_MANY_REQUESTS)
    {
        let wait: u64 = r
            .headers
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .expect("Retry-After in seconds");
        assert!((1..=900).contains(&wait), "Retry-After: {wait}");
    }
    let r = app
        .send(login_from(
            [192, 168, 1, 20],
            "victim",
            "the right password",
        ))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = app
        .send(login_from([10, 6, 6, 6], "victim", "the right password"))
        .await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.text());
}

async fn page_numbers_past_the_last_are_refused_not_a_panic(app: TestApp) {
    let viewer = app.token(Role::Viewer).await;
    for q in [
        "page=9223372036854775808",
        "page=100000000000000000&limit=100",
        "page=18446744073709551615",
        "page=0",
    ] {
        for path in [
            "/api/v1/activations",
            "/api/v1/failures/launch-settings/demo.echo.1/activations",
        ] {
            let r = app
                .api("GET", &format!("{path}?{q}"), Some(&viewer), None)
                .await;
            assert_eq!(
                r.status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{path}?{q}: {}",
                r.text()
            );
            assert_eq!(r.json()["errors"][0]["path"], "page", "{}", r.text());
        }
    }
    let r = app
        .api(
            "GET",
            "/api/v1/activations?page=1000000",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let cookie = session(&app, "pager", Role::Viewer).await;
    let query = json!({"query": {
        "launch_setting": "", "group": "", "application": "", "host": "", "status": "",
        "error_type": "", "from": "", "to": "", "page": 9_223_372_036_854_775_808u64,
    }});
    let r = app
        .send(server_fn_call(
            "/ui/list_activations",
            Some(&cookie),
            "application/json",
            query.to_string(),
        ))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
}

/// The catalog lists' bulk server functions take 1 to 200 launch settings or groups: an empty,
/// oversized or wrong-kind selection is refused whole (the field named), and in bounds each
/// id gets its own outcome.
async fn a_bulk_selection_out_of_bounds_is_refused_and_changes_nothing(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(demo_catalog()))
        .await;
    assert!(r.status.is_success(), "{}", r.text());
    let cookie = session(&app, "bulk-operator", Role::Operator).await;
    let call = |body: serde_json::Value| {
        server_fn_call(
            "/ui/bulk_act",
            Some(&cookie),
            "application/json",
            body.to_string(),
        )
    };
    let many: Vec<String> = (0..=200).map(|i| format!("demo.echo.{i}")).collect();
    for (ids, status) in [
        (json!([]), StatusCode::UNPROCESSABLE_ENTITY),
        (json!(many), StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let r = app
            .send(call(
                json!({"kind": "launch-settings", "ids": ids, "action": "disable"}),
            ))
            .await;
        assert_eq!(r.status, status, "{}", r.text());
        assert!(r.text().contains("between 1 and 200"), "{}", r.text());
    }
    let r = app
        .send(call(
            json!({"kind": "pools", "ids": ["demo"], "action": "disable"}),
        ))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text());
    let r = app
        .api(
            "GET",
            "/api/v1/launch-settings/demo.echo.1",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(
        r.json()["status"]["current"],
        "waiting",
        "nothing was disabled: {}",
        r.text()
    );

    let r = app
        .send(call(json!({
            "kind": "launch-settings", "ids": ["demo.echo.1", "no.such.1"], "action": "disable",
        })))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let done = r.json();
    assert_eq!(done[0]["id"], "demo.echo.1");
    assert!(done[0]["error"].is_null(), "{done}");
    assert!(
        done[1]["error"]
            .as_str()
            .is_some_and(|e| e.contains("not found")),
        "{done}"
    );
}
