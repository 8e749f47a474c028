//! `GET /api/v1/dead-letters[/{id}]` and `POST /api/v1/dead-letters/{replay,delete}`: who may
//! do what, filters and their mistakes, one dead letter's body and history, and bulk requests
//! starting background operations.

use crate::{TestApp, on_both_backends};
use am_domain::{roles::Role, wire::names::Names};
use am_services::dead_letters::{self, IncomingDeadLetter};
use axum::http::StatusCode;
use chrono::Utc;
use serde_json::{Map, Value, json};

on_both_backends!(
    viewers_browse_and_open_dead_letters,
    operators_start_replays_and_deletes,
    mistakes_are_named,
);

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn letter(ls: &str, error_type: &str, message_id: &str, body: &[u8]) -> IncomingDeadLetter {
    IncomingDeadLetter {
        routing_key: "am.dead-letters".into(),
        message_id: Some(message_id.into()),
        content_type: Some("application/json".into()),
        headers: obj(json!({
            "x-am-launch-setting": ls,
            "x-am-data-queue": "demo.later",
            "x-am-last-error-type": error_type,
            "x-am-last-error-message": format!("{error_type} on {message_id}"),
            "x-am-attempts": 4,
        })),
        body: body.to_vec(),
        ..Default::default()
    }
}

/// Three dead letters: two of `demo.flaky.1` (the newest has a JSON body), one of
/// `demo.poison.1` with a binary body. Their ids, oldest first.
async fn seed(app: &TestApp) -> Vec<i64> {
    let db = &app.services.db;
    let names = Names::new("am");
    for (i, l) in [
        letter("demo.poison.1", "Poison", "p-1", &[0xff, 0xfe]),
        letter("demo.flaky.1", "Permanent", "f-1", b"plain"),
        letter("demo.flaky.1", "Permanent", "f-2", br#"{"a":[1,2]}"#),
    ]
    .into_iter()
    .enumerate()
    {
        dead_letters::store(
            db,
            &names,
            &[l],
            Utc::now() + chrono::Duration::seconds(i as i64),
        )
        .await
        .expect("stored");
    }
    let page = dead_letters::list(
        db,
        &am_services::Principal::cli(),
        &Default::default(),
        None,
        None,
    )
    .await
    .expect("list");
    page.items.iter().rev().map(|i| i.id).collect()
}

async fn viewers_browse_and_open_dead_letters(app: TestApp) {
    let ids = seed(&app).await;
    let viewer = app.token(Role::Viewer).await;
    for path in [
        "/api/v1/dead-letters".to_owned(),
        format!("/api/v1/dead-letters/{}", ids[0]),
    ] {
        let r = app.api("GET", &path, None, None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{path}");
    }

    let r = app
        .api("GET", "/api/v1/dead-letters?limit=2", Some(&viewer), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let j = r.json();
    assert_eq!(j["total"], 3);
    assert_eq!(j["items"][0]["id"], ids[2]);
    assert_eq!(j["items"][0]["body_preview"], r#"{"a":[1,2]}"#);
    assert_eq!(j["items"][0]["status"], "dead");
    let next = j["next"].as_i64().expect("a next page");
    let r = app
        .api(
            "GET",
            &format!("/api/v1/dead-letters?limit=2&after={next}"),
            Some(&viewer),
            None,
        )
        .await;
    let j = r.json();
    assert_eq!(j["items"][0]["id"], ids[0]);
    assert_eq!(j["next"], Value::Null);

    let r = app
        .api(
            "GET",
            "/api/v1/dead-letters?launch_setting=demo.flaky.1&error_type=Permanent&data_queue=demo.later&status=dead",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.json()["total"], 2, "{}", r.text());
    let r = app
        .api(
            "GET",
            "/api/v1/dead-letters?error_type=Poison&from=2000-01-01&to=2999-01-01T00:00",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.json()["total"], 1, "{}", r.text());

    let r = app
        .api(
            "GET",
            &format!("/api/v1/dead-letters/{}", ids[2]),
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let j = r.json();
    assert_eq!(j["letter"]["launch_setting"], "demo.flaky.1");
    assert_eq!(j["letter"]["attempts"], 4);
    assert_eq!(j["body"]["encoding"], "json");
    assert_eq!(j["body"]["text"], "{\n  \"a\": [\n    1,\n    2\n  ]\n}");
    assert_eq!(j["headers"]["x-am-last-error-type"], "Permanent");
    assert_eq!(j["failures"], json!([]));
    let r = app
        .api(
            "GET",
            &format!("/api/v1/dead-letters/{}", ids[1]),
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.json()["body"]["encoding"], "text");
    let r = app
        .api(
            "GET",
            &format!("/api/v1/dead-letters/{}", ids[0]),
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(
        r.json()["body"],
        json!({"encoding": "base64", "text": "//4=", "size": 2})
    );

    for path in ["/api/v1/dead-letters/999999", "/api/v1/dead-letters/abc"] {
        let r = app.api("GET", path, Some(&viewer), None).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{path}: {}", r.text());
    }
    // Viewers may not replay or delete.
    for path in ["/api/v1/dead-letters/replay", "/api/v1/dead-letters/delete"] {
        let r = app
            .api("POST", path, Some(&viewer), Some(json!({"ids": [ids[0]]})))
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.text());
        // Without a token a write is a browser's and needs an allowed Origin; a bad token is 401.
        let r = app
            .api(
                "POST",
                path,
                Some("amt_not-a-token"),
                Some(json!({"ids": [ids[0]]})),
            )
            .await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{path}");
    }
    let doc = app
        .api("GET", "/api/v1/openapi.json", None, None)
        .await
        .json();
    for path in [
        "/api/v1/dead-letters",
        "/api/v1/dead-letters/{id}",
        "/api/v1/dead-letters/replay",
        "/api/v1/dead-letters/delete",
    ] {
        assert!(
            doc["paths"][path].is_object(),
            "{path} in the OpenAPI document"
        );
    }
}

async fn operators_start_replays_and_deletes(app: TestApp) {
    let ids = seed(&app).await;
    let operator = app.token(Role::Operator).await;
    let r = app
        .api(
            "POST",
            "/api/v1/dead-letters/replay",
            Some(&operator),
            Some(json!({"ids": [ids[0], ids[2]]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    let op = r.json();
    assert_eq!(op["kind"], "replay-dead-letters");
    assert_eq!(op["total"], 2);
    assert!(
        op["requested_by"]
            .as_str()
            .is_some_and(|b| b.starts_with("operator-"))
    );
    let id = op["id"].as_str().expect("operation id");
    let r = app
        .api(
            "GET",
            &format!("/api/v1/operations/{id}"),
            Some(&operator),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["total"], 2);

    let r = app
        .api(
            "POST",
            "/api/v1/dead-letters/delete",
            Some(&operator),
            Some(json!({"filter": {"launch_setting": "demo.flaky.1"}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    let op = r.json();
    assert_eq!(op["kind"], "delete-dead-letters");
    assert_eq!(op["total"], 2);
}

async fn mistakes_are_named(app: TestApp) {
    seed(&app).await;
    let viewer = app.token(Role::Viewer).await;
    let operator = app.token(Role::Operator).await;
    for (query, path) in [
        ("status=gone", "status"),
        ("from=tomorrow", "from"),
        ("from=2030-02-01&to=2030-01-01", "to"),
        ("after=x", "after"),
        ("after=999999", "after"),
    ] {
        let r = app
            .api(
                "GET",
                &format!("/api/v1/dead-letters?{query}"),
                Some(&viewer),
                None,
            )
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{query}");
        assert_eq!(r.json()["errors"][0]["path"], path, "{query}: {}", r.text());
    }
    for (body, path) in [
        (json!({"filter": {"status": "replayed"}}), "filter.status"),
        (json!({"filter": {"from": "soon"}}), "filter.from"),
        (json!({"idz": [1]}), "idz"),
        (json!({"ids": ["one"]}), "ids[0]"),
    ] {
        let r = app
            .api(
                "POST",
                "/api/v1/dead-letters/replay",
                Some(&operator),
                Some(body.clone()),
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            r.text()
        );
        assert_eq!(r.json()["errors"][0]["path"], path, "{body}: {}", r.text());
    }
    // A selection that matches nothing starts nothing.
    let r = app
        .api(
            "POST",
            "/api/v1/dead-letters/delete",
            Some(&operator),
            Some(json!({"filter": {"launch_setting": "no.such.ls"}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    let r = app
        .api(
            "POST",
            "/api/v1/dead-letters/replay",
            Some(&operator),
            Some(json!({"ids": [999_999]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
}
