//! The dashboard over HTTP: `GET /api/v1/dashboard`, its live event stream, the one snapshot
//! producer every open stream shares, and the same figures on `/metrics`.

use crate::browser::{session, with_cookie};
use crate::{TestApp, demo_catalog, on_both_backends};
use am_domain::{roles::Role, usage::EntityRef};
use am_services::{
    Principal, catalog,
    entity::{activations, dead_letters, failure_logs},
    runtime::Metrics,
    testing::Backend,
};
use axum::{
    body::Body,
    http::{Request, StatusCode, header},
};
use chrono::{DateTime, Duration, Utc};
use http_body_util::BodyExt;
use sea_orm::{ActiveValue::Set, DatabaseConnection, EntityTrait};
use server::live::DashboardFeed;
use std::time::Duration as StdDuration;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;
use uuid::Uuid;

on_both_backends!(
    the_dashboard_and_metrics_show_the_seeded_figures,
    the_dashboard_page_renders_every_figure_on_the_server,
);

fn activation(status: &str, created: DateTime<Utc>) -> activations::ActiveModel {
    activations::ActiveModel {
        id: Set(Uuid::now_v7()),
        launch_setting_id: Set(Some("demo.fail.nightly".into())),
        group_id: Set(None),
        parent_id: Set(None),
        position: Set(None),
        trigger: Set("manual".into()),
        fire_key: Set(None),
        status: Set(status.into()),
        requested_by: Set(None),
        created_at: Set(created),
        started_at: Set(None),
        finished_at: Set(None),
        error: Set(None),
        application_id: Set(Some("demo".into())),
        fencing_token: Set(1),
        pinned_host: Set(None),
        wait_until: Set(None),
        trace_parent: Set(None),
    }
}

fn failure(at: DateTime<Utc>) -> failure_logs::ActiveModel {
    failure_logs::ActiveModel {
        launch_setting_id: Set("demo.fail.nightly".into()),
        activation_id: Set(Uuid::nil()),
        host: Set("h1".into()),
        application_id: Set("demo".into()),
        agent_id: Set("fail".into()),
        error_type: Set("DemoFailure".into()),
        message: Set("by design".into()),
        occurred_at: Set(at),
        ..Default::default()
    }
}

fn dead_letter(key: &str, status: &str) -> dead_letters::ActiveModel {
    dead_letters::ActiveModel {
        dedupe_key: Set(key.into()),
        headers: Set(serde_json::json!({})),
        body: Set(b"poison".to_vec()),
        attempts: Set(3),
        received_at: Set(Utc::now()),
        status: Set(status.into()),
        replay_count: Set(0),
        ..Default::default()
    }
}

/// The demo catalog with `demo.echo.1` disabled by the breaker, two failed activations and one
/// running, three failures a few minutes ago, two dead letters waiting and one replayed; the
/// time it was seeded at (the failures are 5, 6 and 7 minutes before it).
async fn seed(db: &DatabaseConnection) -> DateTime<Utc> {
    let doc = serde_json::from_value(demo_catalog()).expect("demo catalog");
    catalog::import(db, &Principal::cli(), doc)
        .await
        .expect("import");
    catalog::set_enabled(
        db,
        &Principal::system("breaker"),
        &EntityRef::LaunchSetting("demo.echo.1".into()),
        false,
        "breaker tripped on h1 for demo.echo.1: 3 consecutive failures",
    )
    .await
    .expect("disable");
    let now = Utc::now();
    activations::Entity::insert_many([
        activation("failed", now - Duration::minutes(10)),
        activation("failed", now - Duration::minutes(9)),
        activation("running", now - Duration::minutes(1)),
    ])
    .exec(db)
    .await
    .expect("activations");
    failure_logs::Entity::insert_many((0..3).map(|i| failure(now - Duration::minutes(5 + i))))
        .exec(db)
        .await
        .expect("failures");
    dead_letters::Entity::insert_many([
        dead_letter("a", "dead"),
        dead_letter("b", "dead"),
        dead_letter("c", "replayed"),
    ])
    .exec(db)
    .await
    .expect("dead letters");
    now
}

/// The value of the sample `series` (name with its labels) in a Prometheus text exposition.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let (name, value) = l.rsplit_once(' ')?;
        (name == series).then(|| value.parse().ok())?
    })
}

async fn the_dashboard_and_metrics_show_the_seeded_figures(app: TestApp) {
    let db = &app.services.db;
    seed(db).await;
    let metrics = &app.services.runtime.metrics;
    Metrics::add(&metrics.reports, 42);
    metrics.report_rate.record(90);

    let viewer = app.token(Role::Viewer).await;
    let r = app
        .api("GET", "/api/v1/dashboard", Some(&viewer), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let d = r.json();
    let count = |status: &str| {
        d["activations"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["status"] == status))
            .map(|c| c["count"].clone())
    };
    assert_eq!(count("failed"), Some(2.into()));
    assert_eq!(count("running"), Some(1.into()));
    assert_eq!(d["running_total"], 1);
    assert_eq!(d["running"][0]["launch_setting"], "demo.fail.nightly");
    assert_eq!(d["dead_letters"], 2);
    assert_eq!(d["disabled_launch_settings_total"], 1);
    assert_eq!(d["disabled_launch_settings"][0]["id"], "demo.echo.1");
    assert_eq!(
        d["disabled_launch_settings"][0]["reason"],
        "breaker tripped on h1 for demo.echo.1: 3 consecutive failures"
    );
    assert_eq!(d["failures_last_hour"], 3);
    assert_eq!(d["failing"][0]["launch_setting"], "demo.fail.nightly");
    assert_eq!(d["failing"][0]["last_error_type"], "DemoFailure");
    assert_eq!(
        d["failures_per_hour"]["error_types"],
        serde_json::json!([{"error_type": "DemoFailure", "count": 3}])
    );
    assert_eq!(
        d["failures_per_hour"]["hours"].as_array().map(Vec::len),
        Some(24)
    );

    let doc = app
        .api("GET", "/api/v1/openapi.json", Some(&viewer), None)
        .await
        .json();
    assert!(
        doc["paths"]["/api/v1/dashboard"]["get"].is_object(),
        "{doc}"
    );
    assert!(
        doc["paths"]["/api/v1/dashboard/events"]["get"].is_object(),
        "{doc}"
    );
    assert!(
        doc["components"]["schemas"]["Dashboard"].is_object(),
        "{doc}"
    );

    // Recoveries, as the watchdog counts them in its transactions.
    for _ in 0..2 {
        am_services::recovery::count(
            &app.services.db,
            "demo.echo.1",
            am_services::recovery::kind::LOST,
        )
        .await
        .expect("counted");
    }
    // The recorded reports fall in a complete second once this one is over.
    tokio::time::sleep(StdDuration::from_millis(1100)).await;
    // Not without a token (unless AM_METRICS_PUBLIC); any role may scrape.
    let r = app.api("GET", "/metrics", None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let scraper = app.token(Role::Viewer).await;
    let r = app.api("GET", "/metrics", Some(&scraper), None).await;
    assert_eq!(r.status, StatusCode::OK);
    let text = r.text();
    for (series, want) in [
        ("am_activations{status=\"failed\"}", 2.0),
        ("am_activations{status=\"running\"}", 1.0),
        ("am_activations{status=\"waiting\"}", 0.0),
        ("am_running_activations", 1.0),
        ("am_dead_letters", 2.0),
        ("am_disabled_launch_settings", 1.0),
        ("am_disabled_schedule_groups", 0.0),
        ("am_failures_last_hour", 3.0),
        ("am_retried_last_hour", 0.0),
        ("am_unavailable_last_hour", 0.0),
        ("am_reports_total", 42.0),
        // 90 reports over a 30-second window.
        ("am_reports_per_second", 3.0),
        ("am_waiting_activations", 0.0),
        ("am_outbox_depth", 0.0),
        ("am_oldest_waiting_activation_age_seconds", 0.0),
        // The scrape refused above, by its route's pattern.
        (
            "am_http_requests_total{method=\"GET\",route=\"/metrics\",status=\"401\"}",
            1.0,
        ),
        (
            "am_launch_setting_recoveries_total{launch_setting=\"demo.echo.1\",kind=\"lost\"}",
            2.0,
        ),
    ] {
        assert_eq!(sample(&text, series), Some(want), "{series} in:\n{text}");
    }
    assert!(text.contains("# TYPE am_activations gauge"), "{text}");
    assert!(text.contains("# TYPE am_reports_total counter"), "{text}");
    // Every family is explained and named in base units (`promtool check metrics` runs on a
    // live manager's page in deploy/tests/prometheus.sh).
    let types = text.lines().filter(|l| l.starts_with("# TYPE ")).count();
    let helps = text.lines().filter(|l| l.starts_with("# HELP ")).count();
    assert_eq!(types, helps, "{text}");
    assert!(types > 40, "{types} families:\n{text}");
    assert!(!text.contains("_ms "), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_needs_a_login() {
    let app = TestApp::new(Backend::Sqlite).await;
    for path in ["/api/v1/dashboard", "/api/v1/dashboard/events"] {
        let r = app.api("GET", path, None, None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{path}");
    }
}

/// Reads the body until one whole event (ending with a blank line) arrived; its `data:` JSON.
async fn next_event(body: &mut Body, buffer: &mut String) -> serde_json::Value {
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            let data: String = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            if data.is_empty() {
                // A keep-alive comment or the retry field alone.
                continue;
            }
            return serde_json::from_str(&data).expect("event data is JSON");
        }
        let frame = tokio::time::timeout(StdDuration::from_secs(10), body.frame())
            .await
            .expect("an event within 10 s")
            .expect("the stream goes on")
            .expect("frame");
        if let Ok(data) = frame.into_data() {
            buffer.push_str(std::str::from_utf8(&data).expect("UTF-8"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_sends_the_figures_at_once_and_then_their_changes() {
    let app = TestApp::new(Backend::Sqlite).await;
    seed(&app.services.db).await;
    let viewer = app.token(Role::Viewer).await;
    let req = Request::builder()
        .uri("/api/v1/dashboard/events")
        .header(header::HOST, "127.0.0.1:3000")
        .header(header::AUTHORIZATION, format!("Bearer {viewer}"))
        .body(Body::empty())
        .expect("request");
    let resp = app.router.clone().oneshot(req).await.expect("infallible");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        resp.headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let mut body = resp.into_body();
    let mut buffer = String::new();
    let first = next_event(&mut body, &mut buffer).await;
    assert_eq!(first["failures_last_hour"], 3);
    assert_eq!(first["dead_letters"], 2);

    failure_logs::Entity::insert(failure(Utc::now()))
        .exec(&app.services.db)
        .await
        .expect("a new failure");
    // The next refreshes (every 2 s) carry it.
    let mut seen = first;
    for _ in 0..3 {
        seen = next_event(&mut body, &mut buffer).await;
        if seen["failures_last_hour"] == 4 {
            break;
        }
    }
    assert_eq!(seen["failures_last_hour"], 4, "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_subscriber_shares_one_producer_that_runs_only_while_watched() {
    let app = TestApp::new(Backend::Sqlite).await;
    let stop = CancellationToken::new();
    let every = StdDuration::from_millis(100);
    let feed = DashboardFeed::with_interval(app.services.clone(), stop.clone(), every);
    assert!(!feed.is_producing());

    let mut watchers: Vec<_> = (0..5).map(|_| feed.subscribe()).collect();
    assert!(feed.is_producing());
    let first = watchers[0]
        .wait_for(Option::is_some)
        .await
        .expect("a snapshot");
    let json: serde_json::Value =
        serde_json::from_str(first.as_deref().unwrap_or_default()).expect("JSON");
    assert_eq!(json["dead_letters"], 0);
    drop(first);
    tokio::time::sleep(StdDuration::from_millis(1000)).await;
    // About ten snapshots in a second at 100 ms, however many watch (five producers: fifty).
    let taken = feed.snapshots_taken();
    assert!(
        (3..=15).contains(&taken),
        "{taken} snapshots for five watchers"
    );

    // Nobody watches: the producer ends at its next tick and takes no more.
    watchers.clear();
    tokio::time::sleep(StdDuration::from_millis(500)).await;
    assert!(!feed.is_producing());
    let idle = feed.snapshots_taken();
    tokio::time::sleep(StdDuration::from_millis(300)).await;
    assert_eq!(feed.snapshots_taken(), idle);

    // A new watcher starts it again, without the stale snapshot of before.
    let mut again = feed.subscribe();
    assert!(again.borrow().is_none());
    again
        .wait_for(Option::is_some)
        .await
        .expect("a fresh snapshot");
    assert!(feed.is_producing());

    // Stopping the manager ends it even while watched.
    stop.cancel();
    tokio::time::sleep(StdDuration::from_millis(300)).await;
    assert!(!feed.is_producing());
    drop(again);
}

async fn the_dashboard_page_renders_every_figure_on_the_server(app: TestApp) {
    let seeded = seed(&app.services.db).await;
    // The chart's peak: the three failures fall into one hour, or two early in an hour.
    let mut per_hour = std::collections::HashMap::<i64, u32>::new();
    for i in 0..3 {
        let at = seeded - Duration::minutes(5 + i);
        *per_hour.entry(at.timestamp().div_euclid(3600)).or_default() += 1;
    }
    let peak = per_hour.values().max().copied().unwrap_or(0);
    let chart = format!("data-test=\"failure-chart\" data-total=\"3\" data-peak=\"{peak}\"");
    let cookie = session(&app, "dash-admin", Role::Admin).await;
    // As a browser without JavaScript gets it: the whole page, figures included.
    let r = app.send(with_cookie("/", &cookie)).await;
    assert_eq!(r.status, StatusCode::OK);
    let html = r.text();
    for needle in [
        "data-test=\"health-database\"",
        "data-test=\"health-broker\"",
        "data-test=\"status-count\" data-status=\"failed\" data-count=\"2\"",
        "data-test=\"status-count\" data-status=\"running\" data-count=\"1\"",
        "data-test=\"dead-letters\" data-count=\"2\"",
        "data-test=\"failures-last-hour\" data-count=\"3\"",
        &chart,
        "data-test=\"legend-item\" data-error-type=\"DemoFailure\" data-count=\"3\"",
        "data-test=\"disabled-ls\" data-id=\"demo.echo.1\"",
        "href=\"/launch-settings/demo.echo.1\"",
        "breaker tripped on h1 for demo.echo.1: 3 consecutive failures",
        "data-test=\"running-row\"",
        "href=\"/dead-letters?status=dead\"",
        "<title id=\"chart-title\">",
    ] {
        assert!(html.contains(needle), "{needle} missing from:\n{html}");
    }

    // The browser's EventSource sends the session cookie: the feed accepts it.
    let resp = app
        .router
        .clone()
        .oneshot(with_cookie("/api/v1/dashboard/events", &cookie))
        .await
        .expect("infallible");
    assert_eq!(resp.status(), StatusCode::OK);
    let mut body = resp.into_body();
    let first = next_event(&mut body, &mut String::new()).await;
    assert_eq!(first["dead_letters"], 2);
}
