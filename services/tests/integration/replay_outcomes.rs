//! What became of replayed dead letters: outcomes the nodes report (processed, failed again,
//! dead-lettered again) are written to the dead letter of that replay only, never over a final
//! one; an operation's outcomes count them, a replay to a disabled launch setting waits; and a
//! canary replay goes on only once its canary was processed.

use super::{
    actor,
    dead_letters::{given_up, names},
    demo_catalog,
};
use crate::on_both_backends;
use am_domain::{
    read::{
        dead_letters::Selection,
        operations::{OperationRequest, OperationView},
    },
    recovery::{ReplayOutcomes, ReplayResult},
    roles::Role,
    wire::{
        ActivationId, FailureReport, ToManager, disposition,
        replay::{ReplayProcessed, ReplayToken},
    },
};
use am_services::{
    Services, Settings, catalog,
    dead_letters::{self, replay},
    entity::dead_letters as entity,
    health::BrokerStatus,
    operations::{self, ReplayBroker, RunEnd, status},
    runtime::{RuntimeConfig, reports},
};
use chrono::Utc;
use sea_orm::{DatabaseConnection, EntityTrait, QueryOrder};
use serde_json::json;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

on_both_backends!(
    outcomes_are_written_to_their_replay_only_and_never_over_a_final_one,
    a_canary_goes_on_once_processed_and_stops_at_a_failure_or_a_disabled_launch_setting,
    a_replay_warns_of_the_breaker_at_its_same_type_threshold,
);

const FLAKY: &str = "demo.flaky.1";

/// Takes every publication, as a broker that is up would (or refuses every one, as one that
/// is down); remembers what it was given.
#[derive(Default, Clone)]
struct Recording(Arc<Mutex<Vec<i64>>>, bool);

impl ReplayBroker for Recording {
    async fn publish(
        &self,
        rows: &[entity::Model],
        _by: &str,
    ) -> Vec<Result<(), operations::ReplayError>> {
        self.0
            .lock()
            .expect("lock")
            .extend(rows.iter().map(|r| r.id));
        let down = self.1;
        rows.iter()
            .map(|_| {
                if down {
                    Err(operations::ReplayError::Unreachable)
                } else {
                    Ok(())
                }
            })
            .collect()
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

async fn setup(db: &DatabaseConnection, n: usize) -> (Services, Vec<i64>) {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
    for i in 0..n {
        let m = given_up(FLAKY, "demo.later", "Permanent", &format!("m-{i}"), "{}");
        dead_letters::store(db, &names(), &[m], Utc::now())
            .await
            .expect("store");
    }
    let ids = entity::Entity::find()
        .order_by_asc(entity::Column::Id)
        .all(db)
        .await
        .expect("rows")
        .into_iter()
        .map(|r| r.id)
        .collect();
    let services = Services::new(db.clone(), BrokerStatus::default(), Settings::default())
        .with_runtime(RuntimeConfig::new("t"));
    (services, ids)
}

fn processed(token: ReplayToken) -> ToManager {
    ToManager::ReplayProcessed(ReplayProcessed {
        application: "demo".into(),
        host: "demo-a".into(),
        activation_id: ActivationId(Uuid::new_v4().to_string()),
        launch_setting: FLAKY.into(),
        replay: token,
        at: Utc::now(),
    })
}

fn failed(token: ReplayToken, what: &str) -> ToManager {
    ToManager::Failure(FailureReport {
        application: "demo".into(),
        host: "demo-a".into(),
        activation_id: ActivationId(Uuid::new_v4().to_string()),
        launch_setting: FLAKY.into(),
        agent: "flaky".into(),
        error_type: "DbTimeout".into(),
        message: "still down".into(),
        details: String::new(),
        data_message_id: None,
        attempt: 1,
        temporary: false,
        disposition: Some(what.into()),
        at: Utc::now(),
        report_id: Some(Uuid::new_v4().to_string()),
        replay: Some(token),
    })
}

fn token(dead_letter: i64, replay: i32) -> ReplayToken {
    ReplayToken {
        dead_letter,
        replay,
    }
}

async fn apply(db: &DatabaseConnection, s: &Services, batch: &[ToManager]) {
    reports::apply(db, &s.runtime, batch, Utc::now())
        .await
        .expect("applies");
}

async fn row(db: &DatabaseConnection, id: i64) -> entity::Model {
    entity::Entity::find_by_id(id)
        .one(db)
        .await
        .expect("read")
        .expect("exists")
}

async fn replay_all(s: &Services, ids: &[i64], canary: Option<u32>) -> Uuid {
    operations::start(
        s,
        &actor(Role::Operator),
        OperationRequest::ReplayDeadLetters {
            selection: Selection {
                ids: ids.to_vec(),
                ..Selection::default()
            },
            canary,
            rate_per_second: None,
        },
    )
    .await
    .expect("starts")
    .id
}

async fn view(db: &DatabaseConnection, id: Uuid) -> OperationView {
    let m = operations::get(db, &actor(Role::Viewer), id)
        .await
        .expect("operation");
    operations::view(db, m).await.expect("view")
}

async fn outcomes_are_written_to_their_replay_only_and_never_over_a_final_one(
    db: &DatabaseConnection,
) {
    let (s, ids) = setup(db, 3).await;
    let broker = Recording::default();
    let op = replay_all(&s, &ids, None).await;
    assert_eq!(
        operations::run(db, &s.runtime, op, &broker)
            .await
            .expect("runs"),
        RunEnd::Finished(status::SUCCEEDED)
    );
    assert_eq!(*broker.0.lock().expect("lock"), ids);
    let sent = view(db, op).await;
    assert_eq!(
        sent.replay_outcomes,
        Some(ReplayOutcomes {
            sent: 3,
            ..ReplayOutcomes::default()
        }),
        "sent is not processed"
    );

    // The first is processed; the second fails again, then is processed on another host;
    // the third is dead-lettered again, and the dead letter comes back naming its replay.
    apply(
        db,
        &s,
        &[
            processed(token(ids[0], 1)),
            failed(token(ids[1], 1), disposition::RETRY),
            failed(token(ids[2], 1), disposition::DEAD_LETTER),
        ],
    )
    .await;
    let second = row(db, ids[1]).await;
    assert_eq!(second.replay_result.as_deref(), Some("retrying"));
    assert_eq!(
        second.replay_error.as_deref(),
        Some("DbTimeout: still down")
    );
    apply(db, &s, &[processed(token(ids[1], 1))]).await;
    let mut again = given_up(FLAKY, "demo.later", "Permanent", "m-2", "{}");
    again
        .headers
        .insert("x-am-replay".into(), json!(token(ids[2], 1).to_string()));
    again.headers.insert("x-am-attempts".into(), json!(4));
    dead_letters::store(db, &names(), &[again], Utc::now())
        .await
        .expect("store");
    let third = row(db, ids[2]).await;
    assert_eq!(third.replay_result.as_deref(), Some("dead-lettered"));
    let new_id = third.replay_dead_letter.expect("names the new dead letter");
    assert!(new_id > ids[2]);
    assert_eq!(
        third.replay_error.as_deref(),
        Some("DbTimeout: still down"),
        "the node's error is kept"
    );

    // Late or stale reports change nothing: a failure after "processed", a report of an
    // older replay of the same dead letter.
    apply(
        db,
        &s,
        &[
            failed(token(ids[0], 1), disposition::RETRY),
            processed(token(ids[2], 1)),
            processed(token(ids[2], 0)),
        ],
    )
    .await;
    assert_eq!(
        row(db, ids[0]).await.replay_result.as_deref(),
        Some("processed")
    );
    assert_eq!(
        row(db, ids[2]).await.replay_result.as_deref(),
        Some("dead-lettered")
    );
    assert_eq!(
        view(db, op).await.replay_outcomes,
        Some(ReplayOutcomes {
            processed: 2,
            failed_again: 1,
            ..ReplayOutcomes::default()
        })
    );
    let page = dead_letters::list(db, &actor(Role::Viewer), &Default::default(), None, None)
        .await
        .expect("list");
    let shown = page
        .items
        .iter()
        .find(|d| d.id == ids[2])
        .and_then(|d| d.replay.clone())
        .expect("the replay shows");
    assert_eq!(shown.result, ReplayResult::DeadLettered);
    assert_eq!(shown.dead_letter, Some(new_id));
    assert_eq!(shown.operation, Some(op));
}

async fn a_canary_goes_on_once_processed_and_stops_at_a_failure_or_a_disabled_launch_setting(
    db: &DatabaseConnection,
) {
    let (s, ids) = setup(db, 6).await;
    let (first, second) = ids.split_at(3);

    // The canary is processed: the rest follows.
    let broker = Recording::default();
    let op = replay_all(&s, first, Some(1)).await;
    let runner = {
        let (db, cfg, broker) = (db.clone(), s.runtime.clone(), broker.clone());
        tokio::spawn(async move { operations::run(&db, &cfg, op, &broker).await })
    };
    let canary = wait_for_published(&broker, 1).await;
    assert_eq!(canary, [first[0]], "only the canary before its outcome");
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(broker.0.lock().expect("lock").len(), 1, "it waits");
    apply(db, &s, &[processed(token(first[0], 1))]).await;
    assert_eq!(
        runner.await.expect("joins").expect("runs"),
        RunEnd::Finished(status::SUCCEEDED)
    );
    assert_eq!(*broker.0.lock().expect("lock"), first);

    // The canary fails again: the operation stops by itself, the rest untouched.
    let broker = Recording::default();
    let op = replay_all(&s, second, Some(1)).await;
    let runner = {
        let (db, cfg, broker) = (db.clone(), s.runtime.clone(), broker.clone());
        tokio::spawn(async move { operations::run(&db, &cfg, op, &broker).await })
    };
    wait_for_published(&broker, 1).await;
    apply(db, &s, &[failed(token(second[0], 1), disposition::RETRY)]).await;
    assert_eq!(
        runner.await.expect("joins").expect("runs"),
        RunEnd::Finished(status::FAILED)
    );
    assert_eq!(*broker.0.lock().expect("lock"), [second[0]]);
    let v = view(db, op).await;
    assert_eq!(v.errors.len(), 1);
    assert_eq!(v.errors[0].item, "canary");
    assert!(
        v.errors[0].error.contains("failed again")
            && v.errors[0].error.contains("DbTimeout: still down"),
        "{:?}",
        v.errors
    );
    assert_eq!(row(db, second[1]).await.status, "dead", "not replayed");

    // Behind a disabled launch setting the canary would wait: the operation says so and stops.
    catalog::set_enabled(
        db,
        &actor(Role::Operator),
        &am_domain::usage::EntityRef::LaunchSetting(FLAKY.into()),
        false,
        "test",
    )
    .await
    .expect("disable");
    let preview = replay::preview(
        db,
        &actor(Role::Operator),
        &Selection {
            ids: second[1..].to_vec(),
            ..Selection::default()
        },
    )
    .await
    .expect("preview");
    assert_eq!(preview.total, 2);
    assert_eq!(preview.disabled, [FLAKY]);
    let broker = Recording::default();
    let op = replay_all(&s, &second[1..], Some(1)).await;
    assert_eq!(
        operations::run(db, &s.runtime, op, &broker)
            .await
            .expect("runs"),
        RunEnd::Finished(status::FAILED)
    );
    let v = view(db, op).await;
    assert!(v.errors[0].error.contains("disabled"), "{:?}", v.errors);
    assert_eq!(
        v.replay_outcomes,
        Some(ReplayOutcomes {
            waiting: 1,
            ..ReplayOutcomes::default()
        })
    );

    // A canary the broker refused: nothing else is tried, the operation ends failed.
    catalog::set_enabled(
        db,
        &actor(Role::Operator),
        &am_domain::usage::EntityRef::LaunchSetting(FLAKY.into()),
        true,
        "test",
    )
    .await
    .expect("enable");
    let down = Recording(Arc::default(), true);
    let op = replay_all(&s, &second[2..], Some(1)).await;
    let mut unsent = entity::Entity::find_by_id(second[2])
        .one(db)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(unsent.status, "dead");
    // One more dead one after it, which a canary that went on unchecked would send.
    let extra = given_up(FLAKY, "demo.later", "Permanent", "m-extra", "{}");
    dead_letters::store(db, &names(), &[extra], Utc::now())
        .await
        .expect("store");
    assert_eq!(
        operations::run(db, &s.runtime, op, &down)
            .await
            .expect("runs"),
        RunEnd::Finished(status::FAILED)
    );
    assert_eq!(*down.0.lock().expect("lock"), [second[2]]);
    unsent = row(db, second[2]).await;
    assert_eq!(unsent.status, "dead", "a refused canary stays dead");

    // A canary of 0 is refused, naming the field.
    let e = operations::start(
        &s,
        &actor(Role::Operator),
        OperationRequest::ReplayDeadLetters {
            selection: Selection::default(),
            canary: Some(0),
            rate_per_second: None,
        },
    )
    .await
    .expect_err("refused");
    assert!(e.to_string().contains("canary"), "{e}");
}

/// A replay of more dead letters of one launch setting than the failures of one error type
/// that trip its breaker is warned of with that number (`N = max(1, M / 3)`), not `M` alone.
async fn a_replay_warns_of_the_breaker_at_its_same_type_threshold(db: &DatabaseConnection) {
    let (_s, ids) = setup(db, 6).await;
    let m = u32::try_from(
        am_services::entity::launch_settings::Entity::find_by_id(FLAKY)
            .one(db)
            .await
            .expect("query")
            .expect("the launch setting")
            .failure_threshold,
    )
    .expect("a threshold");
    let n = am_domain::policy::same_type_threshold(m);
    assert!(
        (n..m).contains(&6),
        "the fixture's threshold ({m}) makes 6 dead letters trip by type only"
    );
    let preview = replay::preview(
        db,
        &actor(Role::Operator),
        &Selection {
            ids,
            ..Selection::default()
        },
    )
    .await
    .expect("preview");
    assert_eq!(preview.breaker_risk.len(), 1, "{preview:?}");
    let risk = &preview.breaker_risk[0];
    assert_eq!(
        (
            risk.launch_setting.as_str(),
            risk.messages,
            risk.failure_threshold,
            risk.same_type_threshold
        ),
        (FLAKY, 6, m, n)
    );
}

async fn wait_for_published(broker: &Recording, n: usize) -> Vec<i64> {
    for _ in 0..200 {
        {
            let got = broker.0.lock().expect("lock");
            if got.len() >= n {
                return got.clone();
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("nothing published within 5 s")
}
