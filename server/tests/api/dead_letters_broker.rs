//! Dead letters through the real RabbitMQ: the manager's consumer moves them from the
//! dead-letter queue into the database (a node's give-ups and the broker's own rejections),
//! and a replay puts them back on their launch setting's subscription as a fresh start, or
//! says why it could not. Every test has a broker prefix of its own and deletes its queues.

use agent_client::Topology;
use am_domain::{
    catalog::{DataQueueKind, MessageFilter},
    read::{dead_letters::Selection, operations::OperationRequest},
    wire::{self, Subscription, names::Names},
};
use am_services::{
    Services, Settings,
    dead_letters::{self, IncomingDeadLetter},
    entity::dead_letters as entity,
    health::BrokerStatus,
    operations::ReplayError,
    runtime::RuntimeConfig,
    testing::{Backend, TestDb},
};
use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties,
    options::{
        BasicGetOptions, BasicPublishOptions, BasicRejectOptions, ConfirmSelectOptions,
        ExchangeDeleteOptions, QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable, LongString},
};
use sea_orm::{DatabaseConnection, EntityTrait, PaginatorTrait};
use serde_json::Value;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const LS: &str = "demo.flaky.1";

fn amqp_url() -> String {
    std::env::var("AM_TEST_AMQP_URL").unwrap_or_else(|_| server::config::DEFAULT_AMQP_URL.into())
}

/// A test's corner of the broker.
struct Broker {
    prefix: String,
    conn: Connection,
    channel: Channel,
}

impl Broker {
    async fn new() -> Broker {
        let prefix = format!("dl-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let conn = Connection::connect(&amqp_url(), ConnectionProperties::default())
            .await
            .expect("the test broker is reachable");
        let channel = conn.create_channel().await.expect("channel");
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .expect("confirms");
        Broker {
            prefix,
            conn,
            channel,
        }
    }

    fn topology(&self) -> Topology {
        Topology::new(self.prefix.clone()).ephemeral(Duration::from_secs(60))
    }

    fn names(&self) -> Names {
        Names::new(self.prefix.clone())
    }

    fn address(&self) -> String {
        format!("{}.in", self.prefix)
    }

    /// The launch setting's subscription, as a node declares it (with the dead-letter queue,
    /// which the manager declares too when it connects).
    async fn subscription(&self) {
        self.topology()
            .declare_manager_side(&self.channel)
            .await
            .expect("manager side declared");
        let sub = Subscription {
            data_queue: "demo.later".into(),
            address: self.address(),
            kind: DataQueueKind::Topic,
            filter: MessageFilter::default(),
            delay: None,
        };
        let objects = self.topology().layout().launch_objects(
            LS,
            &sub,
            &Default::default(),
            &Default::default(),
        );
        self.topology()
            .declare_objects(&self.channel, &objects)
            .await
            .expect("subscription declared");
    }

    async fn publish(
        &self,
        exchange: &str,
        routing_key: &str,
        body: &[u8],
        props: BasicProperties,
    ) {
        let c = self
            .channel
            .basic_publish(
                exchange.into(),
                routing_key.into(),
                BasicPublishOptions::default(),
                body,
                props,
            )
            .await
            .expect("published")
            .await
            .expect("confirmed");
        assert!(c.is_ack());
    }

    async fn get(&self, queue: &str) -> Option<lapin::message::BasicGetMessage> {
        for _ in 0..50 {
            if let Some(m) = self
                .channel
                .basic_get(queue.into(), BasicGetOptions { no_ack: true })
                .await
                .expect("basic.get")
            {
                return Some(m);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        None
    }

    async fn finish(self) {
        let names = self.names();
        let channel = self.conn.create_channel().await.expect("channel");
        for q in [
            names.subscription(LS),
            names.dead_letter_queue(),
            names.reports_queue(),
            names.quarantine_queue(),
        ] {
            let _ = channel
                .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                .await;
        }
        for x in [self.address(), names.control_exchange()] {
            let _ = channel
                .exchange_delete(x.as_str().into(), ExchangeDeleteOptions::default())
                .await;
        }
        agent_client::close(&self.conn, 200, "test done").await;
    }
}

/// A manager's runtime (with its dead-letter consumer) on `db`, connected to the test broker.
async fn manager(
    broker: &Broker,
    db: &DatabaseConnection,
    stop: &CancellationToken,
) -> tokio::task::JoinSet<()> {
    let status = BrokerStatus::default();
    let (tx, link) = server::broker::link();
    let mut tasks = server::runtime::spawn(
        &Services::new(db.clone(), BrokerStatus::default(), Settings::default())
            .with_runtime(RuntimeConfig::new(&broker.prefix)),
        broker.topology(),
        link,
        stop.clone(),
    );
    tasks.spawn(server::broker::supervise(
        agent_client::BrokerAddresses::parse(&amqp_url()).expect("address"),
        broker.topology(),
        status,
        tx,
        Default::default(),
        stop.clone(),
    ));
    tasks
}

/// Stops the manager and waits for its tasks.
async fn stop_manager(stop: CancellationToken, mut tasks: tokio::task::JoinSet<()>) {
    stop.cancel();
    while tasks.join_next().await.is_some() {}
}

async fn rows(db: &DatabaseConnection, n: u64) -> Vec<entity::Model> {
    for _ in 0..100 {
        if entity::Entity::find().count(db).await.unwrap_or(0) >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    entity::Entity::find().all(db).await.expect("rows")
}

fn text(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s))
}

/// The headers a node writes when it gives up on a message.
fn given_up_headers() -> FieldTable {
    let mut h = FieldTable::default();
    for (k, v) in [
        ("tenant", "acme"),
        (wire::DL_LAUNCH_SETTING_HEADER, LS),
        (wire::DL_DATA_QUEUE_HEADER, "demo.later"),
        (wire::DL_ERROR_TYPE_HEADER, "Permanent"),
        (wire::DL_ERROR_MESSAGE_HEADER, "no such order"),
        (wire::FIRST_FAILURE_HEADER, "2030-01-01T00:00:00Z"),
        (wire::DL_LAST_FAILURE_HEADER, "2030-01-01T00:00:09Z"),
        (wire::DL_HOST_HEADER, "host-a"),
        (wire::PARKED_HEADER, "2030-01-01T00:00:04Z"),
    ] {
        h.insert(k.into(), text(v));
    }
    h.insert(wire::ATTEMPT_HEADER.into(), AMQPValue::LongLongInt(3));
    h.insert(wire::DL_ATTEMPTS_HEADER.into(), AMQPValue::LongLongInt(3));
    h
}

fn header<'a>(props: &'a BasicProperties, name: &str) -> Option<&'a AMQPValue> {
    props.headers().as_ref().and_then(|h| h.inner().get(name))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_letter_goes_into_the_database_and_back_to_its_subscription() {
    let broker = Broker::new().await;
    let test_db = TestDb::new(Backend::Sqlite).await;
    let db = &test_db.db;
    let stop = CancellationToken::new();
    let tasks = manager(&broker, db, &stop).await;
    broker.subscription().await;
    let dlq = broker.names().dead_letter_queue();
    let props = BasicProperties::default()
        .with_message_id("order-7".into())
        .with_content_type("application/json".into())
        .with_correlation_id("corr-7".into())
        .with_delivery_mode(2)
        .with_headers(given_up_headers());
    // The same message twice (as a redelivery would bring it) is stored once.
    for _ in 0..2 {
        broker
            .publish("", &dlq, br#"{"order":7}"#, props.clone())
            .await;
    }
    let stored = rows(db, 1).await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(rows(db, 1).await.len(), 1, "the copy was not stored twice");
    let row = &stored[0];
    assert_eq!(row.launch_setting_id.as_deref(), Some(LS));
    assert_eq!(row.error_type.as_deref(), Some("Permanent"));
    assert_eq!(row.attempts, 3);
    assert_eq!(row.message_id.as_deref(), Some("order-7"));
    assert_eq!(row.status, dead_letters::DEAD);
    assert_eq!(
        row.properties
            .as_ref()
            .and_then(|p| p.get("correlation_id")),
        Some(&Value::from("corr-7"))
    );

    // Replayed through the bulk functions' path.
    let batch = dead_letters::next_batch(db, &Selection::default(), 0, 100)
        .await
        .expect("batch");
    assert_eq!(batch.len(), 1);
    let results = server::dead_letter_messages::publish_batch(
        &broker.channel,
        &broker.names(),
        &batch,
        "alice",
    )
    .await;
    assert_eq!(results, vec![Ok(())]);
    let got = broker
        .get(&broker.names().subscription(LS))
        .await
        .expect("the replayed message reached the subscription");
    assert_eq!(got.delivery.data, br#"{"order":7}"#);
    let p = &got.delivery.properties;
    assert_eq!(p.message_id().as_ref().map(|s| s.as_str()), Some("order-7"));
    assert_eq!(
        p.content_type().as_ref().map(|s| s.as_str()),
        Some("application/json")
    );
    assert_eq!(
        p.correlation_id().as_ref().map(|s| s.as_str()),
        Some("corr-7")
    );
    assert_eq!(*p.delivery_mode(), Some(2));
    assert_eq!(
        header(p, wire::ATTEMPT_HEADER),
        Some(&AMQPValue::LongLongInt(1))
    );
    assert_eq!(header(p, wire::REPLAYED_BY_HEADER), Some(&text("alice")));
    assert!(header(p, wire::REPLAYED_AT_HEADER).is_some());
    assert_eq!(
        header(p, wire::replay::REPLAY_HEADER),
        Some(&text(&format!("{}.1", row.id))),
        "the first replay of this dead letter: every outcome names it"
    );
    assert_eq!(header(p, "tenant"), Some(&text("acme")));
    for gone in [
        wire::DL_LAUNCH_SETTING_HEADER,
        wire::DL_ERROR_TYPE_HEADER,
        wire::DL_ATTEMPTS_HEADER,
        wire::DL_HOST_HEADER,
        wire::PARKED_HEADER,
        wire::FIRST_FAILURE_HEADER,
    ] {
        assert_eq!(header(p, gone), None, "{gone} is dropped");
    }
    dead_letters::mark_replayed(
        db,
        &[row.id],
        "alice",
        uuid::Uuid::nil(),
        chrono::Utc::now(),
    )
    .await
    .expect("marked");
    assert_eq!(
        dead_letters::count(db, &Selection::default()).await.ok(),
        Some(0)
    );
    stop_manager(stop, tasks).await;
    broker.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_the_broker_dead_letters_names_its_launch_setting() {
    let broker = Broker::new().await;
    let test_db = TestDb::new(Backend::Sqlite).await;
    let db = &test_db.db;
    let stop = CancellationToken::new();
    let tasks = manager(&broker, db, &stop).await;
    broker.subscription().await;
    // A producer's message on the data exchange, rejected by a consumer without requeue: the
    // subscription queue dead-letters it to the dead-letter queue itself, with `x-death` only.
    broker
        .publish(
            &broker.address(),
            "",
            b"kills nodes",
            BasicProperties::default().with_message_id("m-9".into()),
        )
        .await;
    let m = broker
        .channel
        .basic_get(
            broker.names().subscription(LS).as_str().into(),
            BasicGetOptions { no_ack: false },
        )
        .await
        .expect("basic.get")
        .expect("the message is in the subscription");
    m.delivery
        .reject(BasicRejectOptions { requeue: false })
        .await
        .expect("rejected");
    let stored = rows(db, 1).await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    let row = &stored[0];
    assert_eq!(row.launch_setting_id.as_deref(), Some(LS));
    assert_eq!(row.error_type.as_deref(), Some("broker:rejected"));
    assert_eq!(row.message_id.as_deref(), Some("m-9"));
    assert_eq!(row.body, b"kills nodes");
    assert!(row.headers.get("x-death").is_some(), "{}", row.headers);
    stop_manager(stop, tasks).await;
    broker.finish().await;
}

fn model(id: i64, ls: Option<&str>) -> entity::Model {
    entity::Model {
        id,
        dedupe_key: format!("k{id}"),
        launch_setting_id: ls.map(str::to_owned),
        data_queue_id: None,
        message_id: Some(format!("m-{id}")),
        routing_key: None,
        headers: serde_json::json!({}),
        body: b"x".to_vec(),
        content_type: None,
        error_type: None,
        error_message: None,
        attempts: 1,
        first_failure_at: None,
        last_failure_at: None,
        host: None,
        received_at: chrono::Utc::now(),
        status: dead_letters::DEAD.into(),
        park_until: None,
        replay_count: 0,
        replayed_at: None,
        replayed_by: None,
        properties: None,
        forward_to: None,
        forward_next_at: None,
        forwarded_at: None,
        forward_attempts: 0,
        forward_error: None,
        replay_operation: None,
        replay_result: None,
        replay_result_at: None,
        replay_error: None,
        replay_dead_letter: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_subscription_is_an_error_not_a_hang() {
    let broker = Broker::new().await;
    broker.subscription().await;
    let rows = vec![
        model(1, Some("no.such.ls")),
        model(2, None),
        model(3, Some(LS)),
    ];
    let results = tokio::time::timeout(
        Duration::from_secs(10),
        server::dead_letter_messages::publish_batch(&broker.channel, &broker.names(), &rows, "bob"),
    )
    .await
    .expect("the publisher answers for every row");
    assert_eq!(results.len(), 3);
    let e1 = results[0].as_ref().expect_err("no subscription");
    assert_eq!(
        e1,
        &ReplayError::NoSubscription(broker.names().subscription("no.such.ls"))
    );
    assert!(e1.to_string().contains("does not exist"), "{e1}");
    let e2 = results[1].as_ref().expect_err("no launch setting");
    assert_eq!(e2, &ReplayError::NoLaunchSetting(2));
    assert!(e2.to_string().contains("no launch setting"), "{e2}");
    assert_eq!(results[2], Ok(()));
    // Only the good one arrived.
    let got = broker
        .get(&broker.names().subscription(LS))
        .await
        .expect("delivered");
    assert_eq!(
        got.delivery
            .properties
            .message_id()
            .as_ref()
            .map(|s| s.as_str()),
        Some("m-3")
    );
    // The channel is still usable after a returned message.
    assert_eq!(
        server::dead_letter_messages::publish_batch(
            &broker.channel,
            &broker.names(),
            &rows[2..],
            "bob"
        )
        .await,
        vec![Ok(())]
    );
    broker.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_replay_runs_through_the_broker_publisher() {
    let broker = Broker::new().await;
    broker.subscription().await;
    let test_db = TestDb::new(Backend::Sqlite).await;
    let db = &test_db.db;
    let stop = CancellationToken::new();
    let (tx, link) = server::broker::link();
    let supervisor = tokio::spawn(server::broker::supervise(
        agent_client::BrokerAddresses::parse(&amqp_url()).expect("address"),
        broker.topology(),
        BrokerStatus::default(),
        tx,
        Default::default(),
        stop.clone(),
    ));
    let letters: Vec<IncomingDeadLetter> = (0..3)
        .map(|i| IncomingDeadLetter {
            message_id: Some(format!("bulk-{i}")),
            headers: serde_json::from_value(serde_json::json!({ "x-am-launch-setting": LS }))
                .expect("headers"),
            body: format!("{{\"i\":{i}}}").into_bytes(),
            ..Default::default()
        })
        .collect();
    dead_letters::store(db, &broker.names(), &letters, chrono::Utc::now())
        .await
        .expect("stored");
    let services = Services::new(db.clone(), BrokerStatus::default(), Settings::default())
        .with_runtime(RuntimeConfig::new(&broker.prefix));
    let who = am_services::Principal::cli();
    let op = am_services::operations::start(
        &services,
        &who,
        OperationRequest::ReplayDeadLetters {
            selection: Selection::default(),
            canary: None,
            rate_per_second: None,
        },
    )
    .await
    .expect("started");
    let publisher = server::jobs::BrokerPublisher::new(link, broker.names(), stop.clone());
    let end = tokio::time::timeout(
        Duration::from_secs(20),
        am_services::operations::run(db, &services.runtime, op.id, &publisher),
    )
    .await
    .expect("the operation ends")
    .expect("it runs");
    assert!(
        matches!(end, am_services::operations::RunEnd::Finished("succeeded")),
        "{end:?}"
    );
    let op = am_services::operations::get(db, &who, op.id)
        .await
        .expect("operation");
    assert_eq!(
        (op.status.as_str(), op.done, op.failed),
        ("succeeded", 3, 0)
    );
    for _ in 0..3 {
        assert!(broker.get(&broker.names().subscription(LS)).await.is_some());
    }
    stop.cancel();
    let _ = supervisor.await;
    broker.finish().await;
}
