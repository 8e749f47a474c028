//! The dead-letter pages rendered on the server, as a browser without JavaScript gets them:
//! the list with its filters in the URL, one dead letter with headers, body and failure
//! history, the failure logs' links to it, and the buttons only operators get.

use crate::browser::{has, lacks, page, page_with, session, tag};
use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::{roles::Role, wire::names::Names};
use am_services::{
    Principal, catalog,
    dead_letters::{self, IncomingDeadLetter},
    entity::failure_logs,
};
use axum::http::StatusCode;
use chrono::{Duration, Utc};
use sea_orm::{ActiveValue::Set, EntityTrait};
use serde_json::{Map, Value, json};
use uuid::Uuid;

on_both_backends!(pages_list_open_and_link_dead_letters);

const LS: &str = "demo.flaky.1";

fn headers(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Two dead letters of `demo.flaky.1` (the newer one parked before, with a failure history)
/// and one of `demo.poison.1`; their ids oldest first.
async fn seed(app: &TestApp) -> Vec<i64> {
    let db = &app.services.db;
    let doc = serde_json::from_value(demo_catalog()).expect("catalog");
    catalog::import(db, &Principal::cli(), doc)
        .await
        .expect("import");
    let letter = |ls: &str, et: &str, m: &str, body: &str, extra: Value| {
        let mut h = headers(json!({
            "x-am-launch-setting": ls,
            "x-am-data-queue": "demo.later",
            "x-am-last-error-type": et,
            "x-am-last-error-message": format!("{et} on {m}"),
            "x-am-attempts": 5,
            "x-am-host": "node-a",
        }));
        h.extend(headers(extra));
        IncomingDeadLetter {
            routing_key: "am.dead-letters".into(),
            message_id: Some(m.into()),
            content_type: Some("application/json".into()),
            headers: h,
            body: body.as_bytes().to_vec(),
            ..Default::default()
        }
    };
    let now = Utc::now();
    for (i, l) in [
        letter(LS, "Permanent", "m-1", r#"{"n":1}"#, json!({})),
        letter("demo.poison.1", "Poison", "p-1", "poison pill", json!({})),
        letter(
            LS,
            "Permanent",
            "m-2",
            r#"{"order":{"id":42}}"#,
            json!({"x-am-parked": "2030-01-01T00:00:00Z"}),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        dead_letters::store(
            db,
            &Names::new("am"),
            &[l],
            now + Duration::seconds(i as i64),
        )
        .await
        .expect("stored");
    }
    let activation = Uuid::now_v7();
    failure_logs::Entity::insert_many((1..=2).map(|attempt| failure_logs::ActiveModel {
        launch_setting_id: Set(LS.into()),
        activation_id: Set(activation),
        host: Set("node-a".into()),
        application_id: Set("demo".into()),
        agent_id: Set("flaky".into()),
        error_type: Set("Permanent".into()),
        message: Set(format!("attempt {attempt} failed")),
        details: Set(Some("at flaky.rs:7".into())),
        data_message_id: Set(Some("m-2".into())),
        attempt: Set(Some(attempt)),
        occurred_at: Set(now - Duration::seconds(10 - i64::from(attempt))),
        ..Default::default()
    }))
    .exec(db)
    .await
    .expect("failures");
    let page = dead_letters::list(db, &Principal::cli(), &Default::default(), None, None)
        .await
        .expect("list");
    page.items.iter().rev().map(|i| i.id).collect()
}

async fn pages_list_open_and_link_dead_letters(app: TestApp) {
    let ids = seed(&app).await;
    let viewer = session(&app, "watcher", Role::Viewer).await;
    let operator = session(&app, "fixer", Role::Operator).await;
    let row = |id: i64| format!(r#"data-id="{id}""#);

    let path = "/dead-letters";
    let html = page(&app, &viewer, path).await;
    for id in &ids {
        tag(
            &html,
            &[
                r#"data-test="dead-letter-row""#,
                &row(*id),
                r#"data-status="dead""#,
            ],
            path,
        );
        has(&html, &format!(r#"href="/dead-letters/{id}""#), path);
    }
    has(&html, r#"data-test="dl-total">3<"#, path);
    tag(&html, &[r#"data-test="dl-parked""#], path);
    // Filters are links that keep the others.
    has(
        &html,
        &format!(r#"href="/dead-letters?launch_setting={LS}""#),
        path,
    );
    // Viewers get no buttons.
    lacks(&html, r#"data-test="dl-bulk""#, path);
    lacks(&html, r#"data-test="dl-select""#, path);

    let path = &format!("/dead-letters?launch_setting={LS}&error_type=Permanent&status=dead");
    let html = page(&app, &viewer, path).await;
    has(&html, r#"data-test="dl-total">2<"#, path);
    lacks(&html, &row(ids[1]), path);
    tag(&html, &[r#"data-test="filter-launch-setting""#, LS], path);
    tag(&html, &[r#"value="dead""#, "selected"], path);
    // The next page by cursor: older than the newest one.
    let path = &format!("/dead-letters?after={}", ids[2]);
    let html = page(&app, &viewer, path).await;
    lacks(&html, &row(ids[2]), path);
    tag(
        &html,
        &[r#"data-test="dead-letter-row""#, &row(ids[0])],
        path,
    );
    has(&html, r#"data-test="page-first""#, path);
    let path = "/dead-letters?from=yesterday";
    let html = page_with(&app, &viewer, path, StatusCode::UNPROCESSABLE_ENTITY).await;
    tag(&html, &[r#"data-test="dl-error""#], path);

    // One dead letter.
    let path = &format!("/dead-letters/{}", ids[2]);
    let html = page(&app, &viewer, path).await;
    has(&html, &format!("Dead letter #{}", ids[2]), path);
    tag(
        &html,
        &[r#"data-test="dl-body-encoding""#, r#"data-encoding="json""#],
        path,
    );
    has(&html, "\"order\": {", path);
    tag(
        &html,
        &[
            r#"data-test="dl-header""#,
            r#"data-name="x-am-last-error-type""#,
        ],
        path,
    );
    tag(&html, &[r#"data-test="dl-policy""#, "dead-letter"], path);
    tag(&html, &[r#"data-test="dl-parked""#], path);
    tag(&html, &[r#"data-test="failure""#], path);
    has(&html, "attempt 2 failed", path);
    has(&html, "attempt 1 failed", path);
    // Its failures link into the drill-down.
    has(&html, &format!(r#"href="/failures/{LS}/"#), path);
    lacks(&html, r#"data-test="dl-actions""#, path);

    // The failure logs link to it, and the link resolves.
    let path = &format!("/failures/{LS}?view=failures");
    let html = page(&app, &viewer, path).await;
    let link = format!(r#"href="/dead-letters/{}""#, ids[2]);
    has(&html, &link, path);
    tag(&html, &[r#"data-test="failure-dead-letter""#, &link], path);

    let path = "/dead-letters/999999";
    let html = page_with(&app, &viewer, path, StatusCode::NOT_FOUND).await;
    tag(&html, &[r#"data-test="dl-error""#, "not found"], path);

    // Operators get the buttons.
    let path = "/dead-letters";
    let html = page(&app, &operator, path).await;
    for b in [
        "dl-bulk",
        "dl-replay-selected",
        "dl-replay-matching",
        "dl-delete-selected",
        "dl-delete-matching",
        "dl-select-all",
        "dl-select",
    ] {
        has(&html, &format!(r#"data-test="{b}""#), path);
    }
    // Nothing dead to act on among replayed ones.
    dead_letters::mark_replayed(
        &app.services.db,
        &ids,
        "fixer",
        uuid::Uuid::nil(),
        Utc::now(),
    )
    .await
    .expect("marked");
    let path = "/dead-letters?status=replayed";
    let html = page(&app, &operator, path).await;
    lacks(&html, r#"data-test="dl-select""#, path);
    lacks(&html, r#"data-test="dl-replay-matching""#, path);
    tag(
        &html,
        &[r#"data-test="dl-replayed-by""#, "replayed by fixer"],
        path,
    );
    let path = &format!("/dead-letters/{}", ids[0]);
    let html = page(&app, &operator, path).await;
    lacks(&html, r#"data-test="dl-replay""#, path);
    has(&html, "replayed by fixer", path);
}
