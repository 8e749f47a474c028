use crate::{TestApp, on_both_backends};
use am_domain::{
    roles::Role,
    wire::{ActivationId, Counters, Heartbeat, Publication, RunningLaunchSetting},
};
use am_services::registry;
use axum::http::StatusCode;
use chrono::{Duration, Utc};

on_both_backends!(nodes_lists_live_nodes_and_lost_ones_on_request);

fn heartbeat(application: &str, host: &str, running: usize, load: Option<f64>) -> Heartbeat {
    Heartbeat {
        application: application.into(),
        host: host.into(),
        capacity: 8,
        running: vec![RunningLaunchSetting {
            launch_setting: format!("{application}.ls"),
            activations: (0..running)
                .map(|i| ActivationId::from(format!("a{i}")))
                .collect(),
            counters: Counters::default(),
            by_activation: vec![],
        }],
        load,
        dropped_reports: 0,
        quarantined: 0,
        at: Utc::now(),
    }
}

async fn nodes_lists_live_nodes_and_lost_ones_on_request(app: TestApp) {
    let db = &app.services.db;
    let now = Utc::now();
    // An application the catalog does not know yet: the node is registered all the same.
    let publication = Publication {
        application: "billing".into(),
        host: "billing-01".into(),
        version: "3.1.4".into(),
        capacity: 8,
        protocol: am_domain::wire::PROTOCOL_VERSION,
        agents: vec![],
        classifiers: vec![],
    };
    registry::record_publication(db, &publication, now)
        .await
        .expect("publish");
    registry::record_heartbeat(db, &heartbeat("billing", "billing-01", 2, Some(0.75)), now)
        .await
        .expect("heartbeat");
    registry::record_heartbeat(
        db,
        &heartbeat("billing", "billing-02", 0, None),
        now - Duration::minutes(10),
    )
    .await
    .expect("old heartbeat");
    registry::record_heartbeat(db, &heartbeat("crm", "crm-01", 1, None), now)
        .await
        .expect("heartbeat");

    let r = app.api("GET", "/api/v1/nodes", None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    let viewer = app.token(Role::Viewer).await;
    let r = app
        .api(
            "GET",
            "/api/v1/nodes?application=billing",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let body = r.json();
    let nodes = body.as_array().expect("array");
    assert_eq!(nodes.len(), 1, "{body}");
    let n = &nodes[0];
    assert_eq!(n["application"], "billing");
    assert_eq!(n["host"], "billing-01");
    assert_eq!(n["version"], "3.1.4");
    assert_eq!(n["status"], "live");
    assert_eq!(
        (n["running"].as_i64(), n["capacity"].as_i64()),
        (Some(2), Some(8))
    );
    assert_eq!(n["load"].as_f64(), Some(0.75));
    assert!(n["last_heartbeat_at"].is_string(), "{n}");

    let r = app.api("GET", "/api/v1/nodes", Some(&viewer), None).await;
    let body = r.json();
    let hosts: Vec<&str> = body
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|n| n["host"].as_str())
        .collect();
    assert_eq!(hosts, ["billing-01", "crm-01"]);

    let r = app
        .api(
            "GET",
            "/api/v1/nodes?application=billing&include_lost=true",
            Some(&viewer),
            None,
        )
        .await;
    let body = r.json();
    let statuses: Vec<(&str, &str)> = body
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|n| Some((n["host"].as_str()?, n["status"].as_str()?)))
        .collect();
    assert_eq!(statuses, [("billing-01", "live"), ("billing-02", "lost")]);

    let r = app
        .api(
            "GET",
            "/api/v1/nodes?include_lost=perhaps",
            Some(&viewer),
            None,
        )
        .await;
    // A query value of the wrong type is refused like a body's: 422 at its path.
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        r.json()["errors"][0]["path"],
        "include_lost",
        "{}",
        r.text()
    );

    let doc = app
        .api("GET", "/api/v1/openapi.json", Some(&viewer), None)
        .await
        .json();
    assert!(doc["paths"]["/api/v1/nodes"]["get"].is_object(), "{doc}");
}
