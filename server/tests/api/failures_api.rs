//! `GET /api/v1/activations[/{id}]` and `GET /api/v1/failures[/...]`, with an activation run
//! the way the runtime runs it: *Run now*, then the node's reports (accepted, started, two
//! failures, failed) applied as the report consumer applies them.

use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::{
    roles::Role,
    wire::{
        ActivationEvent, ActivationId, ActivationReport, ActivationResult, FailureReport,
        Heartbeat, ToManager,
    },
};
use am_services::{Principal, catalog, registry, runtime};
use axum::http::StatusCode;
use chrono::Utc;
use uuid::Uuid;

on_both_backends!(
    activations_and_failures_read_through_the_api,
    bad_filters_are_422_with_their_parameter,
    a_failed_activation_is_rerun_through_the_api,
);

const LS: &str = "demo.fail.nightly";
const HOST: &str = "demo-b";

fn report(activation: Uuid, event: ActivationEvent) -> ToManager {
    ToManager::Activation(ActivationReport {
        application: "demo".into(),
        host: HOST.into(),
        activation_id: ActivationId(activation.to_string()),
        launch_setting: LS.into(),
        fencing_token: 1,
        event,
        at: Utc::now(),
    })
}

fn failure(activation: Uuid, error_type: &str, message_id: &str) -> ToManager {
    ToManager::Failure(FailureReport {
        application: "demo".into(),
        host: HOST.into(),
        activation_id: ActivationId(activation.to_string()),
        launch_setting: LS.into(),
        agent: "fail".into(),
        error_type: error_type.into(),
        message: format!("{error_type} happened"),
        details: "at demo::fail (fail.rs:1)".into(),
        data_message_id: Some(message_id.into()),
        attempt: 1,
        temporary: false,
        disposition: None,
        at: Utc::now(),
        report_id: None,
        replay: None,
    })
}

/// A failed activation of `demo.fail.nightly` on `demo-b` with failures `DemoFailure` (two)
/// and `Other` (one).
pub(crate) async fn failed_run(app: &TestApp) -> Uuid {
    let db = &app.services.db;
    let cfg = runtime::RuntimeConfig::new("t");
    let doc = serde_json::from_value(demo_catalog()).expect("catalog");
    catalog::import(db, &Principal::cli(), doc)
        .await
        .expect("import");
    let now = Utc::now();
    let hb = Heartbeat {
        application: "demo".into(),
        host: HOST.into(),
        capacity: 4,
        running: vec![],
        load: Some(0.0),
        dropped_reports: 0,
        quarantined: 0,
        at: now,
    };
    registry::record_heartbeat(db, &hb, now)
        .await
        .expect("heartbeat");
    let id = runtime::run::run_now(
        db,
        &cfg,
        &Principal::cli(),
        &am_domain::usage::EntityRef::LaunchSetting(LS.into()),
    )
    .await
    .expect("run now");
    runtime::reports::apply(
        db,
        &cfg,
        &[
            report(id, ActivationEvent::Accepted),
            report(id, ActivationEvent::Started),
            failure(id, "DemoFailure", "m-1"),
            failure(id, "DemoFailure", "m-2"),
            failure(id, "Other", "m-3"),
            report(
                id,
                ActivationEvent::Finished {
                    result: ActivationResult::Failed,
                    error: Some("the fail agent always fails".into()),
                    counters: None,
                },
            ),
        ],
        Utc::now(),
    )
    .await
    .expect("reports");
    id
}

async fn activations_and_failures_read_through_the_api(app: TestApp) {
    let id = failed_run(&app).await;
    let r = app.api("GET", "/api/v1/activations", None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = app.api("GET", "/api/v1/failures", None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let viewer = app.token(Role::Viewer).await;
    let get = |path: String| {
        let viewer = viewer.clone();
        let app = &app;
        async move {
            let r = app.api("GET", &path, Some(&viewer), None).await;
            assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text());
            r.json()
        }
    };

    // The list, filtered as the README's HTTP section names it.
    let list = get(format!(
        "/api/v1/activations?launch_setting={LS}&status=failed&host={HOST}"
    ))
    .await;
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{list}");
    assert_eq!(items[0]["id"], id.to_string());
    assert_eq!(items[0]["failures"], 3);
    assert_eq!(items[0]["hosts"], serde_json::json!([HOST]));
    assert_eq!(items[0]["trigger"], "manual");
    let none = get("/api/v1/activations?status=running".into()).await;
    assert_eq!(none["items"].as_array().map(Vec::len), Some(0));

    // One activation: the host's lane with its events in order and the run's timestamps.
    let detail = get(format!("/api/v1/activations/{id}")).await;
    assert_eq!(detail["activation"]["status"], "failed");
    let lanes = detail["timeline"].as_array().expect("lanes");
    let lane = lanes.iter().find(|l| l["host"] == HOST).expect("host lane");
    let kinds: Vec<&str> = lane["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["dispatched", "accepted", "started", "failed"],
        "{lane}"
    );
    let run = &lane["runs"][0];
    assert_eq!(run["status"], "failed");
    assert!(
        run["accepted_at"].is_string() && run["finished_at"].is_string(),
        "{run}"
    );
    assert_eq!(lane["failures"], 3);
    assert_eq!(detail["failures"]["total"], 3);
    assert_eq!(
        detail["failures"]["by_error_type"][0]["error_type"],
        "DemoFailure"
    );
    assert_eq!(detail["failures"]["by_error_type"][0]["count"], 2);
    let r = app
        .api(
            "GET",
            &format!("/api/v1/activations/{}", Uuid::now_v7()),
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // The failures: entries and grouped counts, paged by cursor.
    let page = get(format!(
        "/api/v1/failures?launch_setting={LS}&activation={id}&host={HOST}&limit=2"
    ))
    .await;
    assert_eq!(page["total"], 3);
    assert_eq!(
        page["by_error_type"][0],
        serde_json::json!({"error_type": "DemoFailure", "count": 2})
    );
    assert_eq!(page["entries"].as_array().map(Vec::len), Some(2));
    let next = page["next"].as_i64().expect("a next page");
    let rest = get(format!("/api/v1/failures?launch_setting={LS}&after={next}")).await;
    assert_eq!(rest["entries"].as_array().map(Vec::len), Some(1));
    assert_eq!(rest["next"], serde_json::Value::Null);
    let entry = &page["entries"][0];
    assert_eq!(entry["agent"], "fail");
    assert_eq!(entry["details"], "at demo::fail (fail.rs:1)");
    let typed = get("/api/v1/failures?error_type=Other".into()).await;
    assert_eq!(typed["total"], 1);

    // The drill-down levels.
    let level1 = get("/api/v1/failures/launch-settings".into()).await;
    assert_eq!(level1["items"][0]["launch_setting"], LS);
    assert_eq!(level1["items"][0]["total"], 3);
    assert_eq!(level1["items"][0]["application"], "demo");
    let level2 = get(format!("/api/v1/failures/launch-settings/{LS}/activations")).await;
    assert_eq!(level2["activations"], 1);
    assert_eq!(level2["items"][0]["activation"], id.to_string());
    assert_eq!(level2["items"][0]["status"], "failed");
    assert_eq!(
        level2["items"][0]["hosts"][0],
        serde_json::json!({"host": HOST, "count": 3})
    );
    let level3 = get(format!(
        "/api/v1/failures/activations/{id}/hosts?error_type=DemoFailure"
    ))
    .await;
    assert_eq!(level3["launch_setting"], LS);
    assert_eq!(level3["items"][0]["host"], HOST);
    assert_eq!(level3["items"][0]["total"], 2);
    assert_eq!(level3["items"][0]["status"], "failed");

    // Documented.
    let doc = get("/api/v1/openapi.json".into()).await;
    for path in [
        "/api/v1/activations",
        "/api/v1/activations/{id}",
        "/api/v1/failures",
        "/api/v1/failures/launch-settings",
        "/api/v1/failures/launch-settings/{id}/activations",
        "/api/v1/failures/activations/{id}/hosts",
    ] {
        assert!(doc["paths"][path]["get"].is_object(), "{path} undocumented");
    }
}

async fn bad_filters_are_422_with_their_parameter(app: TestApp) {
    let viewer = app.token(Role::Viewer).await;
    for (path, param) in [
        ("/api/v1/activations?status=exploded", "status"),
        ("/api/v1/activations?from=yesterday", "from"),
        ("/api/v1/failures?activation=nope", "activation"),
        ("/api/v1/failures?after=first", "after"),
        ("/api/v1/failures?from=2030-02-01&to=2030-01-01", "to"),
        ("/api/v1/failures/launch-settings?to=soon", "to"),
        ("/api/v1/failures/activations/nope/hosts", "activation"),
    ] {
        let r = app.api("GET", path, Some(&viewer), None).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{path}: {}",
            r.text()
        );
        assert_eq!(r.json()["errors"][0]["path"], param, "{path}");
    }
}

async fn a_failed_activation_is_rerun_through_the_api(app: TestApp) {
    let id = failed_run(&app).await;
    let path = format!("/api/v1/activations/{id}/rerun");
    let viewer = app.token(Role::Viewer).await;
    let operator = app.token(Role::Operator).await;
    let r = app
        .api("POST", &path, Some(&viewer), Some(serde_json::json!({})))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text());
    let r = app.api("POST", &path, Some(&operator), None).await;
    assert_eq!(
        r.status,
        StatusCode::BAD_REQUEST,
        "a JSON body is required: {}",
        r.text()
    );
    let r = app
        .api(
            "POST",
            &path,
            Some(&operator),
            Some(serde_json::json!({"hosts": ["x"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    let r = app
        .api(
            "POST",
            &path,
            Some(&operator),
            Some(serde_json::json!({"from_member": LS})),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "not a group's: {}",
        r.text()
    );
    assert!(r.text().contains("from_member"), "{}", r.text());
    let r = app
        .api(
            "POST",
            &format!("/api/v1/activations/{}/rerun", Uuid::now_v7()),
            Some(&operator),
            Some(serde_json::json!({})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    let r = app
        .api(
            "POST",
            &path,
            Some(&operator),
            Some(serde_json::json!({"only_failed_hosts": true})),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    let started = r.json();
    assert_eq!(started["rerun_of"], id.to_string());
    let new_id = started["id"]
        .as_str()
        .expect("the new activation's id")
        .to_owned();
    let detail = app
        .api(
            "GET",
            &format!("/api/v1/activations/{new_id}"),
            Some(&viewer),
            None,
        )
        .await
        .json();
    assert_eq!(detail["activation"]["trigger"], "rerun");
    assert_eq!(detail["activation"]["hosts"], serde_json::json!([HOST]));
    let original = app
        .api(
            "GET",
            &format!("/api/v1/activations/{id}"),
            Some(&viewer),
            None,
        )
        .await
        .json();
    assert!(
        original
            .to_string()
            .contains(&format!("re-run as {new_id} on {HOST}")),
        "the original's timeline names its re-run: {original}"
    );
}
