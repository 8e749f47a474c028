//! The registry's pages rendered on the server, as a browser without JavaScript gets them, with
//! nodes recorded through the registry as the runtime records them from node reports.

use crate::browser::{page, session};
use crate::{TestApp, on_both_backends};
use am_domain::{
    catalog::{Catalog, InputKind},
    params::{ParamSpec, ParamType},
    roles::Role,
    wire::{Publication, PublishedAgent, PublishedClassifier},
};
use am_services::{Principal, catalog, registry};

on_both_backends!(registry_pages_render_nodes_offers_and_drift);

fn agent(id: &str, input: InputKind, parameters: Vec<ParamSpec>) -> PublishedAgent {
    PublishedAgent {
        id: id.into(),
        title: id.to_uppercase(),
        input,
        parameters,
        suggested_data_queue: Some("demo.events".into()),
        suggested_concurrency: None,
        suggested_overlap: None,
    }
}

async fn registry_pages_render_nodes_offers_and_drift(app: TestApp) {
    let db = &app.services.db;
    let doc: Catalog = serde_json::from_value(serde_json::json!({
        "applications": [{ "id": "demo", "default_pool": "demo-pool" }],
        "pools": [{ "id": "demo-pool", "hosts": ["demo-a"] }],
        "data_queues": [{ "id": "demo.events", "kind": "queue" }],
        "agents": [
            { "application": "demo", "id": "sleep", "input": "standalone", "concurrency": "ANY", "overlap": "skip",
              "parameters": [{ "name": "duration", "type": "duration" }] },
            { "application": "demo", "id": "declared", "input": "standalone", "concurrency": "ANY", "overlap": "skip" }
        ],
        "launch_settings": [
            { "id": "demo.sleep.1", "application": "demo", "agent": "sleep", "kind": "scheduled",
              "parameters": { "duration": "5s" } }
        ],
        "schedule_groups": [
            { "id": "demo.nightly", "application": "demo", "cron": "0 2 * * *", "members": ["demo.sleep.1"] }
        ]
    }))
    .expect("catalog");
    catalog::import(db, &Principal::cli(), doc)
        .await
        .expect("import");
    let now = chrono::Utc::now();
    // The code renamed `duration` to `length`: the saved launch setting no longer fits.
    let publication = Publication {
        application: "demo".into(),
        host: "demo-a".into(),
        version: "2.0.0".into(),
        capacity: 3,
        protocol: am_domain::wire::PROTOCOL_VERSION,
        agents: vec![
            agent(
                "sleep",
                InputKind::Standalone,
                vec![ParamSpec::new("length", ParamType::Duration)],
            ),
            agent("echo", InputKind::Messages, vec![]),
            agent("orphan", InputKind::Messages, vec![]),
        ],
        classifiers: vec![PublishedClassifier {
            name: "sites".into(),
            title: "Sites".into(),
            values: vec![],
        }],
    };
    let mut orphan = publication.clone();
    orphan.agents[2].suggested_data_queue = Some("missing-queue".into());
    registry::record_publication(db, &orphan, now)
        .await
        .expect("publish");
    let cookie = session(&app, "admin-pages", Role::Admin).await;

    let html = page(&app, &cookie, "/nodes").await;
    assert!(html.contains(r#"data-test="node-row""#), "{html}");
    assert!(html.contains(r#"data-host="demo-a""#), "{html}");
    assert!(html.contains(r#"data-status="live""#), "{html}");
    assert!(html.contains("2.0.0"), "{html}");
    assert!(html.contains("0 / 3"), "{html}");
    let html = page(&app, &cookie, "/nodes?application=nothing-here").await;
    assert!(html.contains(r#"data-test="no-nodes""#), "{html}");

    let html = page(&app, &cookie, "/applications/demo").await;
    let row = |id: &str| {
        let start = html
            .find(&format!(r#"data-test="application-agent" data-id="{id}""#))
            .unwrap_or_else(|| panic!("no row for {id}: {html}"));
        let end = html[start..]
            .find("</tr>")
            .map_or(html.len(), |e| start + e);
        html[start..end].to_owned()
    };
    assert!(row("sleep").contains("demo-a"), "{}", row("sleep"));
    assert!(row("sleep").contains(r#"data-test="agent-schema-differs""#));
    assert!(row("echo").contains(r#"data-offered="true""#));
    assert!(row("declared").contains(r#"data-test="agent-not-offered""#));
    // A messages agent whose data queue is not in the catalog lands, flagged.
    assert!(
        row("orphan").contains(r#"data-test="agent-needs-data-queue""#),
        "{}",
        row("orphan")
    );
    let agent_page = page(&app, &cookie, "/agents/demo/orphan").await;
    assert!(
        agent_page.contains(r#"data-test="agent-needs-data-queue""#),
        "{agent_page}"
    );
    assert!(
        html.contains(r#"data-test="not-offered-summary""#),
        "{html}"
    );
    assert!(html.contains("published"), "{html}");

    let html = page(&app, &cookie, "/schema-drift").await;
    assert!(
        html.contains(r#"data-test="drift-row" data-id="demo.sleep.1""#),
        "{html}"
    );
    assert!(html.contains("no parameter"), "{html}");
    // What nodes published that the catalog does not run is listed there too, with why.
    assert!(html.contains(r#"data-test="needs-data-queue""#), "{html}");
    assert!(html.contains(r#"href="/agents/demo/orphan""#), "{html}");
    let refused = html
        .split(r#"data-test="refused-row""#)
        .nth(1)
        .unwrap_or_else(|| panic!("no refused change listed: {html}"));
    assert!(
        refused.contains("demo/demo-a") && refused.contains("demo/sleep"),
        "{refused}"
    );
    let html = page(&app, &cookie, "/launch-settings/demo.sleep.1").await;
    assert!(html.contains(r#"data-test="published-drift""#), "{html}");
    assert!(html.contains("no parameter"), "{html}");
    let html = page(&app, &cookie, "/schema-drift?application=other").await;
    assert!(html.contains(r#"data-test="no-drift""#), "{html}");
}
