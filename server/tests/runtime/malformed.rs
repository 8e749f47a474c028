//! Malformed AMQP messages on the manager's queues, on PostgreSQL (which refuses NUL
//! characters in text): reports no version of us can read, or that the database cannot store,
//! are dropped and counted without stopping the consumer, while a report of a later release is
//! read; dead letters of any shape are kept.

use crate::harness::{CatalogBuilder, SHORT, World, amqp_url, eventually};
use am_domain::wire::{self, Heartbeat, ToManager};
use am_services::{
    entity::{dead_letters, nodes},
    testing::Backend,
};
use chrono::Utc;
use lapin::{
    BasicProperties, ConnectionProperties,
    options::{BasicPublishOptions, ConfirmSelectOptions},
    types::{AMQPValue, FieldTable},
};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};

fn heartbeat(host: &str) -> Vec<u8> {
    wire::encode(&ToManager::Heartbeat(Heartbeat {
        application: "demo".into(),
        host: host.into(),
        capacity: 4,
        running: vec![],
        load: Some(0.0),
        dropped_reports: 0,
        quarantined: 0,
        at: Utc::now(),
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_reports_and_dead_letters_never_stop_a_consumer() {
    let w = World::new(Backend::Postgres).await;
    w.seed(CatalogBuilder::new(&w, &["h-ok"]).build()).await;
    let m = w.manager().await;
    eventually("the manager connected", SHORT, || async {
        m.broker_up().then_some(())
    })
    .await;
    let names = w.config().names;
    let conn = agent_client::connect(&amqp_url(), ConnectionProperties::default())
        .await
        .expect("the test broker is reachable");
    let ch = conn.create_channel().await.expect("channel");
    ch.confirm_select(ConfirmSelectOptions::default())
        .await
        .expect("confirms");
    let publish = |queue: String, body: Vec<u8>, props: BasicProperties| {
        let ch = ch.clone();
        async move {
            ch.basic_publish(
                "".into(),
                queue.as_str().into(),
                BasicPublishOptions::default(),
                &body,
                props,
            )
            .await
            .expect("published")
            .await
            .expect("confirmed");
        }
    };

    // Reports: unreadable bytes, JSON of the wrong shape, a megabyte of nothing, and a
    // heartbeat the database cannot store (a NUL in the host name); then a good one.
    let bad_reports: Vec<Vec<u8>> = vec![
        b"not json".to_vec(),
        b"\xff\xfe\x00".to_vec(),
        b"{}".to_vec(),
        b"[1, 2, 3]".to_vec(),
        br#"{"type": "heartbeat", "host": 7}"#.to_vec(),
        vec![b'x'; 1024 * 1024],
        heartbeat("h\u{0}nul"),
    ];
    let queue = names.reports_queue();
    for body in &bad_reports {
        publish(queue.clone(), body.clone(), BasicProperties::default()).await;
    }
    // Each dropped before the good one is sent: the unstorable heartbeat is then alone in its
    // batch, which once blocked the queue for good (only batches of several were split).
    eventually("every bad report dropped", SHORT, || async {
        (m.metric(|x| &x.malformed_reports) == bad_reports.len() as u64).then_some(())
    })
    .await;
    // The good one is of a later release: a newer version, fields this manager does not know
    // at every depth. It is read as far as it is known.
    let mut later: serde_json::Value =
        serde_json::from_slice(&heartbeat("h-ok")).expect("a heartbeat is JSON");
    later["v"] = serde_json::json!(wire::PROTOCOL_VERSION + 6);
    later["x_later"] = serde_json::json!({"nested": [1]});
    later["running"] = serde_json::json!([{
        "launch_setting": "demo.later.1",
        "activations": [],
        "counters": {"processed": 1, "failed": 0, "retried": 0, "dead_lettered": 0, "x_later": 2},
        "x_later": {"deeper": {}}
    }]);
    publish(
        queue.clone(),
        later.to_string().into_bytes(),
        BasicProperties::default(),
    )
    .await;
    eventually(
        "the good heartbeat applied after the bad ones",
        SHORT,
        || async {
            nodes::Entity::find()
                .filter(nodes::Column::Host.eq("h-ok"))
                .one(&w.db)
                .await
                .ok()
                .flatten()
        },
    )
    .await;
    assert_eq!(
        m.metric(|x| &x.malformed_reports),
        bad_reports.len() as u64,
        "each unreadable or unstorable report is counted once"
    );

    // Dead letters: a body that is not text, headers with NUL characters, nested and odd
    // values, no message id. Every one is kept for an operator.
    let mut headers = FieldTable::default();
    headers.insert(
        "x-am-launch-setting".into(),
        AMQPValue::LongString("nope\u{0}".into()),
    );
    headers.insert(
        "x-am-error-type".into(),
        AMQPValue::LongString("Bad\u{0}Type".into()),
    );
    headers.insert(
        "x-weird".into(),
        AMQPValue::FieldArray(vec![AMQPValue::Void].into()),
    );
    headers.insert("x-number".into(), AMQPValue::Double(-0.0));
    let dlq = names.dead_letter_queue();
    publish(
        dlq.clone(),
        b"\xff\x00 not text".to_vec(),
        BasicProperties::default().with_headers(headers),
    )
    .await;
    publish(dlq.clone(), b"{}".to_vec(), BasicProperties::default()).await;
    publish(
        dlq.clone(),
        b"plain".to_vec(),
        BasicProperties::default().with_message_id("m-1".into()),
    )
    .await;
    let stored = eventually("the dead letters stored", SHORT, || async {
        let n = dead_letters::Entity::find().count(&w.db).await.ok()?;
        (n >= 3).then_some(n)
    })
    .await;
    assert_eq!(stored, 3, "every dead letter is kept, once");

    agent_client::close(&conn, 200, "done").await;
    m.stop().await;
    w.finish(&[]).await;
}
