//! The global search on both backends: parts of ids and titles of every kind of catalog entity,
//! whatever the case; host names; an activation by its id, its first digits or its shortened
//! form; a dead letter by its message id or number; the text's `%` and `_` taken literally;
//! an error type as failure reports (also late ones) leave it; which hits the text named whole.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::{
    read::search::{Found, Hit},
    roles::Role,
    wire::{ActivationId, FailureReport, ToManager},
};
use am_services::{
    catalog,
    entity::{activations, dead_letters, error_types},
    runtime::{RuntimeConfig, reports},
    search,
};
use chrono::{DateTime, Duration, SubsecRound, Utc};
use sea_orm::{ActiveValue::Set, DatabaseConnection, EntityTrait};
use uuid::Uuid;

on_both_backends!(
    anything_is_found_by_what_identifies_it,
    error_types_are_found_as_failures_report_them
);

fn kinds(hits: &[Hit]) -> Vec<(String, String)> {
    hits.iter()
        .map(|h| {
            let v = serde_json::to_value(&h.found).expect("serializes");
            (
                v["kind"].as_str().unwrap_or_default().to_owned(),
                v["id"].to_string().trim_matches('"').to_owned(),
            )
        })
        .collect()
}

async fn anything_is_found_by_what_identifies_it(db: &DatabaseConnection) {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
    let viewer = actor(Role::Viewer);

    // Part of an id, any case: the launch setting and the agent.
    let hits = search::find(db, &viewer, "ECHO").await.expect("search");
    let found = kinds(&hits);
    assert!(
        found.contains(&("launch_setting".into(), "demo.echo.1".into())),
        "{found:?}"
    );
    assert!(
        found.contains(&("launch_setting".into(), "demo.echo.drain".into())),
        "{found:?}"
    );
    assert!(
        hits.iter().any(|h| h.found
            == Found::Agent {
                application: "demo".into(),
                id: "echo".into()
            }),
        "{found:?}"
    );
    // Part of a title.
    let hits = search::find(db, &viewer, "every event")
        .await
        .expect("search");
    assert_eq!(
        kinds(&hits),
        [("launch_setting".to_owned(), "demo.echo.1".to_owned())]
    );
    assert_eq!(hits[0].label, "Echo every event");
    // Wildcards are text: nothing has a `%` or `_` in it.
    assert!(
        search::find(db, &viewer, "%")
            .await
            .expect("search")
            .is_empty()
    );
    assert!(
        search::find(db, &viewer, "_")
            .await
            .expect("search")
            .is_empty()
    );
    assert!(
        search::find(db, &viewer, "  ")
            .await
            .expect("search")
            .is_empty()
    );

    // An activation by its id; a dead letter by its message id and by its number.
    let run = Uuid::now_v7();
    activations::Entity::insert(activations::ActiveModel {
        id: Set(run),
        launch_setting_id: Set(Some("demo.echo.1".into())),
        group_id: Set(None),
        parent_id: Set(None),
        position: Set(None),
        trigger: Set("manual".into()),
        fire_key: Set(None),
        status: Set("running".into()),
        requested_by: Set(None),
        created_at: Set(chrono::Utc::now()),
        started_at: Set(None),
        finished_at: Set(None),
        error: Set(None),
        application_id: Set(Some("demo".into())),
        fencing_token: Set(1),
        pinned_host: Set(None),
        wait_until: Set(None),
        trace_parent: Set(None),
    })
    .exec(db)
    .await
    .expect("activation");
    let hits = search::find(db, &viewer, &run.to_string())
        .await
        .expect("search");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].found, Found::Activation { id: run });
    assert_eq!(hits[0].label, "demo.echo.1");
    assert!(hits[0].exact, "a whole id names its activation");
    // As pages show it, and by its first digits (through the primary key's range).
    let full = run.to_string();
    for typed in [
        am_domain::shortened::shorten(&full),
        full[..13].to_owned(),
        full[..8].to_uppercase(),
    ] {
        let hits = search::find(db, &viewer, &typed).await.expect("search");
        assert!(
            hits.iter()
                .any(|h| h.found == Found::Activation { id: run } && !h.exact),
            "{typed}: {hits:?}"
        );
    }
    // The same head with another end names nothing.
    let other_end = format!("{}…{}", &full[..8], "0000");
    let wrong = if full.ends_with("0000") {
        "ffff"
    } else {
        "0000"
    };
    let hits = search::find(db, &viewer, &other_end.replace("0000", wrong))
        .await
        .expect("search");
    assert!(
        !hits
            .iter()
            .any(|h| h.found == Found::Activation { id: run }),
        "{hits:?}"
    );

    // A host of a pool, by part of its name; its whole name names it.
    let host = demo_catalog().pools[0].hosts[0].clone();
    let hits = search::find(db, &viewer, &host[..host.len() - 1])
        .await
        .expect("search");
    assert!(
        hits.iter()
            .any(|h| h.found == Found::Host { name: host.clone() } && !h.exact),
        "{hits:?}"
    );
    let hits = search::find(db, &viewer, &host).await.expect("search");
    assert!(
        hits.iter()
            .any(|h| h.found == Found::Host { name: host.clone() } && h.exact),
        "{hits:?}"
    );
    // A launch setting's whole id names it; a part of it does not.
    let hits = search::find(db, &viewer, "demo.echo.1")
        .await
        .expect("search");
    let exact: Vec<_> = hits.iter().filter(|h| h.exact).map(|h| &h.found).collect();
    assert_eq!(
        exact,
        [&Found::LaunchSetting {
            id: "demo.echo.1".into()
        }]
    );

    let dl = dead_letters::Entity::insert(dead_letters::ActiveModel {
        dedupe_key: Set("k".into()),
        launch_setting_id: Set(Some("demo.poison.1".into())),
        message_id: Set(Some("order-4711".into())),
        headers: Set(serde_json::json!({})),
        body: Set(b"poison".to_vec()),
        attempts: Set(3),
        received_at: Set(chrono::Utc::now()),
        status: Set("dead".into()),
        replay_count: Set(0),
        ..Default::default()
    })
    .exec(db)
    .await
    .expect("dead letter")
    .last_insert_id;
    let hits = search::find(db, &viewer, "order-4711")
        .await
        .expect("search");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].found, Found::DeadLetter { id: dl });
    let hits = search::find(db, &viewer, &format!("#{dl}"))
        .await
        .expect("search");
    assert_eq!(
        hits.iter()
            .filter(|h| h.found == Found::DeadLetter { id: dl })
            .count(),
        1
    );
}

fn failure(ls: &str, error_type: &str, at: DateTime<Utc>) -> ToManager {
    ToManager::Failure(FailureReport {
        application: "demo".into(),
        host: "demo-a".into(),
        activation_id: ActivationId(Uuid::now_v7().to_string()),
        launch_setting: ls.into(),
        agent: "echo".into(),
        error_type: error_type.into(),
        message: "failed".into(),
        details: String::new(),
        data_message_id: None,
        attempt: 1,
        temporary: false,
        disposition: None,
        at,
        report_id: Some(Uuid::new_v4().to_string()),
        replay: None,
    })
}

async fn error_types_are_found_as_failures_report_them(db: &DatabaseConnection) {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
    let viewer = actor(Role::Viewer);
    let cfg = RuntimeConfig::new("t");
    let t = Utc::now().trunc_subsecs(3);
    let batch = [
        failure("demo.echo.1", "DbTimeout", t),
        failure("demo.flaky.1", "DbTimeout", t - Duration::days(2)),
        failure("demo.flaky.1", "HttpError", t),
        // The same pair twice in one batch.
        failure("demo.flaky.1", "HttpError", t - Duration::seconds(1)),
    ];
    reports::apply(db, &cfg, &batch, t).await.expect("applies");
    // A late report of an older failure does not move the latest time back.
    reports::apply(
        db,
        &cfg,
        &[failure("demo.echo.1", "DbTimeout", t - Duration::hours(1))],
        t,
    )
    .await
    .expect("applies");
    let echo = error_types::Entity::find_by_id(("demo.echo.1".to_owned(), "DbTimeout".to_owned()))
        .one(db)
        .await
        .expect("reads")
        .expect("kept");
    assert_eq!(echo.last_seen, t);

    // Part of a type, any case; its whole name names it.
    let hits = search::find(db, &viewer, "dbtime").await.expect("search");
    let types: Vec<_> = hits
        .iter()
        .filter(|h| matches!(h.found, Found::ErrorType { .. }))
        .map(|h| (&h.found, h.label.as_str(), h.exact))
        .collect();
    assert_eq!(
        types,
        [(
            &Found::ErrorType {
                name: "DbTimeout".into()
            },
            "error type of 2 launch settings",
            false
        )]
    );
    let hits = search::find(db, &viewer, "HTTPERROR")
        .await
        .expect("search");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(
        hits[0].found,
        Found::ErrorType {
            name: "HttpError".into()
        }
    );
    assert_eq!(hits[0].label, "error type of 1 launch setting");
    assert!(hits[0].exact);
    // A type nobody reported is not found.
    assert!(
        search::find(db, &viewer, "OutOfMemory")
            .await
            .expect("search")
            .is_empty()
    );
}
