//! The failure-log drill-down on both backends: counts by error type at every level, filters,
//! pagination, the dead letter of a failed message, and every statement reading through an
//! index of `failure_logs`.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::read::failures::{ErrorTypeCount, FailureFilter};
use am_domain::{dashboard::failure_kind, failing::KindCounts, roles::Role};
use am_services::{
    ServiceError, catalog,
    entity::{activation_hosts, activations, dead_letters, failure_logs},
    failures,
};
use chrono::{DateTime, Duration, TimeZone, Utc};
use sea_orm::{
    ActiveValue::Set, ConnectionTrait, DatabaseConnection, EntityTrait, TransactionTrait,
};
use uuid::Uuid;

on_both_backends!(
    every_level_counts_by_error_type_and_pages,
    filters_narrow_every_level,
    failures_page_by_cursor_and_link_their_dead_letters,
    viewers_read_and_bad_filters_are_named,
    every_statement_reads_through_an_index,
    other_kinds_are_counted_beside_the_failures,
);

const A: &str = "demo.flaky.1";
const B: &str = "demo.poison.1";
/// A launch setting deleted since: its failure logs stay.
const C: &str = "gone.ls";

fn base() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .expect("valid time")
}

fn at(minutes: i64) -> DateTime<Utc> {
    base() + Duration::minutes(minutes)
}

fn iso(minutes: i64) -> Option<String> {
    Some(at(minutes).to_rfc3339())
}

struct Seed {
    a1: Uuid,
    a2: Uuid,
    b1: Uuid,
    c1: Uuid,
    dead_letter: i64,
}

fn failure(
    ls: &str,
    activation: Uuid,
    host: &str,
    error_type: &str,
    minute: i64,
    message_id: Option<&str>,
) -> failure_logs::ActiveModel {
    failure_logs::ActiveModel {
        launch_setting_id: Set(ls.into()),
        activation_id: Set(activation),
        host: Set(host.into()),
        application_id: Set("demo".into()),
        agent_id: Set("flaky".into()),
        error_type: Set(error_type.into()),
        message: Set(format!("{error_type} at minute {minute}")),
        details: Set(Some(format!("stack of {error_type}\n  at line {minute}"))),
        data_message_id: Set(message_id.map(str::to_owned)),
        attempt: Set(Some(1)),
        occurred_at: Set(at(minute)),
        ..Default::default()
    }
}

fn activation(id: Uuid, ls: &str, status: &str, minute: i64) -> activations::ActiveModel {
    activations::ActiveModel {
        id: Set(id),
        launch_setting_id: Set(Some(ls.into())),
        group_id: Set(None),
        parent_id: Set(None),
        position: Set(None),
        trigger: Set("stream".into()),
        fire_key: Set(None),
        status: Set(status.into()),
        requested_by: Set(None),
        created_at: Set(at(minute)),
        started_at: Set(Some(at(minute))),
        finished_at: Set(None),
        error: Set(None),
        application_id: Set(Some("demo".into())),
        fencing_token: Set(1),
        pinned_host: Set(None),
        wait_until: Set(None),
        trace_parent: Set(None),
    }
}

fn host_run(
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
        dispatched_at: Set(base()),
        processed: Set(0),
        failed: Set(0),
        retried: Set(0),
        dead_lettered: Set(0),
        ..Default::default()
    }
}

/// A: a1 (h1: 3 Timeout + 1 Parse, h2: 2 Timeout), a2 (h1: 1 Parse, the newest);
/// B: b1 (h1: 2 Poison on messages m1, m2; m1 dead-lettered); C: c1 (h3: 1 Timeout), no rows
/// for the activation or the launch setting.
async fn seed(db: &DatabaseConnection) -> Seed {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
    let (a1, a2, b1, c1) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    activations::Entity::insert_many([
        activation(a1, A, "failed", 0),
        activation(a2, A, "running", 30),
        activation(b1, B, "running", 0),
    ])
    .exec(db)
    .await
    .expect("activations");
    activation_hosts::Entity::insert_many([
        host_run(a1, "h1", 1, "superseded"),
        host_run(a1, "h1", 2, "failed"),
        host_run(a1, "h2", 1, "failed"),
        host_run(a2, "h1", 1, "running"),
    ])
    .exec(db)
    .await
    .expect("host rows");
    failure_logs::Entity::insert_many([
        failure(A, a1, "h1", "Timeout", 1, None),
        failure(A, a1, "h1", "Timeout", 2, None),
        failure(A, a1, "h1", "Parse", 3, None),
        failure(A, a1, "h1", "Timeout", 4, None),
        failure(A, a1, "h2", "Timeout", 5, None),
        failure(A, a1, "h2", "Timeout", 6, None),
        failure(A, a2, "h1", "Parse", 31, None),
        failure(B, b1, "h1", "Poison", 10, Some("m1")),
        failure(B, b1, "h1", "Poison", 11, Some("m2")),
        failure(C, c1, "h3", "Timeout", 20, None),
    ])
    .exec(db)
    .await
    .expect("failures");
    let dl = dead_letters::Entity::insert(dead_letters::ActiveModel {
        dedupe_key: Set("dl-1".into()),
        launch_setting_id: Set(Some(B.into())),
        data_queue_id: Set(Some("demo.events".into())),
        message_id: Set(Some("m1".into())),
        routing_key: Set(None),
        headers: Set(serde_json::json!({})),
        body: Set(b"{\"poison\":true}".to_vec()),
        content_type: Set(Some("application/json".into())),
        error_type: Set(Some("Poison".into())),
        error_message: Set(Some("poisoned".into())),
        attempts: Set(10),
        first_failure_at: Set(Some(at(10))),
        last_failure_at: Set(Some(at(10))),
        host: Set(Some("h1".into())),
        received_at: Set(at(10)),
        status: Set("dead".into()),
        park_until: Set(None),
        replay_count: Set(0),
        replayed_at: Set(None),
        replayed_by: Set(None),
        ..Default::default()
    })
    .exec(db)
    .await
    .expect("dead letter");
    Seed {
        a1,
        a2,
        b1,
        c1,
        dead_letter: dl.last_insert_id,
    }
}

fn counts(pairs: &[(&str, u64)]) -> Vec<ErrorTypeCount> {
    pairs
        .iter()
        .map(|(e, n)| ErrorTypeCount {
            error_type: (*e).into(),
            count: *n,
        })
        .collect()
}

fn filter() -> FailureFilter {
    FailureFilter::default()
}

async fn every_level_counts_by_error_type_and_pages(db: &DatabaseConnection) {
    let s = seed(db).await;
    let viewer = actor(Role::Viewer);

    // Launch settings, by id, each with its counts; the page's counts summed.
    let page = failures::launch_settings(db, &viewer, &filter(), None, None)
        .await
        .expect("level 1");
    let ids: Vec<&str> = page
        .items
        .iter()
        .map(|i| i.launch_setting.as_str())
        .collect();
    assert_eq!(ids, [A, B, C]);
    assert_eq!(page.items[0].total, 7);
    assert_eq!(
        page.items[0].by_error_type,
        counts(&[("Timeout", 5), ("Parse", 2)])
    );
    assert_eq!(page.items[0].application.as_deref(), Some("demo"));
    assert_eq!(page.items[0].agent.as_deref(), Some("flaky"));
    assert_eq!(page.items[0].first_at, Some(at(1)));
    assert_eq!(page.items[0].last_at, Some(at(31)));
    // The newest failure is read at the first level: type, host and activation of it.
    let last = page.items[0].last_error.as_ref().expect("last error");
    assert_eq!(
        (
            last.error_type.as_str(),
            last.host.as_str(),
            last.activation.clone(),
            last.at
        ),
        ("Parse", "h1", s.a2.to_string(), at(31))
    );
    let c_last = page.items[2].last_error.as_ref().expect("last error of C");
    assert_eq!(
        (c_last.host.as_str(), c_last.activation.clone()),
        ("h3", s.c1.to_string())
    );
    assert_eq!(
        page.items[2].application, None,
        "deleted launch settings still show"
    );
    assert_eq!(
        page.by_error_type,
        counts(&[("Timeout", 6), ("Parse", 2), ("Poison", 2)])
    );
    assert_eq!(page.next, None);

    let first = failures::launch_settings(db, &viewer, &filter(), None, Some(2))
        .await
        .expect("page 1");
    assert_eq!(first.items.len(), 2);
    assert_eq!(first.next.as_deref(), Some(B));
    let second = failures::launch_settings(db, &viewer, &filter(), first.next.as_deref(), Some(2))
        .await
        .expect("page 2");
    assert_eq!(second.items.len(), 1);
    assert_eq!(second.items[0].launch_setting, C);
    assert_eq!(second.next, None);

    // Activations of A, the most recently failing first.
    let acts = failures::activations(db, &viewer, A, &filter(), None, None)
        .await
        .expect("level 2");
    assert_eq!(acts.total, 7);
    assert_eq!(acts.activations, 2);
    assert_eq!(acts.by_error_type, counts(&[("Timeout", 5), ("Parse", 2)]));
    let ids: Vec<Uuid> = acts.items.iter().map(|i| i.activation).collect();
    assert_eq!(ids, [s.a2, s.a1]);
    let a1 = &acts.items[1];
    assert_eq!(a1.total, 6);
    assert_eq!(a1.status.as_deref(), Some("failed"));
    assert_eq!(a1.by_error_type, counts(&[("Timeout", 5), ("Parse", 1)]));
    let hosts: Vec<(&str, u64)> = a1
        .hosts
        .iter()
        .map(|h| (h.host.as_str(), h.count))
        .collect();
    assert_eq!(hosts, [("h1", 4), ("h2", 2)]);
    assert_eq!((a1.first_at, a1.last_at), (Some(at(1)), Some(at(6))));
    let p2 = failures::activations(db, &viewer, A, &filter(), Some(2), Some(1))
        .await
        .expect("level 2, page 2");
    assert_eq!(p2.items.len(), 1);
    assert_eq!(p2.items[0].activation, s.a1);
    assert!(!p2.has_more);
    assert_eq!(p2.activations, 2);

    // Hosts of a1, with the status of each host's latest dispatch.
    let hosts = failures::hosts(db, &viewer, &s.a1.to_string(), &filter())
        .await
        .expect("level 3");
    assert_eq!(hosts.launch_setting.as_deref(), Some(A));
    assert_eq!(hosts.activation_status.as_deref(), Some("failed"));
    assert_eq!(hosts.total, 6);
    let h1 = &hosts.items[0];
    assert_eq!((h1.host.as_str(), h1.total), ("h1", 4));
    assert_eq!(h1.by_error_type, counts(&[("Timeout", 3), ("Parse", 1)]));
    assert_eq!(h1.status.as_deref(), Some("failed"), "attempt 2 decides");
    assert_eq!((h1.first_at, h1.last_at), (Some(at(1)), Some(at(4))));
    assert_eq!(hosts.items[1].host, "h2");

    // An activation whose row is gone: its launch setting comes from its failures.
    let gone = failures::hosts(db, &viewer, &s.c1.to_string(), &filter())
        .await
        .expect("level 3 without the activation row");
    assert_eq!(gone.launch_setting.as_deref(), Some(C));
    assert_eq!(gone.activation_status, None);
    assert_eq!(gone.items[0].host, "h3");
    assert_eq!(gone.items[0].first_at, Some(at(20)));

    // The failures of one host.
    let list = failures::list(
        db,
        &viewer,
        &FailureFilter {
            launch_setting: Some(A.into()),
            activation: Some(s.a1.to_string()),
            host: Some("h1".into()),
            ..filter()
        },
        None,
        None,
    )
    .await
    .expect("level 4");
    assert_eq!(list.total, 4);
    assert_eq!(list.by_error_type, counts(&[("Timeout", 3), ("Parse", 1)]));
    let minutes: Vec<DateTime<Utc>> = list.entries.iter().map(|e| e.occurred_at).collect();
    assert_eq!(minutes, [at(4), at(3), at(2), at(1)]);
    assert_eq!(list.entries[1].error_type, "Parse");
    assert!(
        list.entries[1]
            .details
            .as_deref()
            .is_some_and(|d| d.contains("line 3"))
    );
    assert_eq!(list.next, None);
    let _ = s.b1;
}

async fn filters_narrow_every_level(db: &DatabaseConnection) {
    let s = seed(db).await;
    let viewer = actor(Role::Viewer);
    let parse = FailureFilter {
        error_type: Some("Parse".into()),
        ..filter()
    };
    let page = failures::launch_settings(db, &viewer, &parse, None, None)
        .await
        .expect("by type");
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].launch_setting, A);
    assert_eq!(page.items[0].total, 2);
    assert_eq!(
        (page.items[0].first_at, page.items[0].last_at),
        (Some(at(3)), Some(at(31)))
    );
    assert_eq!(
        page.items[0]
            .last_error
            .as_ref()
            .map(|e| e.error_type.as_str()),
        Some("Parse"),
        "the newest failure matching the filter"
    );

    // Filtered pages still page: Timeout failures are in A and C only.
    let timeout = FailureFilter {
        error_type: Some("Timeout".into()),
        ..filter()
    };
    let first = failures::launch_settings(db, &viewer, &timeout, None, Some(1))
        .await
        .expect("page 1");
    assert_eq!(first.items[0].launch_setting, A);
    assert_eq!(first.next.as_deref(), Some(A));
    let second = failures::launch_settings(db, &viewer, &timeout, first.next.as_deref(), Some(1))
        .await
        .expect("page 2");
    assert_eq!(second.items[0].launch_setting, C);
    assert_eq!(second.next, None);

    let h2 = FailureFilter {
        host: Some("h2".into()),
        ..filter()
    };
    let page = failures::launch_settings(db, &viewer, &h2, None, None)
        .await
        .expect("by host");
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].total, 2);

    // A time range: only a2's failure of A is at or after minute 30.
    let late = FailureFilter {
        from: iso(30),
        ..filter()
    };
    let acts = failures::activations(db, &viewer, A, &late, None, None)
        .await
        .expect("level 2 by time");
    assert_eq!(acts.total, 1);
    assert_eq!(acts.items.len(), 1);
    assert_eq!(acts.items[0].activation, s.a2);
    let early = FailureFilter {
        from: iso(2),
        to: iso(5),
        ..filter()
    };
    let hosts = failures::hosts(db, &viewer, &s.a1.to_string(), &early)
        .await
        .expect("level 3 by time");
    assert_eq!(hosts.total, 3, "minutes 2, 3 and 4");
    assert_eq!(hosts.items.len(), 1);

    // One launch setting asked for by the filter.
    let only_b = FailureFilter {
        launch_setting: Some(B.into()),
        ..filter()
    };
    let page = failures::launch_settings(db, &viewer, &only_b, None, None)
        .await
        .expect("one launch setting");
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].by_error_type, counts(&[("Poison", 2)]));
    let of_app = |application: &str| FailureFilter {
        application: Some(application.into()),
        ..filter()
    };
    let demo = failures::launch_settings(db, &viewer, &of_app("demo"), None, None)
        .await
        .expect("by application");
    assert_eq!(demo.items.len(), 3, "every failure is the demo's");
    let other = failures::list(db, &viewer, &of_app("other"), None, None)
        .await
        .expect("by application");
    assert_eq!(other.total, 0);
    let none = FailureFilter {
        launch_setting: Some("demo.echo.1".into()),
        ..filter()
    };
    assert!(
        failures::launch_settings(db, &viewer, &none, None, None)
            .await
            .expect("no failures")
            .items
            .is_empty()
    );

    // Everything, by type and time.
    let all = failures::list(db, &viewer, &filter(), None, None)
        .await
        .expect("unscoped");
    assert_eq!(all.total, 10);
    assert_eq!(all.entries[0].occurred_at, at(31));
    let list = failures::list(db, &viewer, &timeout, None, None)
        .await
        .expect("by type");
    assert_eq!(list.total, 6);
    assert!(list.entries.iter().all(|e| e.error_type == "Timeout"));
}

async fn failures_page_by_cursor_and_link_their_dead_letters(db: &DatabaseConnection) {
    let s = seed(db).await;
    let viewer = actor(Role::Viewer);
    // Page through every failure three at a time: each exactly once, newest first.
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = failures::list(db, &viewer, &filter(), after, Some(3))
            .await
            .expect("page");
        assert_eq!(page.total, 10);
        seen.extend(page.entries.iter().map(|e| (e.occurred_at, e.id)));
        match page.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    assert_eq!(seen.len(), 10);
    assert!(seen.windows(2).all(|w| w[0] > w[1]), "{seen:?}");

    // Two failures at the same time are both listed across a page boundary.
    failure_logs::Entity::insert_many([
        failure(A, s.a2, "h1", "Same", 40, None),
        failure(A, s.a2, "h1", "Same", 40, None),
    ])
    .exec(db)
    .await
    .expect("ties");
    let same = FailureFilter {
        error_type: Some("Same".into()),
        ..filter()
    };
    let p1 = failures::list(db, &viewer, &same, None, Some(1))
        .await
        .expect("p1");
    let p2 = failures::list(db, &viewer, &same, p1.next, Some(1))
        .await
        .expect("p2");
    assert_ne!(p1.entries[0].id, p2.entries[0].id);
    assert_eq!(p2.next, None);

    let poison = failures::list(
        db,
        &viewer,
        &FailureFilter {
            launch_setting: Some(B.into()),
            ..filter()
        },
        None,
        None,
    )
    .await
    .expect("B");
    let by_message: Vec<(Option<&str>, Option<i64>)> = poison
        .entries
        .iter()
        .map(|e| (e.data_message_id.as_deref(), e.dead_letter))
        .collect();
    assert_eq!(
        by_message,
        [(Some("m2"), None), (Some("m1"), Some(s.dead_letter))]
    );

    let gone = failures::list(db, &viewer, &filter(), Some(i64::MAX), None).await;
    assert!(matches!(gone, Err(ServiceError::Invalid(_))), "{gone:?}");
}

async fn viewers_read_and_bad_filters_are_named(db: &DatabaseConnection) {
    let _ = seed(db).await;
    let viewer = actor(Role::Viewer);
    let bad = FailureFilter {
        activation: Some("not-a-uuid".into()),
        ..filter()
    };
    let Err(ServiceError::Invalid(e)) = failures::list(db, &viewer, &bad, None, None).await else {
        panic!("expected invalid input");
    };
    assert_eq!(e.0[0].path, "activation");
    let bad = FailureFilter {
        from: Some("last tuesday".into()),
        ..filter()
    };
    let Err(ServiceError::Invalid(e)) =
        failures::launch_settings(db, &viewer, &bad, None, None).await
    else {
        panic!("expected invalid input");
    };
    assert_eq!(e.0[0].path, "from");
    let Err(ServiceError::Invalid(e)) = failures::hosts(db, &viewer, "nope", &filter()).await
    else {
        panic!("expected invalid input");
    };
    assert_eq!(e.0[0].path, "activation");
    // The path names the activation, but a malformed one in the query is refused all the same.
    let Err(ServiceError::Invalid(e)) = failures::hosts(
        db,
        &viewer,
        &Uuid::nil().to_string(),
        &FailureFilter {
            activation: Some("null".into()),
            ..filter()
        },
    )
    .await
    else {
        panic!("expected invalid input");
    };
    assert_eq!(e.0[0].path, "activation");
    // Blank filters are no filters.
    let blank = FailureFilter {
        launch_setting: Some(String::new()),
        host: Some(" ".into()),
        from: Some(String::new()),
        ..filter()
    };
    let page = failures::launch_settings(db, &viewer, &blank, None, None)
        .await
        .expect("blank");
    assert_eq!(page.items.len(), 3);
}

async fn every_statement_reads_through_an_index(db: &DatabaseConnection) {
    let s = seed(db).await;
    let filters = [
        filter(),
        FailureFilter {
            error_type: Some("Timeout".into()),
            ..filter()
        },
        FailureFilter {
            host: Some("h1".into()),
            from: iso(0),
            to: iso(60),
            ..filter()
        },
        FailureFilter {
            launch_setting: Some(A.into()),
            activation: Some(s.a1.to_string()),
            host: Some("h1".into()),
            error_type: Some("Timeout".into()),
            ..filter()
        },
        FailureFilter {
            kind: Some("any".into()),
            ..filter()
        },
    ];
    // A handful of rows make a sequential scan the cheapest plan on PostgreSQL; with scans
    // discouraged, a plan without an index means no index fits the statement.
    let txn = db.begin().await.expect("txn");
    if txn.get_database_backend() == sea_orm::DbBackend::Postgres {
        txn.execute_unprepared("SET LOCAL enable_seqscan = off")
            .await
            .expect("set");
    }
    for f in &filters {
        for (statement, plan) in failures::explain(&txn, f, A, s.a1).await.expect("explain") {
            assert!(plan.contains("idx_failure_logs_"), "{statement}\n{plan}");
            for l in plan.lines() {
                let table_scan = l.contains("Seq Scan on failure_logs")
                    || (l.contains("failure_logs")
                        && (l.starts_with("SCAN ") || l.starts_with("SEARCH "))
                        && !l.contains("INDEX"));
                assert!(
                    !table_scan,
                    "{statement}\nreads a table without an index:\n{plan}"
                );
            }
        }
    }
    txn.rollback().await.expect("rollback");
}

async fn other_kinds_are_counted_beside_the_failures(db: &DatabaseConnection) {
    let s = seed(db).await;
    let viewer = actor(Role::Viewer);
    // On a1 at h1, besides its four failures: two attempts retried, one "unavailable" answer.
    let report = |minute: i64, kind: &str, temporary: bool, disposition: Option<&str>| {
        failure_logs::ActiveModel {
            temporary: Set(temporary),
            disposition: Set(disposition.map(str::to_owned)),
            kind: Set(kind.into()),
            ..failure(A, s.a1, "h1", "Timeout", minute, None)
        }
    };
    failure_logs::Entity::insert_many([
        report(7, failure_kind::RETRIED, false, Some("retry")),
        report(8, failure_kind::RETRIED, false, Some("retry")),
        report(9, failure_kind::UNAVAILABLE, true, Some("retry")),
    ])
    .exec(db)
    .await
    .expect("reports of other kinds");
    let of_kind = |kind: &str| FailureFilter {
        kind: Some(kind.into()),
        ..filter()
    };
    let everywhere = KindCounts {
        failed: 10,
        retried: 2,
        unavailable: 1,
    };

    // Unfiltered means the real failures; the other kinds are counted beside them.
    let all = failures::list(db, &viewer, &filter(), None, None)
        .await
        .expect("list");
    assert_eq!(
        (all.total, all.entries.len(), all.kinds),
        (10, 10, everywhere)
    );
    let retried = failures::list(db, &viewer, &of_kind("retried"), None, None)
        .await
        .expect("retried");
    assert_eq!((retried.total, retried.kinds), (2, everywhere));
    assert!(
        retried
            .entries
            .iter()
            .all(|e| e.disposition.as_deref() == Some("retry") && !e.temporary)
    );
    let any = failures::list(db, &viewer, &of_kind("any"), None, None)
        .await
        .expect("any");
    assert_eq!((any.total, any.entries.len()), (13, 13));

    // Every level counts the same way.
    let page = failures::launch_settings(db, &viewer, &filter(), None, None)
        .await
        .expect("launch settings");
    assert_eq!(page.kinds, everywhere);
    let a = page
        .items
        .iter()
        .find(|i| i.launch_setting == A)
        .expect("A listed");
    assert_eq!(a.total, 7);
    let only_retried = failures::launch_settings(db, &viewer, &of_kind("retried"), None, None)
        .await
        .expect("retried launch settings");
    let listed: Vec<(&str, u64)> = only_retried
        .items
        .iter()
        .map(|i| (i.launch_setting.as_str(), i.total))
        .collect();
    assert_eq!(listed, [(A, 2)]);
    let of_a = failures::activations(db, &viewer, A, &filter(), None, None)
        .await
        .expect("activations of A");
    let a_kinds = KindCounts {
        failed: 7,
        retried: 2,
        unavailable: 1,
    };
    assert_eq!((of_a.total, of_a.kinds), (7, a_kinds));
    let unavailable = failures::activations(db, &viewer, A, &of_kind("unavailable"), None, None)
        .await
        .expect("unavailable of A");
    assert_eq!((unavailable.total, unavailable.activations), (1, 1));
    let hosts = failures::hosts(db, &viewer, &s.a1.to_string(), &filter())
        .await
        .expect("hosts of a1");
    let a1_kinds = KindCounts {
        failed: 6,
        retried: 2,
        unavailable: 1,
    };
    assert_eq!((hosts.total, hosts.kinds), (6, a1_kinds));
    let h1 = hosts.items.iter().find(|h| h.host == "h1").expect("h1");
    assert_eq!(h1.total, 4);

    // The activation page counts real failures too, and the rest beside them.
    let detail = am_services::activations::get(db, &viewer, &s.a1.to_string())
        .await
        .expect("activation");
    assert_eq!(
        (
            detail.activation.failures,
            detail.failures.total,
            detail.failures.kinds
        ),
        (6, 6, a1_kinds)
    );
    assert!(
        detail
            .failures
            .entries
            .iter()
            .all(|e| e.disposition.is_none())
    );

    let Err(ServiceError::Invalid(e)) =
        failures::list(db, &viewer, &of_kind("boring"), None, None).await
    else {
        panic!("expected invalid input");
    };
    assert_eq!(e.0[0].path, "kind");
    assert!(e.0[0].message.contains("retried"), "{}", e.0[0].message);
}
