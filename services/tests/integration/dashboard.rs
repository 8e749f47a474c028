//! The dashboard's figures on both backends: activations by status (active ones whatever their
//! age, finished ones of the last 24 hours), the newest active ones with their hosts, live
//! nodes, dead letters, disabled launch settings and groups with their reasons, and failures
//! per hour by error type; every statement on the big tables reads through an index.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::{roles::Role, usage::EntityRef};
use am_services::{
    Principal, catalog, dashboard,
    entity::{activation_hosts, activations, dead_letters, failure_logs, nodes},
    runtime::RuntimeConfig,
};
use chrono::{DateTime, Duration, TimeZone, Utc};
use sea_orm::{
    ActiveValue::Set, ConnectionTrait, DatabaseConnection, EntityTrait, TransactionTrait,
};
use uuid::Uuid;

on_both_backends!(
    the_snapshot_has_the_exact_figures,
    the_live_chart_reads_the_current_hour_and_keeps_the_complete_ones,
    an_empty_manager_shows_zeros,
    the_big_tables_are_read_through_indexes,
);

/// 10:42:17.25 on a fixed day: the current hour's bucket starts at 10:00.
fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 5, 2, 10, 42, 17)
        .single()
        .expect("valid time")
        + Duration::milliseconds(250)
}

fn ago(minutes: i64) -> DateTime<Utc> {
    now() - Duration::minutes(minutes)
}

fn hour(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 5, 2, h, m, 0)
        .single()
        .expect("valid time")
}

fn activation(status: &str, created: DateTime<Utc>, ls: &str) -> activations::ActiveModel {
    activations::ActiveModel {
        id: Set(Uuid::now_v7()),
        launch_setting_id: Set(Some(ls.into())),
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
    }
}

fn dispatch(
    activation: Uuid,
    host: &str,
    attempt: i32,
    status: &str,
) -> activation_hosts::ActiveModel {
    activation_hosts::ActiveModel {
        activation_id: Set(activation),
        host: Set(host.into()),
        application_id: Set("demo".into()),
        fencing_token: Set(i64::from(attempt)),
        status: Set(status.into()),
        attempt: Set(attempt),
        dispatched_at: Set(ago(10)),
        processed: Set(0),
        failed: Set(0),
        retried: Set(0),
        dead_lettered: Set(0),
        ..Default::default()
    }
}

fn failure(at: DateTime<Utc>, error_type: &str) -> failure_logs::ActiveModel {
    failure_logs::ActiveModel {
        launch_setting_id: Set("demo.fail.nightly".into()),
        activation_id: Set(Uuid::nil()),
        host: Set("h1".into()),
        application_id: Set("demo".into()),
        agent_id: Set("fail".into()),
        error_type: Set(error_type.into()),
        message: Set("boom".into()),
        details: Set(None),
        data_message_id: Set(None),
        attempt: Set(None),
        occurred_at: Set(at),
        ..Default::default()
    }
}

fn dead_letter(key: &str, status: &str) -> dead_letters::ActiveModel {
    dead_letters::ActiveModel {
        dedupe_key: Set(key.into()),
        launch_setting_id: Set(Some("demo.poison.1".into())),
        headers: Set(serde_json::json!({})),
        body: Set(b"poison".to_vec()),
        attempts: Set(10),
        received_at: Set(ago(30)),
        status: Set(status.into()),
        replay_count: Set(0),
        ..Default::default()
    }
}

fn node(host: &str, heartbeat: DateTime<Utc>, running: i32) -> nodes::ActiveModel {
    nodes::ActiveModel {
        application_id: Set("demo".into()),
        host: Set(host.into()),
        version: Set("1.0.0".into()),
        capacity: Set(8),
        running: Set(running),
        load: Set(0.5),
        started_at: Set(ago(60)),
        last_heartbeat_at: Set(heartbeat),
        status: Set("live".into()),
        protocol_version: Set(2),
        waiting_publication: Set(None),
    }
}

struct Seed {
    newest_waiting: Uuid,
    running_two_hosts: Uuid,
    running_moved: Uuid,
}

async fn seed(db: &DatabaseConnection) -> Seed {
    let admin = actor(Role::Admin);
    catalog::import(db, &admin, demo_catalog())
        .await
        .expect("demo catalog imports");
    let breaker = Principal::system("breaker");
    catalog::set_enabled(
        db,
        &breaker,
        &EntityRef::LaunchSetting("demo.echo.1".into()),
        false,
        "breaker tripped on h1 for demo.echo.1: 3 consecutive failures",
    )
    .await
    .expect("disable the launch setting");
    catalog::set_enabled(
        db,
        &actor(Role::Operator),
        &EntityRef::ScheduleGroup("demo.failing".into()),
        false,
        "maintenance",
    )
    .await
    .expect("disable the group");

    let waiting = activation("waiting", ago(1), "demo.sleep.nightly");
    let two_hosts = activation("running", ago(5), "demo.echo.drain");
    let moved = activation("running", ago(180), "demo.sleep.nightly");
    let ids = Seed {
        newest_waiting: *waiting.id.as_ref(),
        running_two_hosts: *two_hosts.id.as_ref(),
        running_moved: *moved.id.as_ref(),
    };
    let mut rows = vec![
        waiting,
        two_hosts,
        moved,
        // Active for a day and a half: still counted, active ones have no window.
        activation("dispatched", ago(30 * 60), "demo.sleep.nightly"),
        activation("succeeded", ago(60), "demo.sleep.nightly"),
        activation("succeeded", ago(120), "demo.sleep.nightly"),
        activation("succeeded", ago(23 * 60), "demo.sleep.nightly"),
        // Finished, but created before the window.
        activation("succeeded", ago(25 * 60), "demo.sleep.nightly"),
        activation("failed", ago(10), "demo.fail.nightly"),
        activation("failed", ago(20), "demo.fail.nightly"),
        activation("failed", ago(48 * 60), "demo.fail.nightly"),
        activation("skipped", ago(3), "demo.sleep.nightly"),
    ];
    // A group's run that failed with its member: one failed run, not two.
    let group_run = Uuid::now_v7();
    rows.push(activations::ActiveModel {
        id: Set(group_run),
        launch_setting_id: Set(None),
        group_id: Set(Some("demo.nightly".into())),
        ..activation("failed", ago(15), "demo.sleep.nightly")
    });
    rows.push(activations::ActiveModel {
        group_id: Set(Some("demo.nightly".into())),
        parent_id: Set(Some(group_run)),
        position: Set(Some(0)),
        ..activation("failed", ago(15), "demo.sleep.nightly")
    });
    // Older active ones, beyond what the list shows.
    for i in 0..20 {
        rows.push(activation(
            "running",
            ago(3 * 24 * 60 + i),
            "demo.echo.drain",
        ));
    }
    activations::Entity::insert_many(rows)
        .exec(db)
        .await
        .expect("activations");
    activation_hosts::Entity::insert_many([
        dispatch(ids.running_two_hosts, "h2", 1, "running"),
        dispatch(ids.running_two_hosts, "h1", 1, "accepted"),
        // Moved from h1 to h2 after a start timeout: only h2 runs it.
        dispatch(ids.running_moved, "h1", 1, "superseded"),
        dispatch(ids.running_moved, "h2", 2, "running"),
    ])
    .exec(db)
    .await
    .expect("dispatches");

    nodes::Entity::insert_many([
        node("h1", now() - Duration::seconds(5), 2),
        node("h2", now() - Duration::seconds(1), 8),
        // No heartbeat for five minutes: lost, not shown.
        node("h3", ago(5), 1),
    ])
    .exec(db)
    .await
    .expect("nodes");

    dead_letters::Entity::insert_many([
        dead_letter("a", "dead"),
        dead_letter("b", "dead"),
        dead_letter("c", "dead"),
        dead_letter("d", "replayed"),
    ])
    .exec(db)
    .await
    .expect("dead letters");

    failure_logs::Entity::insert_many([
        // The current hour (10:00).
        failure(hour(10, 5), "Timeout"),
        failure(hour(10, 30), "Timeout"),
        failure(now() - Duration::milliseconds(1500), "Timeout"),
        // 09:00: two within the last 60 minutes (after 09:42:17), one before.
        failure(hour(9, 59) + Duration::microseconds(123_456), "Boom"),
        failure(hour(9, 43), "Boom"),
        failure(hour(9, 0), "Timeout"),
        // The window's first hour: 11:00 the day before.
        failure(hour(11, 0) - Duration::days(1), "Boom"),
        // Just before the window.
        failure(hour(10, 59) - Duration::days(1), "Boom"),
    ])
    .exec(db)
    .await
    .expect("failures");
    ids
}

async fn the_snapshot_has_the_exact_figures(db: &DatabaseConnection) {
    let s = seed(db).await;
    let cfg = RuntimeConfig::new("am");
    let d = dashboard::snapshot(db, &actor(Role::Viewer), &cfg, now())
        .await
        .expect("snapshot");
    assert_eq!(d.generated_at, now());

    let counts: Vec<(&str, u64, bool)> = d
        .activations
        .iter()
        .map(|c| (c.status.as_str(), c.count, c.active))
        .collect();
    assert_eq!(
        counts,
        [
            ("waiting", 1, true),
            ("dispatched", 1, true),
            ("running", 22, true),
            ("succeeded", 3, false),
            // Two launch settings' runs and one group's run (its failed member not again).
            ("failed", 3, false),
            ("interrupted", 0, false),
            ("skipped", 1, false),
        ]
    );
    assert_eq!(d.activations_with("running"), 22);
    assert_eq!(d.running_total, 24);

    // The newest 20 active ones, newest first, each with the hosts running it now.
    assert_eq!(d.running.len(), 20);
    assert_eq!(d.running[0].id, s.newest_waiting.to_string());
    assert_eq!(d.running[0].status, "waiting");
    assert!(d.running[0].hosts.is_empty());
    assert_eq!(d.running[1].id, s.running_two_hosts.to_string());
    assert_eq!(
        d.running[1].launch_setting.as_deref(),
        Some("demo.echo.drain")
    );
    assert_eq!(d.running[1].hosts, ["h1", "h2"]);
    assert_eq!(d.running[2].id, s.running_moved.to_string());
    assert_eq!(d.running[2].hosts, ["h2"]);
    assert_eq!(d.running[3].status, "dispatched");
    assert!(
        d.running
            .windows(2)
            .all(|w| w[0].created_at >= w[1].created_at),
        "newest first"
    );

    let nodes: Vec<(&str, i32, i32)> = d
        .nodes
        .iter()
        .map(|n| (n.host.as_str(), n.running, n.capacity))
        .collect();
    assert_eq!(nodes, [("h1", 2, 8), ("h2", 8, 8)]);
    assert!((d.nodes[0].usage() - 0.25).abs() < 1e-9);

    assert_eq!(d.dead_letters, 3);

    assert_eq!(d.disabled_launch_settings_total, 1);
    assert_eq!(d.disabled_launch_settings.len(), 1);
    let ls = &d.disabled_launch_settings[0];
    assert_eq!(ls.id, "demo.echo.1");
    assert_eq!(ls.application, "demo");
    assert_eq!(
        ls.reason.as_deref(),
        Some("breaker tripped on h1 for demo.echo.1: 3 consecutive failures")
    );
    assert!(ls.disabled_at.is_some());
    assert_eq!(d.disabled_groups_total, 1);
    assert_eq!(d.disabled_groups[0].id, "demo.failing");
    assert_eq!(d.disabled_groups[0].reason.as_deref(), Some("maintenance"));

    assert_eq!(d.failures_last_hour, 5);
    let chart = &d.failures_per_hour;
    assert_eq!(chart.hours.len(), 24);
    assert_eq!(chart.hours[23].start, hour(10, 0));
    assert_eq!(chart.hours[0].start, hour(11, 0) - Duration::days(1));
    let legend: Vec<(&str, u64)> = chart
        .error_types
        .iter()
        .map(|t| (t.error_type.as_str(), t.count))
        .collect();
    assert_eq!(legend, [("Timeout", 4), ("Boom", 3)]);
    let by_hour = |i: usize| -> Vec<(&str, u64)> {
        chart.hours[i]
            .by_error_type
            .iter()
            .map(|t| (t.error_type.as_str(), t.count))
            .collect()
    };
    assert_eq!(by_hour(23), [("Timeout", 3)]);
    assert_eq!(by_hour(22), [("Timeout", 1), ("Boom", 2)]);
    assert_eq!(chart.hours[22].total, 3);
    assert_eq!(by_hour(0), [("Boom", 1)]);
    assert_eq!(chart.hours.iter().map(|h| h.total).sum::<u64>(), 7);
    assert_eq!(chart.peak(), 3);

    // The gauges of /metrics are the same figures.
    let g = dashboard::gauges(db, now()).await.expect("gauges");
    assert_eq!(g.activations, d.activations);
    assert_eq!(
        (
            g.running,
            g.dead_letters,
            g.disabled_launch_settings,
            g.disabled_groups,
            g.failures_last_hour
        ),
        (24, 3, 1, 1, 5)
    );

    // The JSON the API and the live feed send reads back the same.
    let json = serde_json::to_string(&d).expect("serialize");
    let back: am_domain::dashboard::Dashboard = serde_json::from_str(&json).expect("parse");
    assert_eq!(back, d);
}

async fn an_empty_manager_shows_zeros(db: &DatabaseConnection) {
    let d = dashboard::snapshot(db, &actor(Role::Viewer), &RuntimeConfig::new("am"), now())
        .await
        .expect("snapshot");
    assert_eq!(d.activations.len(), 7);
    assert!(d.activations.iter().all(|c| c.count == 0));
    assert!(d.running.is_empty() && d.nodes.is_empty());
    assert_eq!(
        (d.running_total, d.dead_letters, d.failures_last_hour),
        (0, 0, 0)
    );
    assert!(d.disabled_launch_settings.is_empty() && d.disabled_groups.is_empty());
    assert_eq!(d.failures_per_hour.hours.len(), 24);
    assert_eq!(d.failures_per_hour.peak(), 0);
}

async fn the_big_tables_are_read_through_indexes(db: &DatabaseConnection) {
    seed(db).await;
    // A handful of rows make a sequential scan the cheapest plan on PostgreSQL; with scans
    // discouraged, a plan without an index means no index fits the statement.
    let txn = db.begin().await.expect("txn");
    if txn.get_database_backend() == sea_orm::DbBackend::Postgres {
        txn.execute_unprepared("SET LOCAL enable_seqscan = off")
            .await
            .expect("set");
    }
    let plans = dashboard::explain(&txn, now()).await.expect("explain");
    assert_eq!(plans.len(), 2);
    for (statement, plan) in &plans {
        let wanted = if statement.starts_with("failures") {
            "idx_failure_logs_occurred_at"
        } else {
            "idx_activations_status"
        };
        assert!(plan.contains(wanted), "{statement}\n{plan}");
        for l in plan.lines() {
            let table_scan = l.contains("Seq Scan on")
                || ((l.starts_with("SCAN ") || l.starts_with("SEARCH ")) && !l.contains("INDEX"));
            assert!(
                !table_scan,
                "{statement}\nreads a table without an index:\n{plan}"
            );
        }
    }
    txn.rollback().await.expect("rollback");
}

async fn the_live_chart_reads_the_current_hour_and_keeps_the_complete_ones(
    db: &DatabaseConnection,
) {
    seed(db).await;
    let cfg = RuntimeConfig::new("am");
    let viewer = actor(Role::Viewer);
    let cache = dashboard::ChartCache::default();
    let fresh = dashboard::snapshot(db, &viewer, &cfg, now())
        .await
        .expect("snapshot");
    let cached = dashboard::snapshot_cached(db, &viewer, &cfg, now(), &cache)
        .await
        .expect("snapshot with an empty cache");
    assert_eq!(cached, fresh);

    // A failure of the current hour, and a late report of an hour ago.
    failure_logs::Entity::insert_many([
        failure(hour(10, 40), "Timeout"),
        failure(hour(9, 10), "Late"),
    ])
    .exec(db)
    .await
    .expect("more failures");
    let soon = now() + Duration::seconds(10);
    let d = dashboard::snapshot_cached(db, &viewer, &cfg, soon, &cache)
        .await
        .expect("cached");
    let chart = &d.failures_per_hour;
    assert_eq!(
        chart.hours[23].total, 4,
        "the current hour is read every time"
    );
    assert_eq!(chart.hours[22].total, 3, "the complete hours are kept");

    // A minute later the complete hours are read again.
    let later = now() + dashboard::COMPLETE_HOURS_KEPT + Duration::seconds(1);
    let d = dashboard::snapshot_cached(db, &viewer, &cfg, later, &cache)
        .await
        .expect("read again");
    assert_eq!(d.failures_per_hour.hours[22].total, 4);
    assert_eq!(
        d.failures_per_hour,
        dashboard::failures_per_hour(db, later)
            .await
            .expect("uncached")
    );
}
