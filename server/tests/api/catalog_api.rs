use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::roles::Role;
use axum::http::StatusCode;

on_both_backends!(
    import_with_several_mistakes_returns_422_with_every_path,
    import_then_export_round_trips,
    crud_per_entity,
    launch_settings_and_groups_come_with_their_status,
    a_scheduled_launch_setting_and_its_group_come_and_go_in_either_order,
);

async fn import_with_several_mistakes_returns_422_with_every_path(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let mut doc = demo_catalog();
    doc["applications"][0]["default_pool"] = "missing".into();
    doc["schedule_groups"][0]["cron"] = "61 0 * * *".into();
    doc["schedule_groups"][0]["time_zone"] = "Mars/Base".into();
    let echo = doc["launch_settings"]
        .as_array_mut()
        .expect("list")
        .iter_mut()
        .find(|l| l["id"] == "demo.echo.1")
        .expect("echo");
    echo["parameters"]["organisations"] = serde_json::json!(["acme", "x"]);
    // Paths index the document as sent, not the catalog's sorted order: `demo.poison.1` is the
    // third launch setting in the file and would be the fourth once sorted.
    assert_eq!(doc["launch_settings"][2]["id"], "demo.poison.1");
    doc["launch_settings"][2]["failure_threshold"] = 0.into();

    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(doc))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    let body = r.json();
    let errors = body["errors"].as_array().expect("errors");
    let has = |path_prefix: &str, needle: &str| {
        errors.iter().any(|e| {
            e["path"]
                .as_str()
                .is_some_and(|p| p.starts_with(path_prefix))
                && e["message"].as_str().is_some_and(|m| m.contains(needle))
        })
    };
    assert!(errors.len() >= 5, "{body}");
    assert!(
        errors
            .iter()
            .any(|e| e["path"] == "launch_settings[2].failure_threshold"),
        "{body}"
    );
    assert!(has("applications[0].default_pool", "missing"), "{body}");
    assert!(has("schedule_groups[0].cron", "minute"), "{body}");
    assert!(has("schedule_groups[0].time_zone", "Mars/Base"), "{body}");
    assert!(
        has(
            "launch_settings[",
            "value 'x' is not in classifier 'organisations'"
        ),
        "{body}"
    );

    // Nothing was written.
    let r = app.api("GET", "/api/v1/catalog", Some(&admin), None).await;
    assert_eq!(r.json()["applications"], serde_json::json!([]));

    // A shape error names its path too.
    let mut doc = demo_catalog();
    doc["launch_settings"][1]["kind"] = "sometimes".into();
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(doc))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.json()["errors"][0]["path"], "launch_settings[1].kind");
}

async fn import_then_export_round_trips(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(demo_catalog()))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let exported = app
        .api("GET", "/api/v1/catalog", Some(&admin), None)
        .await
        .json();

    let mut expected: am_domain::catalog::Catalog =
        serde_json::from_value(demo_catalog()).expect("parse");
    expected.normalize();
    let got: am_domain::catalog::Catalog =
        serde_json::from_value(exported.clone()).expect("parse export");
    assert_eq!(got, expected);

    // The export is itself a valid import that changes nothing.
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(exported))
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let summary = r.json();
    assert_eq!(summary["created"], serde_json::json!([]));
    assert_eq!(summary["updated"], serde_json::json!([]));
    assert_eq!(summary["deleted"], serde_json::json!([]));
}

async fn crud_per_entity(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let viewer = app.token(Role::Viewer).await;
    assert_eq!(
        app.api("PUT", "/api/v1/catalog", Some(&admin), Some(demo_catalog()))
            .await
            .status,
        StatusCode::OK
    );

    for (list, item) in [
        ("/api/v1/applications", "/api/v1/applications/demo"),
        ("/api/v1/pools", "/api/v1/pools/demo-pool"),
        ("/api/v1/data-queues", "/api/v1/data-queues/demo.events"),
        ("/api/v1/agents", "/api/v1/agents/demo/echo"),
        (
            "/api/v1/launch-settings",
            "/api/v1/launch-settings/demo.echo.1",
        ),
        (
            "/api/v1/schedule-groups",
            "/api/v1/schedule-groups/demo.nightly",
        ),
    ] {
        let r = app.api("GET", list, Some(&viewer), None).await;
        assert_eq!(r.status, StatusCode::OK, "{list}");
        assert!(!r.json().as_array().expect("array").is_empty(), "{list}");
        let r = app.api("GET", item, Some(&viewer), None).await;
        assert_eq!(r.status, StatusCode::OK, "{item}: {}", r.text());
        // PUT of the same body is accepted and changes nothing harmful; it answers the entity
        // without the read-only status a GET adds to launch settings and groups.
        let mut body = r.json();
        let r = app.api("PUT", item, Some(&admin), Some(body.clone())).await;
        assert_eq!(r.status, StatusCode::OK, "{item}: {}", r.text());
        if let Some(fields) = body.as_object_mut() {
            fields.remove("status");
        }
        assert_eq!(r.json(), body);
    }

    assert_eq!(
        app.api("GET", "/api/v1/pools/nope", Some(&viewer), None)
            .await
            .status,
        StatusCode::NOT_FOUND
    );

    // Deleting what is in use: 409 naming the user.
    let r = app
        .api(
            "DELETE",
            "/api/v1/data-queues/demo.events",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(r.text().contains("demo/echo"), "{}", r.text());

    // An invalid field comes back relative to the entity.
    let bad = serde_json::json!({"id": "q2", "kind": "queue", "address": "amq.reserved"});
    let r = app
        .api("POST", "/api/v1/data-queues", Some(&admin), Some(bad))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.json()["errors"][0]["path"], "address", "{}", r.text());

    // A scheduled launch setting is created together with its group membership.
    let mut ls = app
        .api(
            "GET",
            "/api/v1/launch-settings/demo.fail.nightly",
            Some(&admin),
            None,
        )
        .await
        .json();
    ls["id"] = "demo.fail.extra".into();
    let r = app
        .api(
            "POST",
            "/api/v1/launch-settings",
            Some(&admin),
            Some(ls.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    let r = app
        .api(
            "POST",
            "/api/v1/launch-settings?groups=demo.nightly",
            Some(&admin),
            Some(ls),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());

    // Operators enable and disable; the status is visible.
    let operator = app.token(Role::Operator).await;
    let r = app
        .api(
            "POST",
            "/api/v1/launch-settings/demo.echo.1/disable",
            Some(&operator),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    let r = app
        .api(
            "GET",
            "/api/v1/launch-settings/demo.echo.1",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.json()["enabled"], false);
    let r = app
        .api(
            "POST",
            "/api/v1/schedule-groups/demo.nightly/disable",
            Some(&viewer),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    // Delete: a launch setting, then its agent (poison has no other).
    let r = app
        .api(
            "DELETE",
            "/api/v1/launch-settings/demo.poison.1",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    let r = app
        .api("DELETE", "/api/v1/agents/demo/poison", Some(&admin), None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
}

/// No dead end in the entity API: a group and its scheduled launch setting are created and
/// deleted in either order, and each refusal names the call that gets out of it.
async fn a_scheduled_launch_setting_and_its_group_come_and_go_in_either_order(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let put = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(demo_catalog()))
        .await;
    assert_eq!(put.status, StatusCode::OK);
    let mut ls = app
        .api(
            "GET",
            "/api/v1/launch-settings/demo.fail.nightly",
            Some(&admin),
            None,
        )
        .await
        .json();
    ls["id"] = "demo.fail.weekly".into();
    let group = serde_json::json!({
        "id": "demo.weekly", "application": "demo", "cron": "0 0 3 * * Mon",
        "time_zone": "UTC", "members": ["demo.fail.weekly"],
    });
    // The group first names a member that is not there yet; the launch setting alone has no
    // group: both refusals say what to do.
    let r = app
        .api(
            "POST",
            "/api/v1/schedule-groups",
            Some(&admin),
            Some(group.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    assert!(r.text().contains("?groups=demo.weekly"), "{}", r.text());
    let r = app
        .api(
            "POST",
            "/api/v1/launch-settings",
            Some(&admin),
            Some(ls.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    assert!(r.text().contains("?groups="), "{}", r.text());
    // The way: the group without members, then the launch setting with its group.
    let mut empty = group.clone();
    empty["members"] = serde_json::json!([]);
    let r = app
        .api("POST", "/api/v1/schedule-groups", Some(&admin), Some(empty))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = app
        .api(
            "POST",
            "/api/v1/launch-settings?groups=demo.weekly",
            Some(&admin),
            Some(ls.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());

    // Deleting the group alone would leave its member in no group: refused, naming the ways.
    let r = app
        .api(
            "DELETE",
            "/api/v1/schedule-groups/demo.weekly",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text());
    assert!(
        r.text().contains("with_members=true") && r.text().contains("demo.fail.weekly"),
        "{}",
        r.text()
    );
    // Deleting the launch setting first: it leaves its group.
    let r = app
        .api(
            "DELETE",
            "/api/v1/launch-settings/demo.fail.weekly",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    let g = app
        .api(
            "GET",
            "/api/v1/schedule-groups/demo.weekly",
            Some(&admin),
            None,
        )
        .await
        .json();
    assert_eq!(g["members"], serde_json::json!([]), "{g}");
    // Again, and this time the group goes with its member in one call; a member of another
    // group too (demo.fail.nightly, of demo.failing) stays.
    let r = app
        .api(
            "POST",
            "/api/v1/launch-settings?groups=demo.weekly",
            Some(&admin),
            Some(ls),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let mut both = group;
    both["members"] = serde_json::json!(["demo.fail.weekly", "demo.fail.nightly"]);
    let r = app
        .api(
            "PUT",
            "/api/v1/schedule-groups/demo.weekly",
            Some(&admin),
            Some(both),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = app
        .api(
            "DELETE",
            "/api/v1/schedule-groups/demo.weekly?with_members=true",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    for (path, want) in [
        ("/api/v1/schedule-groups/demo.weekly", StatusCode::NOT_FOUND),
        (
            "/api/v1/launch-settings/demo.fail.weekly",
            StatusCode::NOT_FOUND,
        ),
        ("/api/v1/launch-settings/demo.fail.nightly", StatusCode::OK),
    ] {
        let r = app.api("GET", path, Some(&admin), None).await;
        assert_eq!(r.status, want, "{path}: {}", r.text());
    }
}

#[tokio::test]
async fn openapi_document_lists_every_entity() {
    let app = TestApp::new(am_services::testing::Backend::Sqlite).await;
    let r = app.api("GET", "/api/v1/openapi.json", None, None).await;
    assert_eq!(r.status, StatusCode::OK);
    let doc = r.json();
    let paths = doc["paths"].as_object().expect("paths");
    for p in [
        "/api/v1/catalog",
        "/api/v1/applications/{id}",
        "/api/v1/pools/{id}",
        "/api/v1/data-queues/{id}",
        "/api/v1/agents/{application}/{id}",
        "/api/v1/launch-settings/{id}",
        "/api/v1/launch-settings/{id}/enable",
        "/api/v1/schedule-groups/{id}/disable",
        "/readyz",
    ] {
        assert!(paths.contains_key(p), "missing {p}");
    }
    assert!(doc["components"]["schemas"]["LaunchSetting"].is_object());
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    // `groups` is an optional query parameter of the launch-setting writes, not a path one.
    let groups = doc["paths"]["/api/v1/launch-settings"]["post"]["parameters"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "groups"))
        .cloned()
        .expect("groups parameter");
    assert_eq!(groups["in"], "query", "{groups}");
    assert_ne!(groups["required"], true, "{groups}");
    assert!(paths.contains_key("/api/v1/launch-settings/{id}/run"));
}

/// Every operation the OpenAPI document lists is served by a route (a viewer's call reaches its
/// handler, which answers in JSON, or the metrics text; an unrouted path would get 405, or the
/// API door's "no such API endpoint" 404), and each of its path parameters is a segment of its
/// path.
#[tokio::test]
async fn every_documented_operation_is_routed_with_its_path_parameters() {
    let app = TestApp::new(am_services::testing::Backend::Sqlite).await;
    let viewer = app.token(Role::Viewer).await;
    let mut checked = 0;
    for operation in crate::operations(&app).await {
        let (method, path) = (&operation.method, &operation.path);
        // A stream never ends; its route is checked in dashboard_api.
        if operation.streams() {
            continue;
        }
        let params = operation.params();
        for p in &params {
            let name = p["name"].as_str().expect("a parameter name");
            let in_path = path.contains(&format!("{{{name}}}"));
            match p["in"].as_str() {
                Some("path") => assert!(
                    in_path,
                    "{method} {path}: path parameter {name} is not in the path"
                ),
                _ => assert!(
                    !in_path,
                    "{method} {path}: {name} is in the path but documented as {}",
                    p["in"]
                ),
            }
        }
        // Every `{segment}` of the path is a documented path parameter.
        for seg in path.split('/').filter(|s| s.starts_with('{')) {
            let name = seg.trim_matches(|c| c == '{' || c == '}');
            assert!(
                params
                    .iter()
                    .any(|p| p["name"] == name && p["in"] == "path"),
                "{method} {path}: {{{name}}} is not documented"
            );
        }
        let concrete = path.replace('{', "x").replace('}', "");
        let body = (method != "GET" && method != "DELETE").then(|| serde_json::json!({}));
        let r = app.api(method, &concrete, Some(&viewer), body).await;
        // The API's door answers an unrouted path with this error.
        let unrouted = r.status == StatusCode::NOT_FOUND
            && serde_json::from_str::<serde_json::Value>(&r.text()).map_or(true, |v| {
                v["error"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("no such API endpoint"))
            });
        let handled = r.status != StatusCode::METHOD_NOT_ALLOWED && !unrouted;
        assert!(
            handled,
            "{method} {path} answered {} {} (not routed?)",
            r.status,
            r.text().chars().take(200).collect::<String>()
        );
        checked += 1;
    }
    assert!(checked > 40, "only {checked} operations documented");
}

/// `GET` of a launch setting or group adds its read-only `status` (with the broker backlog of a
/// launch setting); the document can be sent back as it came.
async fn launch_settings_and_groups_come_with_their_status(app: TestApp) {
    let admin = app.token(Role::Admin).await;
    let r = app
        .api("PUT", "/api/v1/catalog", Some(&admin), Some(demo_catalog()))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    // What the reconciler's sampler would have seen.
    *app.services.broker_depths.write().expect("depths") = am_domain::read::depths::Depths {
        sampled_at: Some(chrono::Utc::now()),
        queues: vec![am_domain::read::depths::QueueDepth {
            queue: "am.ls.demo.echo.1".into(),
            role: "subscription".into(),
            launch_setting: Some("demo.echo.1".into()),
            data_queue: Some("demo.events".into()),
            ready: 42,
            consumers: 2,
        }],
        ..Default::default()
    };

    let r = app
        .api(
            "GET",
            "/api/v1/launch-settings/demo.echo.1",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let mut echo = r.json();
    assert_eq!(echo["id"], "demo.echo.1");
    assert_eq!(echo["status"]["current"], "waiting", "{echo}");
    assert!(echo["status"]["last_result"].is_null());
    assert_eq!(echo["status"]["backlog"]["ready"], 42);
    assert_eq!(echo["status"]["backlog"]["consumers"], 2);
    assert_eq!(echo["status"]["backlog"]["queue"], "am.ls.demo.echo.1");
    // The launch setting's page and the list say the same (the list on two lines).
    let cookie = crate::browser::session(&app, "vic", Role::Viewer).await;
    let html = crate::browser::page(&app, &cookie, "/launch-settings/demo.echo.1").await;
    assert!(html.contains("42 waiting · 2 consumers"), "the page");
    let html = crate::browser::page(&app, &cookie, "/launch-settings").await;
    assert!(
        html.contains("42 waiting") && html.contains("2 consumers"),
        "the list"
    );

    let list = app
        .api("GET", "/api/v1/launch-settings", Some(&admin), None)
        .await
        .json();
    let poison = list
        .as_array()
        .and_then(|l| l.iter().find(|l| l["id"] == "demo.poison.1"))
        .expect("poison");
    assert!(poison["status"]["current"].is_string(), "{poison}");
    assert!(
        poison["status"].get("backlog").is_none(),
        "not sampled: {poison}"
    );

    // Sent back with its status, as a client that GETs and PUTs does.
    echo["title"] = "Echo, renamed".into();
    let r = app
        .api(
            "PUT",
            "/api/v1/launch-settings/demo.echo.1",
            Some(&admin),
            Some(echo),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["title"], "Echo, renamed");

    let mut group = app
        .api(
            "GET",
            "/api/v1/schedule-groups/demo.nightly",
            Some(&admin),
            None,
        )
        .await
        .json();
    assert!(group["status"]["current"].is_string(), "{group}");
    group["title"] = "Nightly, renamed".into();
    let r = app
        .api(
            "PUT",
            "/api/v1/schedule-groups/demo.nightly",
            Some(&admin),
            Some(group),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    // Any other unknown field is still refused.
    let mut group = r.json();
    group["colour"] = "red".into();
    let r = app
        .api(
            "PUT",
            "/api/v1/schedule-groups/demo.nightly",
            Some(&admin),
            Some(group),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
}

/// The other direction: every API route the server declares is in the OpenAPI document. axum
/// cannot list a router's routes, so the route literals are read from the API's source files
/// (every `"/api/v1/..."` string there is a route or an annotation's path).
#[tokio::test]
async fn every_declared_route_is_documented() {
    let app = TestApp::new(am_services::testing::Backend::Sqlite).await;
    let doc = app
        .api("GET", "/api/v1/openapi.json", None, None)
        .await
        .json();
    let documented = doc["paths"].as_object().expect("paths");
    let sources = [
        include_str!("../../src/api/mod.rs"),
        include_str!("../../src/api/activations.rs"),
        include_str!("../../src/api/broker.rs"),
        include_str!("../../src/api/catalog.rs"),
        include_str!("../../src/api/dashboard.rs"),
        include_str!("../../src/api/dead_letters.rs"),
        include_str!("../../src/api/entities.rs"),
        include_str!("../../src/api/failures.rs"),
        include_str!("../../src/api/health.rs"),
        include_str!("../../src/api/nodes.rs"),
        include_str!("../../src/api/operations.rs"),
    ];
    let mut routes = std::collections::BTreeSet::new();
    for source in sources {
        for piece in source.split("\"/api/v1/").skip(1) {
            let rest = piece.split('"').next().unwrap_or_default();
            routes.insert(format!("/api/v1/{rest}"));
        }
    }
    // The document itself is served beside the documented API.
    routes.remove("/api/v1/openapi.json");
    assert!(routes.len() > 30, "routes found: {routes:?}");
    let missing: Vec<&String> = routes
        .iter()
        .filter(|r| !documented.contains_key(r.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "declared but not documented: {missing:?}"
    );
}
