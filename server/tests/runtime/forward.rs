//! Dead-letter policy `forward` on the real RabbitMQ: a dead letter of such a launch setting
//! is kept by the manager and a copy reaches the exchange the launch setting names, once, even
//! when that exchange is created only after the dead letter arrived; until then the Broker page
//! says the exchange is missing and the dead letter says why its copy waits.

use crate::harness::{SHORT, eventually};
use crate::topology::Fixture;
use am_domain::{topology::DriftState, wire};
use am_services::{Principal, entity::dead_letters, testing::Backend, topology as rules};
use lapin::{
    BasicProperties, ExchangeKind,
    options::{
        BasicGetOptions, BasicPublishOptions, ExchangeDeclareOptions, ExchangeDeleteOptions,
        QueueBindOptions, QueueDeclareOptions, QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable, LongString},
};
use sea_orm::EntityTrait;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_dead_letter_reaches_an_exchange_created_later_once() {
    let f = Fixture::new(Backend::Sqlite).await;
    let errors = f.exchange("errors");
    let ls = "t.poison";
    f.seed(
        f.catalog()
            .ls(
                ls,
                "poison",
                "stream",
                json!({ "dead_letter": { "policy": "forward", "forward_to": errors } }),
            )
            .build(),
    )
    .await;
    let manager = f.w.manager().await;
    f.reconciled().await;

    // What a node publishes when it gives up on a message.
    let mut headers = FieldTable::default();
    for (k, v) in [
        (wire::DL_LAUNCH_SETTING_HEADER, ls),
        (wire::DL_ERROR_TYPE_HEADER, "Permanent"),
        ("tenant", "acme"),
    ] {
        headers.insert(k.into(), AMQPValue::LongString(LongString::from(v)));
    }
    let dlq = f.topology.names().dead_letter_queue();
    let confirm = f
        .channel
        .basic_publish(
            "".into(),
            dlq.as_str().into(),
            BasicPublishOptions::default(),
            b"order 7",
            BasicProperties::default()
                .with_message_id("order-7".into())
                .with_delivery_mode(2)
                .with_headers(headers),
        )
        .await
        .expect("publish")
        .await
        .expect("confirm");
    assert!(confirm.is_ack());

    // Kept, and its copy waits for an exchange nobody created yet.
    let row = eventually("the copy fails for want of its exchange", SHORT, || async {
        dead_letters::Entity::find()
            .one(&f.w.db)
            .await
            .ok()
            .flatten()
            .filter(|r| r.forward_error.is_some())
    })
    .await;
    assert_eq!(row.forward_to.as_deref(), Some(errors.as_str()));
    assert!(row.forwarded_at.is_none());
    assert!(
        row.forward_error
            .as_deref()
            .is_some_and(|e| e.contains("does not exist")),
        "{row:?}"
    );
    // The Broker page says so.
    server::runtime::topology::sample_once(&f.w.db, &f.conn, &manager.services.broker_depths)
        .await
        .expect("sampled");
    let view = rules::view(&f.w.db, &Principal::cli(), &manager.services.broker_depths)
        .await
        .expect("broker view");
    let flagged = view
        .drift
        .iter()
        .find(|d| d.name == errors)
        .expect("the missing forward exchange is flagged");
    assert_eq!(flagged.state, DriftState::Missing);
    assert!(flagged.detail.contains(ls), "{flagged:?}");

    // Its owner creates it: the copy arrives, once.
    let ch = f.conn.create_channel().await.expect("channel");
    ch.exchange_declare(
        errors.as_str().into(),
        ExchangeKind::Direct,
        ExchangeDeclareOptions::default(),
        FieldTable::default(),
    )
    .await
    .expect("exchange");
    let inbox = format!("{errors}.inbox");
    ch.queue_declare(
        inbox.as_str().into(),
        QueueDeclareOptions::default(),
        FieldTable::default(),
    )
    .await
    .expect("queue");
    ch.queue_bind(
        inbox.as_str().into(),
        errors.as_str().into(),
        ls.into(),
        QueueBindOptions::default(),
        FieldTable::default(),
    )
    .await
    .expect("bind");
    let row = eventually("the copy is forwarded", Duration::from_secs(30), || async {
        dead_letters::Entity::find_by_id(row.id)
            .one(&f.w.db)
            .await
            .ok()
            .flatten()
            .filter(|r| r.forwarded_at.is_some())
    })
    .await;
    assert!(
        row.forward_error.is_none() && row.forward_next_at.is_none(),
        "{row:?}"
    );
    let got = ch
        .basic_get(inbox.as_str().into(), BasicGetOptions { no_ack: true })
        .await
        .expect("basic.get")
        .expect("the copy is in the owner's queue");
    assert_eq!(got.delivery.data, b"order 7");
    let h = got.delivery.properties.headers().clone().expect("headers");
    // The failure headers travel with the copy: the receiver learns why it failed.
    assert!(h.inner().contains_key(wire::DL_ERROR_TYPE_HEADER), "{h:?}");
    assert_eq!(
        got.delivery
            .properties
            .message_id()
            .as_ref()
            .map(|s| s.as_str()),
        Some("order-7")
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let again = ch
        .basic_get(inbox.as_str().into(), BasicGetOptions { no_ack: true })
        .await
        .expect("basic.get");
    assert!(again.is_none(), "the copy was sent twice");

    let _ = ch
        .queue_delete(inbox.as_str().into(), QueueDeleteOptions::default())
        .await;
    let _ = ch
        .exchange_delete(errors.as_str().into(), ExchangeDeleteOptions::default())
        .await;
    manager.stop().await;
    f.finish().await;
}
