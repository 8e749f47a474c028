//! The dashboard's figures on both backends: activations by status (active ones whatever their
//! age, finished ones of the last 24 hours), the newest active ones with their hosts, live
//! nodes, dead letters, disabled launch settings and groups with who disabled them and why, the
//! failing launch settings with their last error and since when, and failures per hour by error
//! type apart from retries and "unavailable" answers; every statement on the big tables reads
//! through an index.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::{
    dashboard::{AlarmKind, failure_kind},
    roles::Role,
    usage::EntityRef,
    wire::disposition,
};
use am_services::{
    Principal, catalog, dashboard,
    entity::{activation_hosts, activations, dead_letters, failure_logs, launch_settings, nodes},
    runtime::RuntimeConfig,
};
use chrono::{DateTime, Duration, TimeZone, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    TransactionTrait,
};
use uuid::Uuid;

on_both_backends!(
    the_snapshot_has_the_exact_figures,
    the_live_chart_reads_the_current_hour_and_keeps_the_complete_ones,
    an_empty_manager_shows_zeros,
    the_big_tables_are_read_through_indexes,
    a_stream_launch_setting_shows_its_own_health,
    alarms_name_what_is_broken,
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
        trace_parent: Set(None),
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
        // Every row of a multi-row insert sets the same columns.
        temporary: Set(false),
        disposition: Set(None),
        kind: Set(failure_kind::FAILED.into()),
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
        refused_changes: Set(None),
    }
}

struct Seed {
    tripping: Uuid,
    newest_waiting: Uuid,
    running_group: Uuid,
    running_two_hosts: Uuid,
    running_moved: Uuid,
}

async fn seed(db: &DatabaseConnection) -> Seed {
    let admin = actor(Role::Admin);
    catalog::import(db, &admin, demo_catalog())
        .await
        .expect("demo catalog imports");
    let breaker = Principal::system("breaker");
    let tripping = Uuid::now_v7();
    catalog::set_enabled(
        db,
        &breaker,
        &EntityRef::LaunchSetting("demo.echo.1".into()),
        false,
        catalog::Cause {
            text: "breaker tripped on h1 for demo.echo.1: 3 consecutive failures",
            activation: Some(tripping),
            trip: None,
        },
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
    let running_group = Uuid::now_v7();
    let ids = Seed {
        tripping,
        running_group,
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
    // A group's run at its second member: listed once, with that member and its host.
    let at_member = Uuid::now_v7();
    rows.push(activations::ActiveModel {
        id: Set(running_group),
        launch_setting_id: Set(None),
        group_id: Set(Some("demo.nightly".into())),
        ..activation("running", ago(2), "demo.sleep.nightly")
    });
    for (position, status, id) in [(0, "succeeded", Uuid::now_v7()), (1, "running", at_member)] {
        rows.push(activations::ActiveModel {
            id: Set(id),
            group_id: Set(Some("demo.nightly".into())),
            parent_id: Set(Some(running_group)),
            position: Set(Some(position)),
            ..activation(status, ago(2), "demo.sleep.nightly")
        });
    }
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
        dispatch(at_member, "h1", 1, "running"),
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
        // Not real failures: an attempt retried and an "unavailable" answer, both newer than
        // the last real one.
        failure_logs::ActiveModel {
            disposition: Set(Some(disposition::RETRY.into())),
            kind: Set(failure_kind::RETRIED.into()),
            ..failure(now() - Duration::seconds(1), "Timeout")
        },
        failure_logs::ActiveModel {
            temporary: Set(true),
            disposition: Set(Some(disposition::RETRY.into())),
            kind: Set(failure_kind::UNAVAILABLE.into()),
            ..failure(now() - Duration::milliseconds(500), "NotThereYet")
        },
        // Another launch setting, failing on another host.
        failure_logs::ActiveModel {
            launch_setting_id: Set("demo.echo.drain".into()),
            host: Set("h2".into()),
            message: Set("x".repeat(400)),
            ..failure(hour(10, 10), "Crash")
        },
    ])
    .exec(db)
    .await
    .expect("failures");
    // demo.fail.nightly last succeeded at 09:50: it fails since the first real failure after.
    launch_settings::Entity::update_many()
        .col_expr(
            launch_settings::Column::LastSuccessAt,
            sea_orm::sea_query::Expr::value(Some(hour(9, 50))),
        )
        .filter(launch_settings::Column::Id.eq("demo.fail.nightly"))
        .exec(db)
        .await
        .expect("last success");
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
            // The group's run once, its running member not again.
            ("running", 23, true),
            ("succeeded", 3, false),
            // Two launch settings' runs and one group's run (its failed member not again).
            ("failed", 3, false),
            ("interrupted", 0, false),
            ("skipped", 1, false),
        ]
    );
    assert_eq!(d.activations_with("running"), 23);
    assert_eq!(d.running_total, 25);

    // The newest 20 active ones, newest first, each with the hosts running it now.
    assert_eq!(d.running.len(), 20);
    assert_eq!(d.running[0].id, s.newest_waiting.to_string());
    assert_eq!(d.running[0].status, "waiting");
    assert!(d.running[0].hosts.is_empty());
    let group = &d.running[1];
    assert_eq!(group.id, s.running_group.to_string());
    assert_eq!(group.group.as_deref(), Some("demo.nightly"));
    assert_eq!(group.launch_setting, None);
    assert_eq!(group.member.as_deref(), Some("demo.sleep.nightly"));
    assert_eq!(group.hosts, ["h1"]);
    assert_eq!(d.running[2].id, s.running_two_hosts.to_string());
    assert_eq!(
        d.running[2].launch_setting.as_deref(),
        Some("demo.echo.drain")
    );
    assert_eq!(d.running[2].hosts, ["h1", "h2"]);
    assert_eq!(d.running[3].id, s.running_moved.to_string());
    assert_eq!(d.running[3].hosts, ["h2"]);
    assert_eq!(d.running[4].status, "dispatched");
    assert!(
        d.running
            .iter()
            .all(|r| r.group.is_none() || r.launch_setting.is_none()),
        "no member run listed beside its group's run"
    );
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
    // Who, and the activation that tripped the breaker.
    assert_eq!(ls.by.as_deref(), Some("breaker"));
    assert_eq!(ls.activation, Some(s.tripping.to_string()));
    assert_eq!(d.disabled_groups_total, 1);
    let g = &d.disabled_groups[0];
    assert_eq!(g.id, "demo.failing");
    assert_eq!(g.reason.as_deref(), Some("maintenance"));
    assert!(g.disabled_at.is_some(), "groups say since when too");
    assert_eq!(g.by, Some(actor(Role::Operator).name));
    assert_eq!(g.activation, None);

    // Real failures only; retries and "unavailable" answers apart.
    assert_eq!(d.failures_last_hour, 6);
    assert_eq!((d.retried_last_hour, d.unavailable_last_hour), (1, 1));

    // What fails now, the most recently failing first, with its last real error.
    assert_eq!(d.failing_total, 2);
    let failing: Vec<(&str, u64, &str, &str)> = d
        .failing
        .iter()
        .map(|f| {
            (
                f.launch_setting.as_str(),
                f.failures,
                f.last_error_type.as_str(),
                f.last_host.as_str(),
            )
        })
        .collect();
    assert_eq!(
        failing,
        [
            ("demo.fail.nightly", 5, "Timeout", "h1"),
            ("demo.echo.drain", 1, "Crash", "h2")
        ]
    );
    let f = &d.failing[0];
    assert_eq!(f.last_at, now() - Duration::milliseconds(1500));
    assert_eq!(f.hosts, ["h1"]);
    assert_eq!(f.application.as_deref(), Some("demo"));
    assert_eq!(f.last_activation, Uuid::nil().to_string());
    assert_eq!(
        f.failing_since,
        hour(9, 59) + Duration::microseconds(123_456),
        "the first real failure after the last success"
    );
    let other = &d.failing[1];
    // Never succeeded: failing since its first failure kept.
    assert_eq!(other.failing_since, hour(10, 10));
    assert_eq!(
        other.last_message.chars().count(),
        301,
        "cut, with an ellipsis"
    );
    let chart = &d.failures_per_hour;
    assert_eq!(chart.hours.len(), 24);
    assert_eq!(chart.hours[23].start, hour(10, 0));
    assert_eq!(chart.hours[0].start, hour(11, 0) - Duration::days(1));
    let legend: Vec<(&str, u64)> = chart
        .error_types
        .iter()
        .map(|t| (t.error_type.as_str(), t.count))
        .collect();
    assert_eq!(legend, [("Timeout", 4), ("Boom", 3), ("Crash", 1)]);
    let by_hour = |i: usize| -> Vec<(&str, u64)> {
        chart.hours[i]
            .by_error_type
            .iter()
            .map(|t| (t.error_type.as_str(), t.count))
            .collect()
    };
    assert_eq!(by_hour(23), [("Timeout", 3), ("Crash", 1)]);
    assert_eq!(
        (chart.hours[23].retried, chart.hours[23].unavailable),
        (1, 1)
    );
    assert_eq!((chart.retried, chart.unavailable), (1, 1));
    assert_eq!(by_hour(22), [("Timeout", 1), ("Boom", 2)]);
    assert_eq!(chart.hours[22].total, 3);
    assert_eq!(by_hour(0), [("Boom", 1)]);
    assert_eq!(chart.hours.iter().map(|h| h.total).sum::<u64>(), 8);
    // The current hour: 4 real failures, 1 retried, 1 unavailable.
    assert_eq!(chart.peak(), 6);

    // The gauges of /metrics are the same figures.
    let g = dashboard::gauges(db, now()).await.expect("gauges");
    assert_eq!(g.activations, d.activations);
    assert_eq!(
        (
            g.running,
            g.dead_letters,
            g.disabled_launch_settings,
            g.disabled_groups,
            g.failures_last_hour,
            g.retried_last_hour,
            g.unavailable_last_hour,
        ),
        (25, 3, 1, 1, 6, 1, 1)
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
    assert_eq!(plans.len(), 4);
    for (statement, plan) in &plans {
        let wanted = if statement.contains("FROM failure_logs") {
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
        chart.hours[23].total, 5,
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

async fn a_stream_launch_setting_shows_its_own_health(db: &DatabaseConnection) {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
    let ls = "demo.poison.1";
    let run = activation("running", ago(30), ls);
    let id = *run.id.as_ref();
    activations::Entity::insert(run)
        .exec(db)
        .await
        .expect("activation");
    activation_hosts::Entity::insert_many([
        activation_hosts::ActiveModel {
            processed: Set(40),
            started_at: Set(Some(ago(30))),
            ..dispatch(id, "h1", 1, "running")
        },
        activation_hosts::ActiveModel {
            processed: Set(2),
            started_at: Set(Some(ago(20))),
            ..dispatch(id, "h2", 1, "running")
        },
    ])
    .exec(db)
    .await
    .expect("hosts");
    let of_ls = |at: DateTime<Utc>, error_type: &str| failure_logs::ActiveModel {
        launch_setting_id: Set(ls.into()),
        ..failure(at, error_type)
    };
    failure_logs::Entity::insert_many([
        of_ls(ago(90), "Poison"),
        of_ls(ago(30), "Poison"),
        failure_logs::ActiveModel {
            message: Set("poisoned at offset 7".into()),
            ..of_ls(ago(2), "Poison")
        },
        failure_logs::ActiveModel {
            disposition: Set(Some(disposition::RETRY.into())),
            kind: Set(failure_kind::RETRIED.into()),
            ..of_ls(ago(1), "Timeout")
        },
        failure_logs::ActiveModel {
            temporary: Set(true),
            kind: Set(failure_kind::UNAVAILABLE.into()),
            ..of_ls(ago(50), "NotThereYet")
        },
        // Another launch setting's failure is not counted.
        failure(ago(1), "Timeout"),
    ])
    .exec(db)
    .await
    .expect("failures");
    dead_letters::Entity::insert_many([
        dead_letter("old", "dead"),
        dead_letters::ActiveModel {
            received_at: Set(ago(3)),
            ..dead_letter("new", "replayed")
        },
    ])
    .exec(db)
    .await
    .expect("dead letters");

    let h = am_services::stream_health::of(db, ls, now())
        .await
        .expect("health");
    assert_eq!(h.as_of, now());
    assert_eq!(h.processed, 42, "both hosts' counters");
    assert_eq!(h.running_since, Some(ago(30)));
    let w = |c: &am_domain::failing::WindowCounts| {
        (c.failed, c.retried, c.unavailable, c.dead_lettered)
    };
    assert_eq!(w(&h.last_5_min), (1, 1, 0, 1));
    assert_eq!(w(&h.last_hour), (2, 1, 1, 2));
    let last = h.last_failure.expect("last failure");
    assert_eq!(
        (last.error_type.as_str(), last.message.as_str(), last.at),
        ("Poison", "poisoned at offset 7", ago(2)),
        "the newest real failure, not the newer retry"
    );
    assert_eq!(
        h.failing_since,
        Some(ago(90)),
        "never succeeded: since the first failure kept"
    );
}

/// A launch never accepted long past its start timeout and a lost node are alarms, each with
/// its count and the page that shows it; a launch still within its timeout is not.
async fn alarms_name_what_is_broken(db: &DatabaseConnection) {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
    let stuck = activation("dispatched", ago(5), "demo.sleep.nightly");
    let fresh = activation("dispatched", ago(1), "demo.sleep.nightly");
    let (stuck_id, fresh_id) = (*stuck.id.as_ref(), *fresh.id.as_ref());
    activations::Entity::insert_many([stuck, fresh])
        .exec(db)
        .await
        .expect("activations");
    let mut overdue = dispatch(stuck_id, "h1", 1, "dispatched");
    overdue.recovery_deadline = Set(Some(ago(2)));
    let mut within = dispatch(fresh_id, "h1", 1, "dispatched");
    within.recovery_deadline = Set(Some(now() + Duration::seconds(20)));
    activation_hosts::Entity::insert_many([overdue, within])
        .exec(db)
        .await
        .expect("dispatches");
    let mut lost = node("h9", ago(10), 0);
    lost.status = Set("lost".into());
    nodes::Entity::insert(lost).exec(db).await.expect("node");

    let d = dashboard::snapshot(db, &actor(Role::Viewer), &RuntimeConfig::new("am"), now())
        .await
        .expect("snapshot");
    let alarms: Vec<(AlarmKind, &str)> =
        d.alarms.iter().map(|a| (a.kind, a.link.as_str())).collect();
    assert_eq!(
        alarms,
        [
            (AlarmKind::NotAccepted, "/activations?status=dispatched"),
            (AlarmKind::NodesLost, "/nodes"),
        ]
    );
    assert!(
        d.alarms[0].summary.starts_with("1 launch dispatched"),
        "{}",
        d.alarms[0].summary
    );
    assert!(
        d.alarms[1].summary.starts_with("1 node lost"),
        "{}",
        d.alarms[1].summary
    );
}
