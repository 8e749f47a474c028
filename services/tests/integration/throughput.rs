//! The charts' figures per minute: what a launch setting's nodes processed counts once however
//! often a heartbeat comes again, the final report adds the rest, failures are the failure
//! logs' own, the backlog is the most a sample of the minute found, and the dashboard sums every launch setting
//! with the broker's total backlog.

use super::{
    actor,
    runtime::{apply, heartbeat, node_up, report, setup},
};
use crate::on_both_backends;
use am_domain::{
    read::depths::{Depths, QueueDepth},
    roles::Role,
    throughput::{BROKER_SCOPE, minute_start},
    topology::queue_role,
    usage::EntityRef,
    wire::{
        ActivationCounters, ActivationEvent, ActivationId, ActivationResult, Counters,
        FailureReport, RunningLaunchSetting, ToManager, disposition,
    },
};
use am_services::{
    ServiceError, entity::throughput_minutes, ls_overview, runtime::run::run_now, throughput,
};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{DatabaseConnection, EntityTrait};
use uuid::Uuid;

on_both_backends!(
    processed_messages_count_once_in_the_minute_they_were_reported,
    the_backlog_is_the_most_sampled_in_the_minute_and_old_rows_go,
);

fn counted(ls: &str, id: Uuid, processed: u64) -> RunningLaunchSetting {
    let counters = Counters {
        processed,
        ..Counters::default()
    };
    RunningLaunchSetting {
        launch_setting: ls.into(),
        activations: vec![ActivationId(id.to_string())],
        counters,
        by_activation: vec![ActivationCounters {
            activation_id: ActivationId(id.to_string()),
            counters,
        }],
    }
}

fn failed(ls: &str, id: Uuid, n: u32, disposition: &str, at: DateTime<Utc>) -> ToManager {
    ToManager::Failure(FailureReport {
        application: "demo".into(),
        host: "demo-a".into(),
        activation_id: ActivationId(id.to_string()),
        launch_setting: ls.into(),
        agent: "echo".into(),
        error_type: "DbTimeout".into(),
        message: format!("failure {n}"),
        details: String::new(),
        data_message_id: Some(format!("m-{n}")),
        attempt: n,
        temporary: false,
        disposition: Some(disposition.into()),
        at,
        report_id: Some(Uuid::new_v4().to_string()),
        replay: None,
    })
}

async fn processed_messages_count_once_in_the_minute_they_were_reported(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let ls = "demo.sleep.nightly";
    // Every report is applied at this one time, so the figures land in one minute.
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    let id = run_now(
        db,
        &cfg,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting(ls.into()),
    )
    .await
    .expect("runs");
    apply(
        db,
        &cfg,
        &[
            report("demo-a", id, ls, 1, ActivationEvent::Accepted),
            report("demo-a", id, ls, 1, ActivationEvent::Started),
        ],
        now,
    )
    .await;
    let beat = |processed: u64| {
        let mut hb = heartbeat("demo-a", now);
        hb.running = vec![counted(ls, id, processed)];
        ToManager::Heartbeat(hb)
    };
    apply(db, &cfg, &[beat(5)], now).await;
    // The same heartbeat again (delivered twice), a later one, and a late older one.
    apply(db, &cfg, &[beat(5)], now).await;
    apply(db, &cfg, &[beat(12)], now).await;
    apply(db, &cfg, &[beat(12)], now).await;
    apply(db, &cfg, &[beat(5)], now).await;
    let t = throughput::of_launch_setting(db, &actor(Role::Viewer), ls, now)
        .await
        .expect("reads");
    assert_eq!(t.minutes.len(), 60);
    assert_eq!(t.processed(), 12, "each message once");
    assert_eq!(t.minutes.last().map(|m| m.processed), Some(12));
    // The final report adds what its counters add, once.
    let end = report(
        "demo-a",
        id,
        ls,
        1,
        ActivationEvent::Finished {
            result: ActivationResult::Succeeded,
            error: None,
            counters: Some(Counters {
                processed: 15,
                ..Counters::default()
            }),
        },
    );
    apply(db, &cfg, std::slice::from_ref(&end), now).await;
    apply(db, &cfg, &[end], now).await;
    // Failures are counted by kind where they occurred, as the failure logs list them.
    apply(
        db,
        &cfg,
        &[
            failed(ls, id, 1, disposition::RETRY, now),
            failed(ls, id, 2, disposition::DEAD_LETTER, now),
            failed(
                ls,
                id,
                3,
                disposition::DEAD_LETTER,
                now - Duration::minutes(5),
            ),
        ],
        now,
    )
    .await;
    let t = throughput::of_launch_setting(db, &actor(Role::Viewer), ls, now)
        .await
        .expect("reads");
    assert_eq!((t.processed(), t.failed(), t.retried()), (15, 2, 1));
    let five_ago = &t.minutes[54];
    assert_eq!((five_ago.failed, five_ago.processed), (1, 0));
    // Every launch setting together, on the dashboard's chart.
    let all = throughput::overall(db, now).await.expect("reads");
    assert_eq!((all.processed(), all.failed(), all.retried()), (15, 2, 1));
    // The summary counts the same, and lists the run.
    let o = ls_overview::of(db, &actor(Role::Viewer), ls, now)
        .await
        .expect("summary");
    assert_eq!(o.throughput, t);
    assert_eq!(o.runs_total, 1);
    assert_eq!(o.recent.first().map(|a| a.id), Some(id));
    assert_eq!((o.last_hour.failed, o.last_hour.retried), (2, 1));
    // Unknown launch settings are not found.
    let missing = throughput::of_launch_setting(db, &actor(Role::Viewer), "no.such", now).await;
    assert!(
        matches!(missing, Err(ServiceError::NotFound(_))),
        "{missing:?}"
    );
}

fn queue(name: &str, role: &str, ls: Option<&str>, dq: Option<&str>, ready: u32) -> QueueDepth {
    QueueDepth {
        queue: name.into(),
        role: role.into(),
        launch_setting: ls.map(str::to_owned),
        data_queue: dq.map(str::to_owned),
        ready,
        consumers: 1,
    }
}

async fn the_backlog_is_the_most_sampled_in_the_minute_and_old_rows_go(db: &DatabaseConnection) {
    setup(db).await;
    let now = minute_start(Utc::now()) + Duration::seconds(20);
    let ls = "demo.echo.1";
    let sample = |ready: u32| Depths {
        sampled_at: Some(now),
        queues: vec![
            queue(
                "t.sub.demo.echo.1",
                queue_role::SUBSCRIPTION,
                Some(ls),
                None,
                ready,
            ),
            queue(
                "t.unrouted.events",
                queue_role::UNROUTED,
                None,
                Some("events"),
                40,
            ),
        ],
        ..Depths::default()
    };
    // A row of yesterday, past what is kept.
    throughput::record_backlogs(db, &sample(99), now - Duration::hours(25))
        .await
        .expect("records");
    throughput::record_backlogs(db, &sample(7), now)
        .await
        .expect("records");
    throughput::record_backlogs(db, &sample(3), now + Duration::seconds(5))
        .await
        .expect("records");
    let t = throughput::of_launch_setting(db, &actor(Role::Viewer), ls, now)
        .await
        .expect("reads");
    assert_eq!(t.latest_backlog(), Some(7), "the minute's most");
    assert_eq!(t.peak_backlog(), 7);
    assert_eq!(t.minutes.iter().filter(|m| m.backlog.is_some()).count(), 1);
    // The broker's total: the queues nodes consume, not what no launch setting took.
    let all = throughput::overall(db, now).await.expect("reads");
    assert_eq!(all.latest_backlog(), Some(7));
    let rows = throughput_minutes::Entity::find()
        .all(db)
        .await
        .expect("rows");
    assert!(
        rows.iter()
            .all(|r| r.minute >= now - throughput::KEPT_FOR - Duration::minutes(1)),
        "yesterday's rows are gone: {rows:?}"
    );
    assert!(rows.iter().any(|r| r.scope == BROKER_SCOPE));
}
