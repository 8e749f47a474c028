//! Bulk operations: validated and recorded whole, run batch by batch with progress, cancelled
//! between batches, resumed at the cursor after their runner died, one runner at a time.
//! (Dead-letter replay against a real broker is tested in the server's tests.)

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::{
    catalog::Catalog,
    read::operations::{OperationRequest, OperationView},
    roles::Role,
    usage::EntityRef,
};
use am_services::{
    ServiceError, Services, Settings, catalog,
    entity::{activations, audit_log, dead_letters, launch_settings, operations as op_rows},
    health::BrokerStatus,
    operations::{self, ReplayBroker, RunEnd, status},
    runtime::{RuntimeConfig, run::run_now},
};
use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    Set,
};

on_both_backends!(
    bulk_enable_works_in_batches_with_progress_and_audit,
    a_bad_selection_is_refused_whole_and_nothing_is_recorded,
    a_queued_operation_is_cancelled_at_once_and_a_running_one_after_its_batch,
    an_abandoned_operation_resumes_at_its_cursor_with_one_runner,
    rerun_runs_each_launch_setting_or_group_once,
    interrupt_stops_what_still_runs_each_once,
);

/// These tests select no dead letters and no unrouted queue: a broker call would be a bug.
pub(crate) struct NoBroker;

impl ReplayBroker for NoBroker {
    async fn publish(
        &self,
        rows: &[dead_letters::Model],
        _by: &str,
    ) -> Vec<Result<(), operations::ReplayError>> {
        panic!(
            "no dead letters were selected, yet {} were published",
            rows.len()
        )
    }

    async fn replay_unrouted(
        &self,
        data_queue: &str,
        _address: &str,
        _max: u64,
        _by: &str,
    ) -> operations::UnroutedBatch {
        panic!("no unrouted queue was selected, yet `{data_queue}`'s was replayed")
    }
}

const COPIES: usize = 45;

fn copy_id(i: usize) -> String {
    format!("bulk.sleep.{i:02}")
}

/// The demo catalog plus `COPIES` disabled copies of a standalone launch setting.
async fn setup(db: &DatabaseConnection) -> Services {
    let mut c: Catalog = demo_catalog();
    let template = c
        .launch_settings
        .iter()
        .find(|l| l.id == "demo.sleep.nightly")
        .expect("demo has demo.sleep.nightly")
        .clone();
    for i in 0..COPIES {
        let mut ls = template.clone();
        ls.id = copy_id(i);
        ls.enabled = false;
        c.launch_settings.push(ls);
    }
    // Scheduled launch settings belong to a group; this one never fires (disabled).
    let mut group = c
        .schedule_groups
        .iter()
        .find(|g| g.id == "demo.nightly")
        .expect("demo has demo.nightly")
        .clone();
    group.id = "bulk.group".into();
    group.enabled = false;
    group.members = all_copies();
    c.schedule_groups.push(group);
    c.normalize();
    catalog::import(db, &actor(Role::Admin), c)
        .await
        .expect("catalog imports");
    Services::new(db.clone(), BrokerStatus::default(), Settings::default())
        .with_runtime(RuntimeConfig::new("t"))
}

fn all_copies() -> Vec<String> {
    (0..COPIES).map(copy_id).collect()
}

async fn enabled(db: &DatabaseConnection, id: &str) -> bool {
    launch_settings::Entity::find_by_id(id.to_owned())
        .one(db)
        .await
        .expect("read")
        .expect("exists")
        .enabled
}

async fn row(db: &DatabaseConnection, id: uuid::Uuid) -> op_rows::Model {
    op_rows::Entity::find_by_id(id)
        .one(db)
        .await
        .expect("read")
        .expect("operation exists")
}

async fn bulk_enable_works_in_batches_with_progress_and_audit(db: &DatabaseConnection) {
    let s = setup(db).await;
    let operator = actor(Role::Operator);
    let started = operations::start(
        &s,
        &operator,
        OperationRequest::EnableLaunchSettings { ids: all_copies() },
    )
    .await
    .expect("starts");
    assert_eq!(started.status, status::QUEUED);
    assert_eq!(started.total, COPIES as i64);
    assert_eq!(started.requested_by, operator.name);

    let end = operations::run(db, &s.runtime, started.id, &NoBroker)
        .await
        .expect("runs");
    assert_eq!(end, RunEnd::Finished(status::SUCCEEDED));
    let done = OperationView::from(row(db, started.id).await);
    assert_eq!((done.done, done.failed, done.total), (45, 0, 45));
    assert_eq!(done.status, status::SUCCEEDED);
    assert!(done.finished_at.is_some() && done.started_at.is_some());
    assert_eq!(
        done.request,
        Some(OperationRequest::EnableLaunchSettings { ids: all_copies() })
    );
    for id in all_copies() {
        assert!(enabled(db, &id).await, "{id} enabled");
    }
    // Each change is audited as the operator's, with the operation as the cause; the
    // operation itself has a start and a finish entry.
    let changes = audit_log::Entity::find()
        .filter(audit_log::Column::EntityType.eq("launch_setting"))
        .filter(audit_log::Column::Actor.eq(operator.name.as_str()))
        .filter(audit_log::Column::Cause.eq(format!("bulk operation {}", started.id)))
        .count(db)
        .await
        .expect("count");
    assert_eq!(changes, COPIES as u64);
    let own = audit_log::Entity::find()
        .filter(audit_log::Column::EntityType.eq("operation"))
        .filter(audit_log::Column::EntityId.eq(started.id.to_string()))
        .all(db)
        .await
        .expect("read");
    let actions: Vec<_> = own.iter().map(|e| e.action.as_str()).collect();
    assert!(
        actions.contains(&"start") && actions.contains(&"finish"),
        "{actions:?}"
    );

    // Run again (a duplicate job): nothing to claim, nothing done twice.
    let again = operations::run(db, &s.runtime, started.id, &NoBroker)
        .await
        .expect("runs");
    assert_eq!(again, RunEnd::NotClaimed);
}

async fn a_bad_selection_is_refused_whole_and_nothing_is_recorded(db: &DatabaseConnection) {
    let s = setup(db).await;
    let operator = actor(Role::Operator);
    let err = operations::start(
        &s,
        &operator,
        OperationRequest::EnableLaunchSettings {
            ids: vec![copy_id(0), "nope".into(), copy_id(1), "nope.either".into()],
        },
    )
    .await
    .expect_err("unknown ids");
    let ServiceError::Invalid(errors) = err else {
        panic!("expected a validation error, got {err:?}");
    };
    let text = errors.to_string();
    assert!(text.contains("ids[1]") && text.contains("`nope`"), "{text}");
    assert!(
        text.contains("ids[3]") && text.contains("`nope.either`"),
        "{text}"
    );

    let err = operations::start(
        &s,
        &operator,
        OperationRequest::RerunActivations {
            ids: vec![],
            filter: am_domain::read::activations::ActivationFilter {
                launch_setting: Some("demo.echo.1".into()),
                ..Default::default()
            },
            from_where_it_broke: false,
        },
    )
    .await
    .expect_err("matches nothing");
    assert!(matches!(err, ServiceError::Invalid(_)), "{err:?}");

    let err = operations::start(
        &s,
        &actor(Role::Viewer),
        OperationRequest::EnableScheduleGroups {
            ids: vec!["demo.nightly".into()],
        },
    )
    .await
    .expect_err("viewers may not");
    assert!(matches!(err, ServiceError::Forbidden { .. }), "{err:?}");

    let err = operations::start(
        &s,
        &operator,
        OperationRequest::EnableLaunchSettings {
            ids: (0..10_001).map(|i| format!("ls.{i}")).collect(),
        },
    )
    .await
    .expect_err("too many ids");
    assert!(err.to_string().contains("at most 10000"), "{err}");

    assert_eq!(op_rows::Entity::find().count(db).await.expect("count"), 0);
    assert!(!enabled(db, &copy_id(0)).await);
}

async fn a_queued_operation_is_cancelled_at_once_and_a_running_one_after_its_batch(
    db: &DatabaseConnection,
) {
    let s = setup(db).await;
    let operator = actor(Role::Operator);
    let request = OperationRequest::EnableLaunchSettings { ids: all_copies() };

    let queued = operations::start(&s, &operator, request.clone())
        .await
        .expect("starts");
    let cancelled = operations::cancel(db, &operator, queued.id)
        .await
        .expect("cancels");
    assert_eq!(cancelled.status, status::CANCELLED);
    assert_eq!(
        operations::run(db, &s.runtime, queued.id, &NoBroker)
            .await
            .expect("runs"),
        RunEnd::NotClaimed
    );
    let err = operations::cancel(db, &operator, queued.id)
        .await
        .expect_err("already over");
    assert!(matches!(err, ServiceError::Conflict(_)), "{err:?}");

    // A running operation whose runner is gone, asked to stop: the next runner only says so.
    let running = operations::start(&s, &operator, request)
        .await
        .expect("starts");
    let stale = Utc::now() - chrono::Duration::minutes(5);
    let mut r: op_rows::ActiveModel = row(db, running.id).await.into();
    r.status = Set(status::RUNNING.into());
    r.cursor = Set(Some("20".into()));
    r.done = Set(20);
    r.updated_at = Set(stale);
    r.update(db).await.expect("update");
    operations::cancel(db, &operator, running.id)
        .await
        .expect("cancel requested");
    assert_eq!(row(db, running.id).await.status, status::RUNNING);
    assert_eq!(
        operations::run(db, &s.runtime, running.id, &NoBroker)
            .await
            .expect("runs"),
        RunEnd::Finished(status::CANCELLED)
    );
    let end = row(db, running.id).await;
    assert_eq!((end.status.as_str(), end.done), (status::CANCELLED, 20));
    for id in all_copies() {
        assert!(!enabled(db, &id).await, "{id} untouched");
    }
}

async fn an_abandoned_operation_resumes_at_its_cursor_with_one_runner(db: &DatabaseConnection) {
    let s = setup(db).await;
    let operator = actor(Role::Operator);
    let started = operations::start(
        &s,
        &operator,
        OperationRequest::EnableLaunchSettings { ids: all_copies() },
    )
    .await
    .expect("starts");

    // Its runner stopped after 20 items (the pretend work: those 20 stay disabled here, so
    // the test sees which items the resumed run touches).
    let now = Utc::now();
    let mut r: op_rows::ActiveModel = row(db, started.id).await.into();
    r.status = Set(status::RUNNING.into());
    r.cursor = Set(Some("20".into()));
    r.done = Set(20);
    r.updated_at = Set(now - chrono::Duration::seconds(30));
    r.update(db).await.expect("update");
    // Not stale yet: no second runner may take it.
    assert!(
        !operations::resumable(db, now)
            .await
            .expect("reads")
            .contains(&started.id)
    );
    assert_eq!(
        operations::run(db, &s.runtime, started.id, &NoBroker)
            .await
            .expect("runs"),
        RunEnd::NotClaimed
    );

    let later = now + operations::STALE_AFTER;
    assert!(
        operations::resumable(db, later)
            .await
            .expect("reads")
            .contains(&started.id)
    );
    let mut r: op_rows::ActiveModel = row(db, started.id).await.into();
    r.updated_at = Set(now - chrono::Duration::minutes(2));
    r.update(db).await.expect("update");
    assert_eq!(
        operations::run(db, &s.runtime, started.id, &NoBroker)
            .await
            .expect("runs"),
        RunEnd::Finished(status::SUCCEEDED)
    );
    let end = row(db, started.id).await;
    assert_eq!((end.done, end.total, end.failed), (45, 45, 0));
    for (i, id) in all_copies().iter().enumerate() {
        assert_eq!(enabled(db, id).await, i >= 20, "{id}");
    }
}

async fn rerun_runs_each_launch_setting_or_group_once(db: &DatabaseConnection) {
    let s = setup(db).await;
    let operator = actor(Role::Operator);
    let ls = EntityRef::LaunchSetting("demo.sleep.nightly".into());
    let group = EntityRef::ScheduleGroup("demo.nightly".into());
    let a1 = run_now(db, &s.runtime, &operator, &ls).await.expect("run");
    let a2 = run_now(db, &s.runtime, &operator, &ls).await.expect("run");
    let g = run_now(db, &s.runtime, &operator, &group)
        .await
        .expect("run");
    // A launch setting the operation cannot run: disabled since.
    let fail = EntityRef::LaunchSetting("demo.fail.nightly".into());
    let a3 = run_now(db, &s.runtime, &operator, &fail)
        .await
        .expect("run");
    catalog::set_enabled(db, &operator, &fail, false, "test")
        .await
        .expect("disable");
    let before = activations::Entity::find().count(db).await.expect("count");

    let started = operations::start(
        &s,
        &operator,
        OperationRequest::RerunActivations {
            ids: vec![a1, a2, g, a3],
            filter: Default::default(),
            from_where_it_broke: false,
        },
    )
    .await
    .expect("starts");
    assert_eq!(started.total, 3, "one per launch setting or group");
    assert_eq!(
        operations::run(db, &s.runtime, started.id, &NoBroker)
            .await
            .expect("runs"),
        RunEnd::Finished(status::FAILED)
    );
    let end = OperationView::from(row(db, started.id).await);
    assert_eq!((end.done, end.failed), (2, 1));
    assert_eq!(end.errors.len(), 1);
    assert!(
        end.errors[0].item.contains("demo.fail.nightly"),
        "{:?}",
        end.errors
    );
    assert!(end.errors[0].error.contains("disabled"), "{:?}", end.errors);
    let new: Vec<_> = activations::Entity::find()
        .filter(activations::Column::ParentId.is_null())
        .filter(activations::Column::RequestedBy.eq(operator.name.as_str()))
        .all(db)
        .await
        .expect("read");
    assert_eq!(
        new.len(),
        4 + 2,
        "four before, then one LS and one group run"
    );
    assert!(activations::Entity::find().count(db).await.expect("count") > before);

    // By filter: every activation of one launch setting → that launch setting once.
    let by_filter = operations::start(
        &s,
        &operator,
        OperationRequest::RerunActivations {
            ids: vec![],
            filter: am_domain::read::activations::ActivationFilter {
                launch_setting: Some("demo.sleep.nightly".into()),
                ..Default::default()
            },
            from_where_it_broke: false,
        },
    )
    .await
    .expect("starts");
    assert_eq!(by_filter.total, 1);
}

async fn interrupt_stops_what_still_runs_each_once(db: &DatabaseConnection) {
    let s = setup(db).await;
    let operator = actor(Role::Operator);
    let ls = EntityRef::LaunchSetting("demo.sleep.nightly".into());
    let group = EntityRef::ScheduleGroup("demo.nightly".into());
    let a1 = run_now(db, &s.runtime, &operator, &ls).await.expect("run");
    let a2 = run_now(db, &s.runtime, &operator, &ls).await.expect("run");
    let g = run_now(db, &s.runtime, &operator, &group)
        .await
        .expect("run");
    // Its agent's overlap policy is `skip`: the second run ended at once, and an ended run is
    // neither selected nor counted.
    let status_of = |id| async move {
        activations::Entity::find_by_id(id)
            .one(db)
            .await
            .expect("read")
            .expect("activation")
            .status
    };
    assert_eq!(status_of(a2).await, "skipped");
    let everything = am_domain::read::activations::ActivationFilter::default();
    let err = operations::interrupt_count(db, &actor(Role::Viewer), &everything)
        .await
        .expect_err("viewers may not");
    assert!(matches!(err, ServiceError::Forbidden { .. }), "{err:?}");
    // The group's run once: its member runs go with it.
    assert_eq!(
        operations::interrupt_count(db, &operator, &everything)
            .await
            .expect("counts"),
        2
    );
    let started = operations::start(
        &s,
        &operator,
        OperationRequest::InterruptActivations {
            ids: vec![],
            filter: everything.clone(),
        },
    )
    .await
    .expect("starts");
    assert_eq!(started.kind, "interrupt-activations");
    assert_eq!(started.total, 2);
    assert_eq!(
        operations::run(db, &s.runtime, started.id, &NoBroker)
            .await
            .expect("runs"),
        RunEnd::Finished(status::SUCCEEDED)
    );
    let end = OperationView::from(row(db, started.id).await);
    assert_eq!((end.done, end.failed), (2, 0));
    assert_eq!(status_of(a1).await, "interrupted");
    assert_eq!(status_of(g).await, "interrupted");
    assert_eq!(status_of(a2).await, "skipped", "left as it ended");
    // Nothing is left running: refused, with why, and counted as nothing.
    let err = operations::start(
        &s,
        &operator,
        OperationRequest::InterruptActivations {
            ids: vec![a1],
            filter: Default::default(),
        },
    )
    .await
    .expect_err("nothing to interrupt");
    assert!(
        matches!(&err, ServiceError::Conflict(m) if m.contains("nothing to interrupt")),
        "{err:?}"
    );
    assert_eq!(
        operations::interrupt_count(db, &operator, &everything)
            .await
            .expect("counts"),
        0
    );
}
