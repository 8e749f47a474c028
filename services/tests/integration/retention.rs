//! Failure-log retention (docs/concepts.md, Failure logs) on both backends: what a launch
//! setting's last completed activation allows to delete, that runs not ended (or skipped) do not
//! count, batching with a budget, and every statement of the sweep reading through an index.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::{
    roles::Role,
    usage::EntityRef,
    wire::{
        ActivationEvent, ActivationId, ActivationReport, ActivationResult, Heartbeat, ToManager,
    },
};
use am_services::{
    catalog,
    entity::{activations, error_types, failure_logs, launch_settings},
    registry,
    retention::{self, RetentionPolicy, RetentionReport},
    runtime::{RuntimeConfig, reports, run::run_now},
};
use chrono::{DateTime, Duration, SubsecRound, TimeZone, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, TransactionTrait, sea_query::Expr,
};
use uuid::Uuid;

on_both_backends!(
    a_success_deletes_every_earlier_failure_of_its_launch_setting_only,
    a_failure_or_interruption_keeps_the_window_before_it,
    runs_that_have_not_ended_do_not_count,
    the_run_that_ended_last_rules_as_the_runtime_records_it,
    a_skipped_group_member_does_not_count,
    large_deletions_go_in_batches_within_a_budget,
    bad_policies_are_refused_before_anything_is_deleted,
    every_statement_reads_through_an_index,
    error_types_go_with_their_last_failure,
);

const FLAKY: &str = "demo.flaky.1";
const POISON: &str = "demo.poison.1";
const ECHO: &str = "demo.echo.1";
/// A launch setting deleted since: nothing decides about its failure logs.
const GONE: &str = "gone.ls";

fn base() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 6, 1, 12, 0, 0)
        .single()
        .expect("valid time")
}

fn days(n: i64) -> Duration {
    Duration::days(n)
}

/// The default policy without the pause between batches, which only matters under load.
fn policy(keep_days: i64) -> RetentionPolicy {
    RetentionPolicy {
        keep_failed_for: days(keep_days),
        pause_between_batches: std::time::Duration::ZERO,
        ..RetentionPolicy::default()
    }
}

async fn setup(db: &DatabaseConnection) {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
}

fn activation(ls: &str, status: &str, at: DateTime<Utc>) -> activations::ActiveModel {
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
        created_at: Set(at),
        started_at: Set(Some(at)),
        finished_at: Set(None),
        error: Set(None),
        application_id: Set(Some("demo".into())),
        fencing_token: Set(1),
        pinned_host: Set(None),
        wait_until: Set(None),
        trace_parent: Set(None),
    }
}

/// A run of `ls` that ended with `status` at `at`, recorded as the runtime records an end: on
/// the activation, and as the launch setting's last result and last activation.
async fn ended(db: &DatabaseConnection, ls: &str, status: &str, at: DateTime<Utc>) -> Uuid {
    let mut a = activation(ls, status, at - Duration::minutes(5));
    a.finished_at = Set(Some(at));
    let id = activations::Entity::insert(a)
        .exec(db)
        .await
        .expect("activation")
        .last_insert_id;
    launch_settings::Entity::update_many()
        .col_expr(
            launch_settings::Column::LastResult,
            Expr::value(Some(status)),
        )
        .col_expr(launch_settings::Column::LastResultAt, Expr::value(Some(at)))
        .col_expr(
            launch_settings::Column::LastActivationId,
            Expr::value(Some(id)),
        )
        .filter(launch_settings::Column::Id.eq(ls))
        .exec(db)
        .await
        .expect("last result");
    id
}

/// A run of `ls` created at `at` that has not ended (`waiting`, `dispatched`, `running`).
async fn not_ended(db: &DatabaseConnection, ls: &str, status: &str, at: DateTime<Utc>) -> Uuid {
    activations::Entity::insert(activation(ls, status, at))
        .exec(db)
        .await
        .expect("activation")
        .last_insert_id
}

fn failure(ls: &str, activation: Uuid, at: DateTime<Utc>) -> failure_logs::ActiveModel {
    failure_logs::ActiveModel {
        launch_setting_id: Set(ls.into()),
        activation_id: Set(activation),
        host: Set("h1".into()),
        application_id: Set("demo".into()),
        agent_id: Set("flaky".into()),
        error_type: Set("Timeout".into()),
        message: Set("timed out".into()),
        details: Set(None),
        data_message_id: Set(None),
        attempt: Set(Some(1)),
        occurred_at: Set(at),
        ..Default::default()
    }
}

/// Failure logs of `ls` at each of `times` (of one made-up activation: retention ignores it).
async fn failures(db: &impl ConnectionTrait, ls: &str, times: &[DateTime<Utc>]) {
    let activation = Uuid::now_v7();
    // Well below every backend's bound-parameter limit per statement.
    for chunk in times.chunks(500) {
        failure_logs::Entity::insert_many(chunk.iter().map(|t| failure(ls, activation, *t)))
            .exec(db)
            .await
            .expect("failures");
    }
}

/// The times of the failure logs of `ls` left, oldest first.
async fn left(db: &DatabaseConnection, ls: &str) -> Vec<DateTime<Utc>> {
    failure_logs::Entity::find()
        .select_only()
        .column(failure_logs::Column::OccurredAt)
        .filter(failure_logs::Column::LaunchSettingId.eq(ls))
        .order_by_asc(failure_logs::Column::OccurredAt)
        .into_tuple()
        .all(db)
        .await
        .expect("failures left")
}

async fn sweep(db: &DatabaseConnection, policy: &RetentionPolicy) -> RetentionReport {
    retention::sweep(db, policy).await.expect("sweeps")
}

async fn a_success_deletes_every_earlier_failure_of_its_launch_setting_only(
    db: &DatabaseConnection,
) {
    setup(db).await;
    let t = base();
    let s = Duration::seconds(1);
    failures(db, FLAKY, &[t - days(400), t - days(1), t - s, t, t + s]).await;
    failures(db, POISON, &[t - days(400), t - days(1)]).await;
    failures(db, GONE, &[t - days(400)]).await;
    ended(db, FLAKY, "succeeded", t).await;

    let r = sweep(db, &policy(30)).await;
    assert_eq!(
        r,
        RetentionReport {
            launch_settings_checked: 1,
            deleted_after_success: 4,
            deleted_after_failure: 0,
            batches: 1,
            complete: true,
        }
    );
    // A failure after the success belongs to a newer run: it stays until a later end decides.
    assert_eq!(left(db, FLAKY).await, [t + s]);
    assert_eq!(left(db, POISON).await, [t - days(400), t - days(1)]);
    assert_eq!(left(db, GONE).await, [t - days(400)]);

    // Sweeping again finds nothing more and writes nothing.
    let r = sweep(db, &policy(30)).await;
    assert_eq!((r.deleted(), r.batches, r.complete), (0, 0, true));
}

async fn a_failure_or_interruption_keeps_the_window_before_it(db: &DatabaseConnection) {
    setup(db).await;
    let t = base();
    let s = Duration::seconds(1);
    // Around the edge of a 30-day window: just outside, exactly on it, just inside.
    let times = [
        t - days(90),
        t - days(30) - s,
        t - days(30),
        t - days(30) + s,
        t - days(7) - s,
        t - days(7) + s,
        t + s,
    ];
    for ls in [FLAKY, POISON] {
        failures(db, ls, &times).await;
    }
    ended(db, FLAKY, "failed", t).await;
    ended(db, POISON, "interrupted", t).await;
    // The activation's time is when it finished, not when it was created or started (five
    // minutes earlier): with its window starting at t - 20 days, a failure one minute before
    // that goes.
    let echo_end = t + days(10);
    failures(
        db,
        ECHO,
        &[
            echo_end - days(30) - Duration::minutes(1),
            echo_end - days(30) + s,
        ],
    )
    .await;
    ended(db, ECHO, "failed", echo_end).await;

    let r = sweep(db, &policy(30)).await;
    assert_eq!(
        (
            r.launch_settings_checked,
            r.deleted_after_success,
            r.deleted_after_failure
        ),
        (3, 0, 2 + 2 + 1)
    );
    let kept = [
        t - days(30),
        t - days(30) + s,
        t - days(7) - s,
        t - days(7) + s,
        t + s,
    ];
    assert_eq!(left(db, FLAKY).await, kept);
    assert_eq!(left(db, POISON).await, kept);
    assert_eq!(left(db, ECHO).await, [echo_end - days(30) + s]);

    // A shorter retention deletes more.
    let r = sweep(db, &policy(7)).await;
    assert_eq!(r.deleted_after_failure, 3 + 3 + 1);
    assert_eq!(left(db, FLAKY).await, [t - days(7) + s, t + s]);
    assert_eq!(left(db, POISON).await, [t - days(7) + s, t + s]);
    assert!(left(db, ECHO).await.is_empty());
}

async fn runs_that_have_not_ended_do_not_count(db: &DatabaseConnection) {
    setup(db).await;
    let t = base();
    let m = Duration::minutes(1);
    failures(db, FLAKY, &[t - days(40), t - days(1), t + m * 4]).await;
    failures(db, POISON, &[t - days(400)]).await;
    ended(db, FLAKY, "succeeded", t).await;
    // Newer runs of FLAKY, none ended: the success still rules.
    for (i, status) in (1..).zip(["waiting", "dispatched", "running"]) {
        not_ended(db, FLAKY, status, t + m * i).await;
    }
    // POISON never had a run that ended.
    for (i, status) in (1..).zip(["waiting", "dispatched", "running"]) {
        not_ended(db, POISON, status, t - days(500) + m * i).await;
    }

    let r = sweep(db, &policy(30)).await;
    assert_eq!(
        (
            r.launch_settings_checked,
            r.deleted_after_success,
            r.deleted_after_failure
        ),
        (1, 2, 0)
    );
    assert_eq!(left(db, FLAKY).await, [t + m * 4]);
    assert_eq!(left(db, POISON).await, [t - days(400)]);
}

fn heartbeat(host: &str, now: DateTime<Utc>) -> Heartbeat {
    Heartbeat {
        application: "demo".into(),
        host: host.into(),
        capacity: 4,
        running: vec![],
        load: Some(0.0),
        dropped_reports: 0,
        quarantined: 0,
        at: now,
    }
}

/// One event of `activation` reported by the host it went to, applied as the consumer applies
/// it at `now` (which becomes the activation's end time for a `Finished` event).
async fn report(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    activation: Uuid,
    ls: &str,
    event: ActivationEvent,
    now: DateTime<Utc>,
) {
    let host: String = am_services::entity::activation_hosts::Entity::find()
        .select_only()
        .column(am_services::entity::activation_hosts::Column::Host)
        .filter(am_services::entity::activation_hosts::Column::ActivationId.eq(activation))
        .into_tuple()
        .one(db)
        .await
        .expect("query")
        .expect("dispatched to a host");
    // The node is alive at `now`, so what follows (the next member of a group) goes to it.
    registry::record_heartbeat(db, &heartbeat(&host, now), now)
        .await
        .expect("heartbeat");
    let r = ToManager::Activation(ActivationReport {
        application: "demo".into(),
        host,
        activation_id: ActivationId(activation.to_string()),
        launch_setting: ls.into(),
        fencing_token: 1,
        event,
        at: now,
    });
    let out = reports::apply(db, cfg, &[r], now).await.expect("applies");
    assert_eq!(out.applied, 1, "the report moves the activation");
}

fn finished(result: ActivationResult) -> ActivationEvent {
    ActivationEvent::Finished {
        result,
        error: None,
        counters: None,
    }
}

async fn member(db: &DatabaseConnection, parent: Uuid, position: i32) -> activations::Model {
    activations::Entity::find()
        .filter(activations::Column::ParentId.eq(parent))
        .filter(activations::Column::Position.eq(position))
        .one(db)
        .await
        .expect("query")
        .expect("member run")
}

async fn status_of(db: &DatabaseConnection, id: Uuid) -> String {
    activations::Entity::find_by_id(id)
        .one(db)
        .await
        .expect("query")
        .expect("activation")
        .status
}

/// Driven through the runtime itself, so the sweep is checked against what the runtime
/// records when runs end (alone or as group members), not against hand-made rows.
async fn the_run_that_ended_last_rules_as_the_runtime_records_it(db: &DatabaseConnection) {
    setup(db).await;
    let cfg = RuntimeConfig::new("t");
    // Whole seconds: PostgreSQL keeps microseconds only.
    let now = Utc::now().trunc_subsecs(0);
    registry::record_heartbeat(db, &heartbeat("demo-a", now), now)
        .await
        .expect("node up");
    let sleep = "demo.sleep.nightly";
    let drain = "demo.echo.drain";
    let operator = actor(Role::Operator);
    let (t1, t2) = (now + Duration::minutes(1), now + Duration::hours(1));
    failures(db, sleep, &[t1 - days(40), t1 - days(1)]).await;
    failures(db, drain, &[t1 - days(40)]).await;

    // The group's first member (sleep) succeeds at t1; the second (drain) is dispatched.
    let group = run_now(
        db,
        &cfg,
        &operator,
        &EntityRef::ScheduleGroup("demo.nightly".into()),
    )
    .await
    .expect("group runs");
    let first = member(db, group, 0).await;
    report(
        db,
        &cfg,
        first.id,
        sleep,
        finished(ActivationResult::Succeeded),
        t1,
    )
    .await;
    assert_eq!(
        status_of(db, member(db, group, 1).await.id).await,
        "dispatched"
    );
    // A newer run of sleep is running and failing.
    let second = run_now(db, &cfg, &operator, &EntityRef::LaunchSetting(sleep.into()))
        .await
        .expect("runs");
    report(db, &cfg, second, sleep, ActivationEvent::Accepted, t1).await;
    report(db, &cfg, second, sleep, ActivationEvent::Started, t1).await;
    assert_eq!(status_of(db, second).await, "running");
    failures(db, sleep, &[t1 + Duration::minutes(2)]).await;

    let r = sweep(db, &policy(30)).await;
    assert_eq!(
        (
            r.launch_settings_checked,
            r.deleted_after_success,
            r.deleted_after_failure
        ),
        (1, 2, 0),
        "only sleep has a run that ended: the member run that succeeded"
    );
    assert_eq!(left(db, sleep).await, [t1 + Duration::minutes(2)]);
    assert_eq!(left(db, drain).await, [t1 - days(40)]);

    // The newer run fails at t2: now its window rules, and it keeps what a success would not
    // (here a failure of the old run reported late).
    failures(db, sleep, &[t1 - days(40), t1 - days(1)]).await;
    report(
        db,
        &cfg,
        second,
        sleep,
        finished(ActivationResult::Failed),
        t2,
    )
    .await;
    let r = sweep(db, &policy(30)).await;
    assert_eq!((r.deleted_after_success, r.deleted_after_failure), (0, 1));
    assert_eq!(
        left(db, sleep).await,
        [t1 - days(1), t1 + Duration::minutes(2)]
    );
}

async fn a_skipped_group_member_does_not_count(db: &DatabaseConnection) {
    setup(db).await;
    let cfg = RuntimeConfig::new("t");
    // Whole seconds: PostgreSQL keeps microseconds only.
    let now = Utc::now().trunc_subsecs(0);
    registry::record_heartbeat(db, &heartbeat("demo-a", now), now)
        .await
        .expect("node up");
    let sleep = "demo.sleep.nightly";
    let drain = "demo.echo.drain";
    let operator = actor(Role::Operator);
    let nightly = EntityRef::ScheduleGroup("demo.nightly".into());
    let (t1, t2) = (now + Duration::minutes(1), now + Duration::hours(1));

    // First the whole group succeeds at t1.
    let group = run_now(db, &cfg, &operator, &nightly).await.expect("runs");
    let first = member(db, group, 0).await;
    report(
        db,
        &cfg,
        first.id,
        sleep,
        finished(ActivationResult::Succeeded),
        t1,
    )
    .await;
    let second = member(db, group, 1).await;
    report(
        db,
        &cfg,
        second.id,
        drain,
        finished(ActivationResult::Succeeded),
        t1,
    )
    .await;
    assert_eq!(status_of(db, group).await, "succeeded");

    // Then its first member fails at t2, so the second is skipped (a newer, ended run).
    let group = run_now(db, &cfg, &operator, &nightly).await.expect("runs");
    let first = member(db, group, 0).await;
    report(
        db,
        &cfg,
        first.id,
        sleep,
        finished(ActivationResult::Failed),
        t2,
    )
    .await;
    let skipped = member(db, group, 1).await;
    assert_eq!(skipped.status, "skipped");

    let after = t2 + Duration::minutes(1);
    failures(db, sleep, &[t1 - days(40), t1 - days(1), after]).await;
    failures(db, drain, &[t1 - days(40), t1 - days(1), after]).await;
    let r = sweep(db, &policy(30)).await;
    assert_eq!(
        (
            r.launch_settings_checked,
            r.deleted_after_success,
            r.deleted_after_failure
        ),
        (2, 2, 1)
    );
    // sleep: its failure at t2 rules (30-day window).
    assert_eq!(left(db, sleep).await, [t1 - days(1), after]);
    // drain: the skip says nothing; its success at t1 still rules.
    assert_eq!(left(db, drain).await, [after]);
}

async fn large_deletions_go_in_batches_within_a_budget(db: &DatabaseConnection) {
    setup(db).await;
    let t = base();
    let old: Vec<_> = (0..2_345)
        .map(|i| t - days(60) + Duration::seconds(i))
        .collect();
    let recent: Vec<_> = (0..10)
        .map(|i| t - days(1) + Duration::seconds(i))
        .collect();
    let txn = db.begin().await.expect("txn");
    failures(&txn, FLAKY, &old).await;
    failures(&txn, FLAKY, &recent).await;
    failures(&txn, POISON, &old[..600]).await;
    txn.commit().await.expect("commit");
    ended(db, FLAKY, "failed", t).await;
    ended(db, POISON, "succeeded", t).await;
    let small = RetentionPolicy {
        batch_size: 500,
        max_batches: 3,
        ..policy(30)
    };

    // FLAKY (the first by id) takes the whole budget and is not done.
    let r = sweep(db, &small).await;
    assert_eq!(
        r,
        RetentionReport {
            launch_settings_checked: 1,
            deleted_after_success: 0,
            deleted_after_failure: 1_500,
            batches: 3,
            complete: false,
        }
    );
    assert_eq!(left(db, FLAKY).await.len(), 2_345 - 1_500 + 10);
    assert_eq!(left(db, POISON).await.len(), 600);

    // The next sweep goes on: 845 rows of FLAKY in 2 batches, 600 of POISON in 2.
    let r = sweep(
        db,
        &RetentionPolicy {
            max_batches: 10,
            ..small.clone()
        },
    )
    .await;
    assert_eq!(
        r,
        RetentionReport {
            launch_settings_checked: 2,
            deleted_after_success: 600,
            deleted_after_failure: 845,
            batches: 4,
            complete: true,
        }
    );
    assert_eq!(left(db, FLAKY).await, recent);
    assert!(left(db, POISON).await.is_empty());

    // With the default pause, batches are spread out.
    failures(db, POISON, &old[..1_200]).await;
    let started = std::time::Instant::now();
    let r = sweep(
        db,
        &RetentionPolicy {
            pause_between_batches: std::time::Duration::from_millis(200),
            ..small
        },
    )
    .await;
    assert_eq!((r.batches, r.deleted_after_success), (3, 1_200));
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(400),
        "two pauses between three batches"
    );
}

async fn bad_policies_are_refused_before_anything_is_deleted(db: &DatabaseConnection) {
    setup(db).await;
    let t = base();
    failures(db, FLAKY, &[t - days(40)]).await;
    ended(db, FLAKY, "succeeded", t).await;
    let e = retention::sweep(
        db,
        &RetentionPolicy {
            batch_size: 0,
            ..policy(30)
        },
    )
    .await
    .expect_err("empty batches");
    assert!(e.to_string().contains("batch_size"), "{e}");
    assert_eq!(left(db, FLAKY).await.len(), 1);
}

async fn every_statement_reads_through_an_index(db: &DatabaseConnection) {
    setup(db).await;
    let t = base();
    let times: Vec<_> = (0..200).map(|i| t - days(i)).collect();
    failures(db, FLAKY, &times).await;
    failures(db, POISON, &times).await;
    ended(db, FLAKY, "succeeded", t).await;
    // A handful of rows make a sequential scan the cheapest plan on PostgreSQL; with scans
    // discouraged, a plan without an index means no index fits the statement. Statistics as
    // autovacuum keeps them on a live database: without them PostgreSQL guesses, and may pick
    // another index led by the launch setting one run and the right one the next.
    let txn = db.begin().await.expect("txn");
    if txn.get_database_backend() == sea_orm::DbBackend::Postgres {
        txn.execute_unprepared("ANALYZE failure_logs")
            .await
            .expect("analyze");
        txn.execute_unprepared("SET LOCAL enable_seqscan = off")
            .await
            .expect("set");
    }
    let plans = retention::explain(&txn, FLAKY, &policy(30))
        .await
        .expect("explain");
    assert_eq!(plans.len(), 5);
    for (statement, plan) in &plans {
        if statement.contains("failure_logs") {
            assert!(
                plan.contains("idx_failure_logs_ls_occurred_at"),
                "{statement}\n{plan}"
            );
        }
        for l in plan.lines() {
            let table_scan = l.contains("Seq Scan on failure_logs")
                || l.contains("Seq Scan on activations")
                || l.trim_start().starts_with("SCAN failure_logs")
                || l.trim_start().starts_with("SCAN activations");
            assert!(!table_scan, "{statement}\nscans a whole table:\n{plan}");
        }
    }
    txn.rollback().await.expect("rollback");
    // Explaining deleted nothing.
    assert_eq!(left(db, FLAKY).await.len(), 200);
}

/// The error types the global search finds: a launch setting's type is forgotten once the
/// sweep deleted its latest failure, also by a sweep that found no failure left to delete.
async fn error_types_go_with_their_last_failure(db: &DatabaseConnection) {
    setup(db).await;
    let t = base();
    let s = Duration::seconds(1);
    failures(db, FLAKY, &[t - days(1), t + s]).await;
    failures(db, POISON, &[t - days(400)]).await;
    let known = [
        (FLAKY, "Timeout", t - days(1)),
        (FLAKY, "Late", t + s),
        (POISON, "Timeout", t - days(400)),
        // Its failures are gone already (a sweep stopped before forgetting it).
        (ECHO, "Old", t - days(50)),
        (ECHO, "Recent", t - days(10)),
    ];
    error_types::Entity::insert_many(known.iter().map(|(ls, e, at)| error_types::ActiveModel {
        launch_setting_id: Set((*ls).to_owned()),
        error_type: Set((*e).to_owned()),
        last_seen: Set(*at),
    }))
    .exec(db)
    .await
    .expect("error types");
    ended(db, FLAKY, "succeeded", t).await;
    ended(db, ECHO, "failed", t).await;

    let r = sweep(db, &policy(30)).await;
    assert_eq!(r.deleted(), 1);
    let left: Vec<(String, String)> = error_types::Entity::find()
        .select_only()
        .columns([
            error_types::Column::LaunchSettingId,
            error_types::Column::ErrorType,
        ])
        .order_by_asc(error_types::Column::LaunchSettingId)
        .order_by_asc(error_types::Column::ErrorType)
        .into_tuple()
        .all(db)
        .await
        .expect("error types left");
    let want: Vec<(String, String)> = [(ECHO, "Recent"), (FLAKY, "Late"), (POISON, "Timeout")]
        .into_iter()
        .map(|(ls, e)| (ls.to_owned(), e.to_owned()))
        .collect();
    assert_eq!(left, want);
}
