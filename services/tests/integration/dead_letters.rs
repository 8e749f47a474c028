//! Dead letters on both backends: ingestion (de-duplicated, headers into columns, messages the
//! broker dead-lettered itself), the filtered list with its cursor, one dead letter with its
//! failure history, and the functions bulk operations page through.

use super::{actor, demo_catalog};
use crate::on_both_backends;
use am_domain::read::dead_letters::{BodyEncoding, DeadLetterFilter, Selection};
use am_domain::{roles::Role, wire::names::Names};
use am_services::{
    ServiceError, catalog,
    dead_letters::{self, IncomingDeadLetter, StoreOutcome},
    entity::{dead_letters as entity, failure_logs},
};
use chrono::{DateTime, Duration, TimeZone, Utc};
use sea_orm::{ActiveValue::Set, DatabaseConnection, EntityTrait, PaginatorTrait};
use serde_json::{Map, Value, json};
use uuid::Uuid;

on_both_backends!(
    redelivered_batches_are_stored_once,
    broker_dead_letters_get_their_launch_setting_and_data_queue,
    filters_count_and_page,
    bulk_functions_take_dead_ones_in_id_order,
    one_dead_letter_with_its_failure_history,
);

const FLAKY: &str = "demo.flaky.1";
const POISON: &str = "demo.poison.1";

pub(crate) fn names() -> Names {
    Names::new("am")
}

fn at(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .expect("valid time")
        + Duration::minutes(minutes)
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A message a node gave up on, with the headers the client library writes.
pub(crate) fn given_up(
    ls: &str,
    dq: &str,
    error_type: &str,
    message_id: &str,
    body: &str,
) -> IncomingDeadLetter {
    IncomingDeadLetter {
        exchange: String::new(),
        routing_key: "am.dead-letters".into(),
        message_id: Some(message_id.into()),
        content_type: Some("application/json".into()),
        properties: obj(json!({"correlation_id": format!("c-{message_id}")})),
        headers: obj(json!({
            "x-am-launch-setting": ls,
            "x-am-data-queue": dq,
            "x-am-last-error-type": error_type,
            "x-am-last-error-message": format!("{error_type} on {message_id}"),
            "x-am-attempts": 3,
            "x-am-attempt": 3,
            "x-am-first-failure": "2030-01-01T00:00:00Z",
            "x-am-last-failure": "2030-01-01T00:00:05Z",
            "x-am-host": "host-a",
        })),
        body: body.as_bytes().to_vec(),
    }
}

async fn seed_catalog(db: &DatabaseConnection) {
    catalog::import(db, &actor(Role::Admin), demo_catalog())
        .await
        .expect("demo catalog imports");
}

async fn stored(db: &DatabaseConnection) -> u64 {
    entity::Entity::find().count(db).await.expect("count")
}

async fn redelivered_batches_are_stored_once(db: &DatabaseConnection) {
    let a = given_up(FLAKY, "demo.later", "Permanent", "m-1", r#"{"n":1}"#);
    let b = given_up(FLAKY, "demo.later", "Permanent", "m-2", r#"{"n":2}"#);
    // The same message twice in one batch (delivered again before the first was acknowledged).
    let batch = vec![a.clone(), b.clone(), a.clone()];
    let out = dead_letters::store(db, &names(), &batch, at(0))
        .await
        .expect("store");
    assert_eq!(
        out,
        StoreOutcome {
            stored: 2,
            duplicates: 1
        }
    );
    // The whole batch again: committed before, not acknowledged, delivered again.
    let out = dead_letters::store(db, &names(), &batch, at(1))
        .await
        .expect("store again");
    assert_eq!(
        out,
        StoreOutcome {
            stored: 0,
            duplicates: 3
        }
    );
    assert_eq!(stored(db).await, 2);
    // Dead-lettered again later (a replay that failed again): new failure headers, a new row.
    let mut again = a.clone();
    again
        .headers
        .insert("x-am-last-failure".into(), json!("2030-01-01T01:00:00Z"));
    let out = dead_letters::store(db, &names(), &[again], at(60))
        .await
        .expect("store the second death");
    assert_eq!(out.stored, 1);
    assert_eq!(stored(db).await, 3);
    assert_eq!(
        dead_letters::store(db, &names(), &[], at(0)).await.ok(),
        Some(StoreOutcome::default())
    );

    let rows = entity::Entity::find().all(db).await.expect("rows");
    let first = rows
        .iter()
        .find(|r| r.message_id.as_deref() == Some("m-1"))
        .expect("m-1 stored");
    assert_eq!(first.launch_setting_id.as_deref(), Some(FLAKY));
    assert_eq!(first.data_queue_id.as_deref(), Some("demo.later"));
    assert_eq!(first.error_type.as_deref(), Some("Permanent"));
    assert_eq!(first.error_message.as_deref(), Some("Permanent on m-1"));
    assert_eq!(first.attempts, 3);
    assert_eq!(first.first_failure_at, Some(at(0)));
    assert_eq!(first.last_failure_at, Some(at(0) + Duration::seconds(5)));
    assert_eq!(first.host.as_deref(), Some("host-a"));
    assert_eq!(first.status, dead_letters::DEAD);
    assert_eq!(first.received_at, at(0));
    assert_eq!(first.body, br#"{"n":1}"#);
    assert_eq!(first.content_type.as_deref(), Some("application/json"));
    assert_eq!(first.headers["x-am-host"], json!("host-a"));
    assert_eq!(first.properties, Some(json!({"correlation_id": "c-m-1"})));
    assert_eq!(first.dedupe_key.len(), 64);
}

async fn broker_dead_letters_get_their_launch_setting_and_data_queue(db: &DatabaseConnection) {
    seed_catalog(db).await;
    let by_broker = IncomingDeadLetter {
        exchange: String::new(),
        routing_key: "am.dead-letters".into(),
        message_id: Some("b-1".into()),
        headers: obj(json!({
            "x-am-attempt": 2,
            "x-death": [
                {"queue": "am.ls.demo.flaky.1.retry.1000ms", "reason": "expired", "count": 1, "time": 1_893_456_000},
                {"queue": "am.ls.demo.flaky.1", "reason": "delivery_limit", "count": 1, "time": 1_893_456_060,
                 "exchange": "demo.later", "routing-keys": [""]},
            ],
            "x-first-death-queue": "am.ls.demo.flaky.1.retry.1000ms",
            "x-first-death-reason": "expired",
        })),
        body: b"crashes the node".to_vec(),
        ..Default::default()
    };
    // Malformed headers, and NUL characters PostgreSQL refuses in text: stored all the same.
    let stranger = IncomingDeadLetter {
        exchange: "somewhere".into(),
        routing_key: "x\u{0}y".into(),
        content_type: Some("text/\u{0}plain".into()),
        headers: obj(json!({
            "x-am-attempts": "lots",
            "x-death": 7,
            "x-am-last-error-message": "bad\u{0}byte",
            "odd\u{0}key": ["v\u{0}"],
        })),
        body: vec![0xff, 0xfe, 0x00],
        ..Default::default()
    };
    let out = dead_letters::store(db, &names(), &[by_broker, stranger], at(0))
        .await
        .expect("store");
    assert_eq!(out.stored, 2);
    let rows = entity::Entity::find().all(db).await.expect("rows");
    let b = rows
        .iter()
        .find(|r| r.message_id.as_deref() == Some("b-1"))
        .expect("broker's dead letter");
    assert_eq!(b.launch_setting_id.as_deref(), Some(FLAKY));
    // Not in its headers: the launch setting's agent's data queue.
    assert_eq!(b.data_queue_id.as_deref(), Some("demo.later"));
    assert_eq!(b.error_type.as_deref(), Some("broker:delivery_limit"));
    assert_eq!(b.attempts, 2);
    assert_eq!(
        b.last_failure_at.map(|t| t.timestamp()),
        Some(1_893_456_060)
    );
    assert_eq!(b.properties, None);
    let s = rows
        .iter()
        .find(|r| r.message_id.is_none())
        .expect("the stranger is stored too");
    assert_eq!(s.launch_setting_id, None);
    assert_eq!(s.data_queue_id, None);
    assert_eq!(s.error_type, None);
    assert_eq!(s.attempts, 0);
    assert_eq!(s.status, dead_letters::DEAD);
    assert_eq!(s.error_message.as_deref(), Some("badbyte"));
    assert_eq!(s.routing_key.as_deref(), Some("xy"));
    assert_eq!(s.content_type.as_deref(), Some("text/plain"));
    assert_eq!(s.headers["oddkey"], json!(["v"]));
    assert_eq!(s.body, vec![0xff, 0xfe, 0x00]);
}

/// Seven dead letters a minute apart: ids 1..=7 in arrival order.
async fn seed_seven(db: &DatabaseConnection) -> Vec<i64> {
    let specs = [
        (FLAKY, "demo.later", "Permanent"),
        (FLAKY, "demo.later", "Timeout"),
        (POISON, "demo.events", "Poison"),
        (FLAKY, "demo.later", "Permanent"),
        (POISON, "demo.events", "Poison"),
        (FLAKY, "demo.later", "Permanent"),
        (POISON, "demo.events", "Timeout"),
    ];
    for (i, (ls, dq, et)) in specs.iter().enumerate() {
        let m = given_up(ls, dq, et, &format!("m-{i}"), &format!("{{\"i\":{i}}}"));
        dead_letters::store(db, &names(), &[m], at(i as i64))
            .await
            .expect("store");
    }
    let mut ids: Vec<i64> = entity::Entity::find()
        .all(db)
        .await
        .expect("rows")
        .into_iter()
        .map(|r| r.id)
        .collect();
    ids.sort_unstable();
    ids
}

fn filter(f: impl FnOnce(&mut DeadLetterFilter)) -> DeadLetterFilter {
    let mut x = DeadLetterFilter::default();
    f(&mut x);
    x
}

async fn page_ids(
    db: &DatabaseConnection,
    f: &DeadLetterFilter,
    after: Option<i64>,
    limit: u64,
) -> (u64, Vec<i64>, Option<i64>) {
    let p = dead_letters::list(db, &actor(Role::Viewer), f, after, Some(limit))
        .await
        .expect("list");
    (p.total, p.items.iter().map(|i| i.id).collect(), p.next)
}

async fn filters_count_and_page(db: &DatabaseConnection) {
    let ids = seed_seven(db).await;
    let all = DeadLetterFilter::default();
    // Newest first, three per page, by cursor.
    let (total, first, next) = page_ids(db, &all, None, 3).await;
    assert_eq!(total, 7);
    assert_eq!(first, vec![ids[6], ids[5], ids[4]]);
    let (_, second, next) = page_ids(db, &all, next, 3).await;
    assert_eq!(second, vec![ids[3], ids[2], ids[1]]);
    let (_, third, next) = page_ids(db, &all, next, 3).await;
    assert_eq!(third, vec![ids[0]]);
    assert_eq!(next, None);

    let (n, got, _) = page_ids(
        db,
        &filter(|f| f.launch_setting = Some(POISON.into())),
        None,
        50,
    )
    .await;
    assert_eq!((n, got), (3, vec![ids[6], ids[4], ids[2]]));
    let (n, _, _) = page_ids(
        db,
        &filter(|f| f.data_queue = Some("demo.later".into())),
        None,
        50,
    )
    .await;
    assert_eq!(n, 4);
    let (n, got, _) = page_ids(
        db,
        &filter(|f| f.error_type = Some("Timeout".into())),
        None,
        50,
    )
    .await;
    assert_eq!((n, got), (2, vec![ids[6], ids[1]]));
    // [minute 2, minute 5): ids 3..=5 (0-based 2..=4).
    let range = filter(|f| {
        f.from = Some(at(2).to_rfc3339());
        f.to = Some(at(5).to_rfc3339());
    });
    let (n, got, _) = page_ids(db, &range, None, 50).await;
    assert_eq!((n, got), (3, vec![ids[4], ids[3], ids[2]]));
    // Blank filters are no filters.
    let (n, _, _) = page_ids(db, &filter(|f| f.error_type = Some("  ".into())), None, 50).await;
    assert_eq!(n, 7);

    dead_letters::mark_replayed(db, &[ids[0], ids[2]], "alice", Uuid::nil(), at(10))
        .await
        .expect("mark");
    let (n, got, _) = page_ids(
        db,
        &filter(|f| f.status = Some("replayed".into())),
        None,
        50,
    )
    .await;
    assert_eq!((n, got), (2, vec![ids[2], ids[0]]));
    let (n, _, _) = page_ids(db, &filter(|f| f.status = Some("dead".into())), None, 50).await;
    assert_eq!(n, 5);

    let p = dead_letters::list(db, &actor(Role::Viewer), &all, None, None)
        .await
        .expect("list");
    let oldest = p.items.last().expect("items");
    assert_eq!(oldest.replayed_by.as_deref(), Some("alice"));
    assert_eq!(oldest.replay_count, 1);
    assert_eq!(oldest.body_preview, "{\"i\":0}");
    assert_eq!(oldest.body_size, 7);
    assert_eq!(oldest.error_message.as_deref(), Some("Permanent on m-0"));

    let Err(ServiceError::Invalid(e)) = dead_letters::list(
        db,
        &actor(Role::Viewer),
        &filter(|f| f.status = Some("gone".into())),
        None,
        None,
    )
    .await
    else {
        panic!("an unknown status is invalid");
    };
    assert_eq!(e.0[0].path, "status");
    let Err(ServiceError::Invalid(e)) = dead_letters::list(
        db,
        &actor(Role::Viewer),
        &filter(|f| f.from = Some("soon".into())),
        None,
        None,
    )
    .await
    else {
        panic!("a bad time is invalid");
    };
    assert_eq!(e.0[0].path, "from");
    let Err(ServiceError::Invalid(e)) =
        dead_letters::list(db, &actor(Role::Viewer), &all, Some(999_999), None).await
    else {
        panic!("a cursor that does not exist is invalid");
    };
    assert_eq!(e.0[0].path, "after");
}

async fn bulk_functions_take_dead_ones_in_id_order(db: &DatabaseConnection) {
    let ids = seed_seven(db).await;
    let flaky = Selection {
        ids: vec![],
        filter: filter(|f| f.launch_setting = Some(FLAKY.into())),
    };
    assert_eq!(dead_letters::count(db, &flaky).await.ok(), Some(4));
    // Pages in ascending id order from a cursor.
    let b1 = dead_letters::next_batch(db, &flaky, 0, 3)
        .await
        .expect("batch");
    assert_eq!(
        b1.iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![ids[0], ids[1], ids[3]]
    );
    let b2 = dead_letters::next_batch(db, &flaky, ids[3], 3)
        .await
        .expect("batch");
    assert_eq!(b2.iter().map(|m| m.id).collect::<Vec<_>>(), vec![ids[5]]);
    assert!(
        dead_letters::next_batch(db, &flaky, ids[5], 3)
            .await
            .expect("batch")
            .is_empty()
    );

    let batch: Vec<i64> = b1.iter().map(|m| m.id).collect();
    dead_letters::mark_replayed(db, &batch, "bob", Uuid::nil(), at(30))
        .await
        .expect("mark");
    dead_letters::mark_replayed(db, &batch[..1], "carol", Uuid::nil(), at(40))
        .await
        .expect("mark twice");
    let first = entity::Entity::find_by_id(ids[0])
        .one(db)
        .await
        .expect("read")
        .expect("row");
    assert_eq!(first.status, dead_letters::REPLAYED);
    assert_eq!(first.replayed_by.as_deref(), Some("carol"));
    assert_eq!(first.replayed_at, Some(at(40)));
    assert_eq!(first.replay_count, 2);
    // Replayed ones are no longer selected.
    assert_eq!(dead_letters::count(db, &flaky).await.ok(), Some(1));
    assert_eq!(
        dead_letters::next_batch(db, &flaky, 0, 10)
            .await
            .expect("batch")
            .iter()
            .map(|m| m.id)
            .collect::<Vec<_>>(),
        vec![ids[5]]
    );

    // By ids: exactly those, of them only the dead ones.
    let by_ids = Selection {
        ids: vec![ids[0], ids[2], ids[6]],
        filter: filter(|f| f.launch_setting = Some("ignored".into())),
    };
    assert_eq!(dead_letters::count(db, &by_ids).await.ok(), Some(2));
    assert_eq!(
        dead_letters::next_batch(db, &by_ids, 0, 10)
            .await
            .expect("batch")
            .iter()
            .map(|m| m.id)
            .collect::<Vec<_>>(),
        vec![ids[2], ids[6]]
    );
    assert_eq!(
        dead_letters::delete(db, &[ids[2], ids[6], 999_999])
            .await
            .ok(),
        Some(2)
    );
    assert_eq!(dead_letters::count(db, &by_ids).await.ok(), Some(0));
    assert_eq!(stored(db).await, 5);
    assert_eq!(dead_letters::delete(db, &[]).await.ok(), Some(0));

    // Everything dead, and the mistakes a selection can hold.
    assert_eq!(
        dead_letters::count(db, &Selection::default()).await.ok(),
        Some(2)
    );
    let Err(ServiceError::Invalid(e)) = dead_letters::count(
        db,
        &Selection {
            ids: vec![],
            filter: filter(|f| f.status = Some("replayed".into())),
        },
    )
    .await
    else {
        panic!("replayed ones cannot be selected");
    };
    assert_eq!(e.0[0].path, "filter.status");
    let Err(ServiceError::Invalid(e)) = dead_letters::next_batch(
        db,
        &Selection {
            ids: vec![],
            filter: filter(|f| f.to = Some("never".into())),
        },
        0,
        10,
    )
    .await
    else {
        panic!("a bad time is named");
    };
    assert_eq!(e.0[0].path, "filter.to");
    let Err(ServiceError::Invalid(e)) = dead_letters::count(
        db,
        &Selection {
            ids: (0..10_001).collect(),
            filter: DeadLetterFilter::default(),
        },
    )
    .await
    else {
        panic!("too many ids");
    };
    assert_eq!(e.0[0].path, "ids");
}

fn failure(ls: &str, message: &str, minute: i64, error_type: &str) -> failure_logs::ActiveModel {
    failure_logs::ActiveModel {
        launch_setting_id: Set(ls.into()),
        activation_id: Set(Uuid::nil()),
        host: Set("host-a".into()),
        application_id: Set("demo".into()),
        agent_id: Set("flaky".into()),
        error_type: Set(error_type.into()),
        message: Set(format!("{error_type} at {minute}")),
        details: Set(None),
        data_message_id: Set(Some(message.into())),
        attempt: Set(Some(i32::try_from(minute).unwrap_or(0))),
        occurred_at: Set(at(minute)),
        ..Default::default()
    }
}

async fn one_dead_letter_with_its_failure_history(db: &DatabaseConnection) {
    seed_catalog(db).await;
    let mut m = given_up(FLAKY, "demo.later", "Permanent", "m-1", r#"{"order":7}"#);
    m.headers
        .insert("x-am-parked".into(), json!("2030-01-01T00:00:03Z"));
    let binary = IncomingDeadLetter {
        headers: obj(json!({"x-am-launch-setting": "gone.ls"})),
        body: vec![0, 159, 146, 150],
        ..Default::default()
    };
    dead_letters::store(db, &names(), &[m, binary], at(5))
        .await
        .expect("store");
    failure_logs::Entity::insert_many([
        failure(FLAKY, "m-1", 1, "Timeout"),
        failure(FLAKY, "m-1", 2, "Permanent"),
        failure(FLAKY, "m-1", 3, "Permanent"),
        // Another message, and the same message id under another launch setting.
        failure(FLAKY, "m-2", 4, "Permanent"),
        failure(POISON, "m-1", 4, "Poison"),
    ])
    .exec(db)
    .await
    .expect("failures");
    let rows = entity::Entity::find().all(db).await.expect("rows");
    let id = rows
        .iter()
        .find(|r| r.message_id.is_some())
        .map(|r| r.id)
        .expect("stored");
    let d = dead_letters::get(db, &actor(Role::Viewer), id)
        .await
        .expect("detail");
    assert_eq!(d.letter.id, id);
    assert_eq!(d.letter.parked_at.as_deref(), Some("2030-01-01T00:00:03Z"));
    assert_eq!(d.body.encoding, BodyEncoding::Json);
    assert_eq!(d.body.text, "{\n  \"order\": 7\n}");
    assert_eq!(d.headers["x-am-last-error-type"], json!("Permanent"));
    assert_eq!(d.properties, json!({"correlation_id": "c-m-1"}));
    assert_eq!(d.content_type.as_deref(), Some("application/json"));
    let policy = d.policy.expect("the launch setting exists");
    assert_eq!(policy.policy, "dead-letter");
    assert!(!d.more_failures);
    assert_eq!(
        d.failures
            .iter()
            .map(|f| (f.attempt, f.error_type.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (Some(3), "Permanent"),
            (Some(2), "Permanent"),
            (Some(1), "Timeout")
        ]
    );
    assert!(d.failures.iter().all(|f| f.dead_letter == Some(id)));

    let other = rows
        .iter()
        .find(|r| r.message_id.is_none())
        .map(|r| r.id)
        .expect("stored");
    let d = dead_letters::get(db, &actor(Role::Viewer), other)
        .await
        .expect("detail");
    assert_eq!(d.body.encoding, BodyEncoding::Base64);
    assert_eq!(d.body.text, "AJ+Slg==");
    assert_eq!(d.policy, None);
    assert!(d.failures.is_empty());
    assert_eq!(d.properties, json!({}));
    assert!(
        d.letter.body_preview.contains("binary"),
        "{}",
        d.letter.body_preview
    );

    assert!(matches!(
        dead_letters::get(db, &actor(Role::Viewer), 999_999).await,
        Err(ServiceError::NotFound(_))
    ));
}
