//! Reading activations on both backends: the list's filters and pages, and one activation with
//! its member runs, its timeline per host (re-dispatch included) and its failures.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::read::activations::{ActivationFilter, ActivationPage};
use am_domain::roles::Role;
use am_services::{
    ServiceError, activations, catalog,
    entity::{activation_events, activation_hosts, activations as rows, failure_logs},
};
use chrono::{DateTime, Duration, TimeZone, Utc};
use sea_orm::{ActiveValue::Set, DatabaseConnection, EntityTrait};
use uuid::Uuid;

on_both_backends!(
    the_list_filters_and_pages_newest_first,
    an_activation_shows_its_members_timeline_per_host_and_failures,
);

fn at(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .expect("valid time")
        + Duration::minutes(minutes)
}

struct Seed {
    group: Uuid,
    sleep: Uuid,
    drain: Uuid,
}

fn row(id: Uuid, minute: i64) -> rows::ActiveModel {
    rows::ActiveModel {
        id: Set(id),
        launch_setting_id: Set(None),
        group_id: Set(Some("demo.nightly".into())),
        parent_id: Set(None),
        position: Set(None),
        trigger: Set("schedule".into()),
        fire_key: Set(None),
        status: Set("failed".into()),
        requested_by: Set(None),
        created_at: Set(at(minute)),
        started_at: Set(Some(at(minute))),
        finished_at: Set(Some(at(minute + 10))),
        error: Set(None),
        application_id: Set(Some("demo".into())),
        fencing_token: Set(0),
        pinned_host: Set(None),
        wait_until: Set(None),
        trace_parent: Set(None),
    }
}

fn event(
    activation: Uuid,
    host: Option<&str>,
    kind: &str,
    detail: &str,
    minute: i64,
) -> activation_events::ActiveModel {
    activation_events::ActiveModel {
        activation_id: Set(activation),
        host: Set(host.map(str::to_owned)),
        at: Set(at(minute)),
        kind: Set(kind.into()),
        detail: Set((!detail.is_empty()).then(|| detail.to_owned())),
        ..Default::default()
    }
}

/// The group `demo.nightly` fired at minute 0: member 0 (`demo.sleep.nightly`) succeeded on
/// h1; member 1 (`demo.echo.drain`) was not accepted by h1, re-dispatched to h2 and failed
/// there after two failures.
async fn seed(db: &DatabaseConnection) -> Seed {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
    let (group, sleep, drain) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    rows::Entity::insert_many([
        row(group, 0),
        rows::ActiveModel {
            launch_setting_id: Set(Some("demo.sleep.nightly".into())),
            parent_id: Set(Some(group)),
            position: Set(Some(0)),
            trigger: Set("group".into()),
            status: Set("succeeded".into()),
            fencing_token: Set(1),
            ..row(sleep, 1)
        },
        rows::ActiveModel {
            launch_setting_id: Set(Some("demo.echo.drain".into())),
            parent_id: Set(Some(group)),
            position: Set(Some(1)),
            trigger: Set("group".into()),
            fencing_token: Set(2),
            error: Set(Some("drain failed".into())),
            ..row(drain, 2)
        },
    ])
    .exec(db)
    .await
    .expect("activations");
    let host_row =
        |activation: Uuid, host: &str, attempt: i32, status: &str| activation_hosts::ActiveModel {
            activation_id: Set(activation),
            host: Set(host.into()),
            application_id: Set("demo".into()),
            fencing_token: Set(i64::from(attempt)),
            status: Set(status.into()),
            attempt: Set(attempt),
            dispatched_at: Set(at(2)),
            processed: Set(0),
            failed: Set(0),
            retried: Set(0),
            dead_lettered: Set(0),
            ..Default::default()
        };
    activation_hosts::Entity::insert_many([
        host_row(sleep, "h1", 1, "succeeded"),
        host_row(drain, "h1", 1, "superseded"),
        activation_hosts::ActiveModel {
            accepted_at: Set(Some(at(4))),
            started_at: Set(Some(at(4))),
            last_heartbeat_at: Set(Some(at(5))),
            finished_at: Set(Some(at(6))),
            processed: Set(5),
            failed: Set(2),
            error: Set(Some("Boom".into())),
            ..host_row(drain, "h2", 2, "failed")
        },
    ])
    .exec(db)
    .await
    .expect("host rows");
    activation_events::Entity::insert_many([
        event(group, None, "fired", "", 0),
        event(drain, None, "created", "trigger: group", 2),
        event(drain, Some("h1"), "dispatched", "fencing token 1", 2),
        event(
            drain,
            Some("h2"),
            "re-dispatched: h1 did not accept the launch in time",
            "fencing token 2",
            3,
        ),
        event(drain, Some("h2"), "accepted", "", 4),
        event(drain, Some("h2"), "started", "", 4),
        event(drain, Some("h2"), "failed", "Boom", 6),
    ])
    .exec(db)
    .await
    .expect("events");
    let failure = |minute: i64| failure_logs::ActiveModel {
        launch_setting_id: Set("demo.echo.drain".into()),
        activation_id: Set(drain),
        host: Set("h2".into()),
        application_id: Set("demo".into()),
        agent_id: Set("echo".into()),
        error_type: Set("Boom".into()),
        message: Set("boom".into()),
        details: Set(None),
        data_message_id: Set(Some(format!("msg-{minute}"))),
        attempt: Set(Some(1)),
        occurred_at: Set(at(minute)),
        ..Default::default()
    };
    failure_logs::Entity::insert_many([failure(5), failure(6)])
        .exec(db)
        .await
        .expect("failures");
    Seed {
        group,
        sleep,
        drain,
    }
}

fn ids(page: &ActivationPage) -> Vec<Uuid> {
    page.items.iter().map(|a| a.id).collect()
}

async fn the_list_filters_and_pages_newest_first(db: &DatabaseConnection) {
    let s = seed(db).await;
    let viewer = actor(Role::Viewer);
    let list = |f: ActivationFilter| async move {
        activations::list(db, &actor(Role::Viewer), &f, None, None)
            .await
            .expect("list")
    };
    let all = list(ActivationFilter::default()).await;
    assert_eq!(ids(&all), [s.drain, s.sleep, s.group]);
    let group = &all.items[2];
    assert_eq!(group.failures, 2, "a group counts its members' failures");
    assert_eq!(group.launch_setting, None);
    assert_eq!(all.items[0].hosts, ["h1", "h2"]);
    assert_eq!(all.items[0].parent, Some(s.group));
    assert_eq!(all.items[0].failures, 2);

    let by_ls = list(ActivationFilter {
        launch_setting: Some("demo.echo.drain".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(ids(&by_ls), [s.drain]);
    let by_group = list(ActivationFilter {
        group: Some("demo.nightly".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(by_group.items.len(), 3);
    let by_host = list(ActivationFilter {
        host: Some("h2".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(ids(&by_host), [s.drain]);
    let by_status = list(ActivationFilter {
        status: Some("succeeded".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(ids(&by_status), [s.sleep]);
    let by_app = list(ActivationFilter {
        application: Some("other".into()),
        ..Default::default()
    })
    .await;
    assert!(by_app.items.is_empty());
    let by_error = list(ActivationFilter {
        error_type: Some("Boom".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(
        ids(&by_error),
        [s.drain, s.group],
        "the run that failed so, and its group's activation"
    );
    let by_other_error = list(ActivationFilter {
        error_type: Some("DbTimeout".into()),
        ..Default::default()
    })
    .await;
    assert!(by_other_error.items.is_empty());
    let by_time = list(ActivationFilter {
        from: Some(at(1).to_rfc3339()),
        to: Some(at(2).to_rfc3339()),
        ..Default::default()
    })
    .await;
    assert_eq!(ids(&by_time), [s.sleep]);

    let p1 = activations::list(db, &viewer, &ActivationFilter::default(), Some(1), Some(2))
        .await
        .expect("page 1");
    assert!(p1.has_more);
    assert_eq!(ids(&p1), [s.drain, s.sleep]);
    let p2 = activations::list(db, &viewer, &ActivationFilter::default(), Some(2), Some(2))
        .await
        .expect("page 2");
    assert!(!p2.has_more);
    assert_eq!(ids(&p2), [s.group]);

    let bad = ActivationFilter {
        status: Some("exploded".into()),
        ..Default::default()
    };
    let Err(ServiceError::Invalid(e)) = activations::list(db, &viewer, &bad, None, None).await
    else {
        panic!("expected invalid input");
    };
    assert_eq!(e.0[0].path, "status");

    // `active`: every run not ended (the dashboard's Active runs), none of the ended ones.
    let active = ActivationFilter {
        status: Some("active".into()),
        ..Default::default()
    };
    assert!(list(active.clone()).await.items.is_empty());
    for (id, status) in [(s.sleep, "waiting"), (s.drain, "dispatched")] {
        rows::Entity::update(rows::ActiveModel {
            id: Set(id),
            status: Set(status.into()),
            ..Default::default()
        })
        .exec(db)
        .await
        .expect("not ended again");
    }
    assert_eq!(ids(&list(active).await), [s.drain, s.sleep]);
}

async fn an_activation_shows_its_members_timeline_per_host_and_failures(db: &DatabaseConnection) {
    let s = seed(db).await;
    let viewer = actor(Role::Viewer);
    let group = activations::get(db, &viewer, &s.group.to_string())
        .await
        .expect("group");
    let members: Vec<(Uuid, Option<i32>)> =
        group.members.iter().map(|m| (m.id, m.position)).collect();
    assert_eq!(members, [(s.sleep, Some(0)), (s.drain, Some(1))]);
    assert_eq!(group.failures.total, 2);
    assert_eq!(group.failures.by_error_type[0].error_type, "Boom");
    assert_eq!(
        group.timeline.len(),
        1,
        "only the manager's lane: {:?}",
        group.timeline
    );
    assert_eq!(group.timeline[0].events[0].kind, "fired");

    let drain = activations::get(db, &viewer, &s.drain.to_string())
        .await
        .expect("member");
    assert_eq!(drain.activation.error.as_deref(), Some("drain failed"));
    let lanes: Vec<Option<&str>> = drain.timeline.iter().map(|l| l.host.as_deref()).collect();
    assert_eq!(lanes, [None, Some("h1"), Some("h2")]);
    let h1 = &drain.timeline[1];
    assert_eq!(h1.runs.len(), 1);
    assert_eq!(h1.runs[0].status, "superseded");
    assert_eq!(h1.failures, 0);
    let h2 = &drain.timeline[2];
    let kinds: Vec<&str> = h2.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "re-dispatched: h1 did not accept the launch in time",
            "accepted",
            "started",
            "failed"
        ]
    );
    let run = &h2.runs[0];
    assert_eq!(
        (run.attempt, run.fencing_token, run.processed, run.failed),
        (2, 2, 5, 2)
    );
    assert_eq!(run.last_heartbeat_at, Some(at(5)));
    assert_eq!(h2.failures, 2);
    assert_eq!(drain.failures.entries.len(), 2);
    assert_eq!(drain.failures.entries[0].occurred_at, at(6));

    let missing = activations::get(db, &viewer, &Uuid::now_v7().to_string()).await;
    assert!(
        matches!(missing, Err(ServiceError::NotFound(_))),
        "{missing:?}"
    );
    let garbage = activations::get(db, &viewer, "garbage").await;
    assert!(
        matches!(garbage, Err(ServiceError::NotFound(_))),
        "{garbage:?}"
    );
}
