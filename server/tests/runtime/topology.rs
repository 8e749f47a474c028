//! The broker reconciler on the real RabbitMQ: a producer may publish the moment a data queue
//! is in the catalog, and every catalog change (filter, ASAP ↔ Delayed, delay, agent moved,
//! launch setting or data queue deleted) neither loses nor doubles a message. Every test counts
//! each message it published.

use crate::harness::{CatalogBuilder, SHORT, World, eventually, within};
use agent_client::Topology;
use am_domain::{catalog::Catalog, wire};
use am_services::{Principal, testing::Backend, topology as rules};
use lapin::{
    BasicProperties, Channel, Connection,
    options::{
        BasicAckOptions, BasicGetOptions, BasicPublishOptions, ConfirmSelectOptions,
        ExchangeDeleteOptions, QueueDeclareOptions, QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable, LongString},
};
use serde_json::json;
use server::runtime::topology::pass;
use std::time::Duration;

/// Retries fast enough that a leaving subscription's hold (its longest retry delay) is short.
fn fast_retry() -> serde_json::Value {
    json!({ "retry": { "initial_delay": "100ms", "multiplier": 2.0, "max_delay": "200ms", "max_deliveries": 3 } })
}

pub(crate) struct Fixture {
    pub(crate) w: World,
    pub(crate) topology: Topology,
    pub(crate) conn: Connection,
    pub(crate) channel: Channel,
}

impl Fixture {
    pub(crate) async fn new(backend: Backend) -> Fixture {
        let w = World::new(backend).await;
        let topology = Topology::new(w.prefix.clone()).ephemeral(Duration::from_secs(120));
        let conn = crate::harness::connect().await.expect("broker");
        let channel = conn.create_channel().await.expect("channel");
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .expect("confirms");
        Fixture {
            w,
            topology,
            conn,
            channel,
        }
    }

    pub(crate) fn catalog(&self) -> CatalogBuilder {
        CatalogBuilder::new(&self.w, &["h1"])
    }

    /// The exchange of data queue `name` (unique to this test).
    pub(crate) fn exchange(&self, name: &str) -> String {
        format!("{}.{name}", self.w.prefix)
    }

    pub(crate) async fn seed(&self, catalog: Catalog) {
        am_services::catalog::import(&self.w.db, &Principal::cli(), catalog)
            .await
            .expect("valid catalog");
    }

    /// One reconciliation pass, as the manager runs it.
    pub(crate) async fn reconcile(&self) -> server::runtime::topology::PassReport {
        let report = within(
            "a reconciliation pass",
            pass(&self.w.db, &self.conn, &self.topology, "test", false),
        )
        .await
        .expect("pass")
        .expect("the lease is free");
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        report
    }

    /// Publishes `n` messages numbered from `from` with `headers`; each must be routed.
    pub(crate) async fn publish(
        &self,
        exchange: &str,
        from: usize,
        n: usize,
        headers: &[(&str, &str)],
    ) {
        let mut table = FieldTable::default();
        for (k, v) in headers {
            table.insert((*k).into(), AMQPValue::LongString(LongString::from(*v)));
        }
        for i in from..from + n {
            let confirm = within(&format!("the confirm of m{i} to {exchange}"), async {
                self.channel
                    .basic_publish(
                        exchange.into(),
                        "".into(),
                        BasicPublishOptions {
                            mandatory: true,
                            ..BasicPublishOptions::default()
                        },
                        format!("m{i}").as_bytes(),
                        BasicProperties::default()
                            .with_delivery_mode(2)
                            .with_headers(table.clone()),
                    )
                    .await
                    .expect("publish")
                    .await
                    .expect("confirm")
            })
            .await;
            assert!(confirm.is_ack());
            assert!(
                confirm.take_message().is_none(),
                "message m{i} to {exchange} was routed nowhere"
            );
        }
    }

    pub(crate) async fn depth(&self, queue: &str) -> Option<u32> {
        within(&format!("the depth of {queue}"), async {
            let ch = self.conn.create_channel().await.expect("channel");
            let q = ch
                .queue_declare(
                    queue.into(),
                    QueueDeclareOptions {
                        passive: true,
                        ..QueueDeclareOptions::default()
                    },
                    FieldTable::default(),
                )
                .await
                .ok()?;
            let _ = ch.close(200, "".into()).await;
            Some(q.message_count())
        })
        .await
    }

    /// Waits until a reconciler has applied the current catalog.
    pub(crate) async fn reconciled(&self) {
        eventually("the broker reconciled to the catalog", SHORT, || async {
            rules::revisions(&self.w.db)
                .await
                .ok()?
                .in_sync()
                .then_some(())
        })
        .await;
    }

    /// Waits until `queue` holds exactly `n` messages.
    pub(crate) async fn expect_depth(&self, queue: &str, n: u32) {
        eventually(&format!("{n} messages in {queue}"), SHORT, || async {
            (self.depth(queue).await == Some(n)).then_some(())
        })
        .await;
    }

    /// Takes every message of `queue`: bodies and the removal reason header, sorted.
    pub(crate) async fn drain(&self, queue: &str) -> Vec<(String, Option<String>)> {
        let mut out = Vec::new();
        while let Some(m) = within(
            &format!("a basic.get from {queue}"),
            self.channel
                .basic_get(queue.into(), BasicGetOptions::default()),
        )
        .await
        .expect("basic.get")
        {
            let reason = m
                .delivery
                .properties
                .headers()
                .as_ref()
                .and_then(|h| h.inner().get(wire::REMOVED_REASON_HEADER).cloned())
                .and_then(|v| match v {
                    AMQPValue::LongString(s) => Some(s.to_string()),
                    _ => None,
                });
            out.push((
                String::from_utf8_lossy(&m.delivery.data).into_owned(),
                reason,
            ));
            m.delivery
                .acker
                .ack(BasicAckOptions::default())
                .await
                .expect("ack");
        }
        out.sort();
        out
    }

    pub(crate) fn sub(&self, ls: &str) -> String {
        self.topology.names().subscription(ls)
    }

    /// Deletes everything the reconciler applied for this test.
    pub(crate) async fn finish(self) {
        within("the clean-up of the broker", self.clean_broker()).await;
        agent_client::close(&self.conn, 200, "done").await;
        self.w.finish(&[]).await;
    }

    async fn clean_broker(&self) {
        if let Ok((applied, _)) = rules::applied(&self.w.db).await {
            let queues = applied
                .objects
                .queues
                .keys()
                .chain(applied.leaving.keys())
                .cloned();
            for q in queues {
                if let Ok(ch) = self.conn.create_channel().await {
                    let _ = ch
                        .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                        .await;
                }
            }
            for e in applied.objects.exchanges.keys() {
                if let Ok(ch) = self.conn.create_channel().await {
                    let _ = ch
                        .exchange_delete(e.as_str().into(), ExchangeDeleteOptions::default())
                        .await;
                }
            }
        }
    }
}

pub(crate) fn bodies(from: usize, n: usize) -> Vec<String> {
    let mut v: Vec<String> = (from..from + n).map(|i| format!("m{i}")).collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_producer_can_publish_before_any_node_and_nothing_is_dropped() {
    let f = Fixture::new(Backend::Sqlite).await;
    let spare = f.exchange("spare");
    let mut c = f
        .catalog()
        .ls(
            "t.acme",
            "echo",
            "stream",
            json!({ "filter": { "headers": { "tenant": "acme" } } }),
        )
        .ls("t.all", "echo", "stream", json!({}))
        // Disabled: its queue stays bound and messages wait in the broker for it.
        .ls("t.off", "echo", "stream", json!({ "enabled": false }))
        .build();
    c.data_queues.push(
        serde_json::from_value(json!({ "id": "spare", "kind": "topic", "address": spare }))
            .expect("data queue"),
    );
    f.seed(c).await;
    f.reconcile().await;

    f.publish(&f.w.address, 0, 10, &[("tenant", "acme")]).await;
    f.publish(&f.w.address, 10, 5, &[("tenant", "globex")])
        .await;
    // A data queue no launch setting consumes keeps what is published to it.
    f.publish(&spare, 100, 3, &[]).await;
    f.expect_depth(&f.sub("t.acme"), 10).await;
    f.expect_depth(&f.sub("t.all"), 15).await;
    f.expect_depth(&f.sub("t.off"), 15).await;
    f.expect_depth(&f.topology.names().unrouted("spare"), 3)
        .await;
    f.expect_depth(&f.topology.names().unrouted("events"), 0)
        .await;

    // Nothing to change: a second pass changes nothing.
    assert!(!f.reconcile().await.changed);
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_filter_loses_and_doubles_nothing_in_flight() {
    let f = Fixture::new(Backend::Sqlite).await;
    let with = |filter: serde_json::Value| {
        f.catalog()
            .ls(
                "t.f",
                "echo",
                "stream",
                json!({ "filter": { "headers": filter } }),
            )
            .build()
    };
    f.seed(with(json!({ "tenant": "acme" }))).await;
    f.reconcile().await;
    // Every message matches both the old and the new filter, and keeps coming during the
    // change: each must be in the subscription exactly once.
    let producer = async {
        for batch in 0..20 {
            f.publish(
                &f.w.address,
                batch * 10,
                10,
                &[("tenant", "acme"), ("kind", "invoice")],
            )
            .await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let change = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        f.seed(with(json!({ "tenant": "acme", "kind": "invoice" })))
            .await;
        f.reconcile().await;
    };
    tokio::join!(producer, change);
    f.expect_depth(&f.sub("t.f"), 200).await;
    let got: Vec<String> = f
        .drain(&f.sub("t.f"))
        .await
        .into_iter()
        .map(|(b, _)| b)
        .collect();
    assert_eq!(got, bodies(0, 200));
    // The old binding is gone: a message only the old filter matched is not taken.
    f.publish(&f.w.address, 500, 1, &[("tenant", "acme")]).await;
    f.expect_depth(&f.topology.names().unrouted("events"), 1)
        .await;
    f.expect_depth(&f.sub("t.f"), 0).await;
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asap_to_delayed_and_back_and_a_changed_delay_keep_every_message() {
    let f = Fixture::new(Backend::Sqlite).await;
    let build = |mode: &str, delay: &str| {
        let mut c = f
            .catalog()
            .ls("t.d", "echo", "stream", json!({ "stream_mode": mode }))
            .build();
        c.data_queues[0].delay = Some(delay.parse().expect("duration"));
        c
    };
    let names = f.topology.names().clone();
    f.seed(build("asap", "2s")).await;
    f.reconcile().await;
    f.publish(&f.w.address, 0, 5, &[]).await;
    f.expect_depth(&f.sub("t.d"), 5).await;

    // ASAP → Delayed: new messages wait in the delay queue, then arrive.
    f.seed(build("delayed", "2s")).await;
    f.reconcile().await;
    f.publish(&f.w.address, 5, 5, &[]).await;
    let delay_2s = names.delay_queue("t.d", Duration::from_secs(2));
    assert!(f.depth(&delay_2s).await.is_some(), "no delay queue");
    f.expect_depth(&f.sub("t.d"), 10).await;

    // The delay changes while those 5 wait: the new delay gets a new queue, the old one
    // drains into the subscription and is deleted once empty.
    f.seed(build("delayed", "1s")).await;
    f.reconcile().await;
    f.publish(&f.w.address, 10, 5, &[]).await;
    let delay_1s = names.delay_queue("t.d", Duration::from_secs(1));
    f.expect_depth(&f.sub("t.d"), 15).await;
    eventually("the old delay queue is deleted", SHORT, || async {
        f.reconcile().await;
        f.depth(&delay_2s).await.is_none().then_some(())
    })
    .await;

    // Delayed → ASAP with messages waiting: they still arrive, new ones arrive at once.
    f.publish(&f.w.address, 15, 5, &[]).await;
    f.seed(build("asap", "1s")).await;
    f.reconcile().await;
    f.publish(&f.w.address, 20, 5, &[]).await;
    f.expect_depth(&f.sub("t.d"), 25).await;
    eventually("the delay queue is deleted", SHORT, || async {
        f.reconcile().await;
        f.depth(&delay_1s).await.is_none().then_some(())
    })
    .await;
    let got: Vec<String> = f
        .drain(&f.sub("t.d"))
        .await
        .into_iter()
        .map(|(b, _)| b)
        .collect();
    assert_eq!(got, bodies(0, 25));
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_launch_setting_hands_its_messages_to_the_dead_letter_queue() {
    let f = Fixture::new(Backend::Sqlite).await;
    f.seed(
        f.catalog()
            .ls("t.gone", "echo", "stream", fast_retry())
            .ls("t.stays", "echo", "stream", json!({}))
            .build(),
    )
    .await;
    f.reconcile().await;
    f.publish(&f.w.address, 0, 7, &[]).await;
    f.expect_depth(&f.sub("t.gone"), 7).await;

    f.seed(
        f.catalog()
            .ls("t.stays", "echo", "stream", json!({}))
            .build(),
    )
    .await;
    f.reconcile().await;
    // Unbound at once: new messages only reach the launch setting that stays.
    f.publish(&f.w.address, 7, 3, &[]).await;
    f.expect_depth(&f.sub("t.stays"), 10).await;
    eventually("the removed subscription is deleted", SHORT, || async {
        f.reconcile().await;
        f.depth(&f.sub("t.gone")).await.is_none().then_some(())
    })
    .await;
    let dead = f.drain(&f.topology.names().dead_letter_queue()).await;
    assert_eq!(
        dead.iter().map(|(b, _)| b.clone()).collect::<Vec<_>>(),
        bodies(0, 7)
    );
    assert!(
        dead.iter()
            .all(|(_, r)| r.as_deref().is_some_and(|r| r.contains("t.gone"))),
        "{dead:?}"
    );
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_moved_to_another_data_queue_keeps_no_old_binding() {
    let f = Fixture::new(Backend::Sqlite).await;
    let other = f.exchange("other");
    let build = |queue: &str| {
        let mut c = f.catalog().ls("t.m", "echo", "stream", json!({})).build();
        c.data_queues.push(
            serde_json::from_value(json!({ "id": "other", "kind": "topic", "address": other }))
                .expect("data queue"),
        );
        if let Some(a) = c.agents.iter_mut().find(|a| a.id == "echo") {
            a.data_queue = Some(queue.to_owned());
        }
        c
    };
    f.seed(build("events")).await;
    f.reconcile().await;
    f.publish(&f.w.address, 0, 4, &[]).await;
    f.seed(build("other")).await;
    f.reconcile().await;
    f.publish(&other, 4, 4, &[]).await;
    f.publish(&f.w.address, 100, 2, &[]).await;
    f.expect_depth(&f.sub("t.m"), 8).await;
    f.expect_depth(&f.topology.names().unrouted("events"), 2)
        .await;
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_data_queue_is_shared_and_a_deleted_one_is_retired() {
    let f = Fixture::new(Backend::Postgres).await;
    let jobs = f.exchange("jobs");
    let build = |with_jobs: bool| {
        let mut c = f.catalog().build();
        if with_jobs {
            let doc = json!({
                "dq": { "id": "jobs", "kind": "queue", "address": jobs },
                "agent": { "application": "demo", "id": "worker", "input": "messages",
                           "data_queue": "jobs", "concurrency": "ANY", "overlap": "allow" },
            });
            c.data_queues
                .push(serde_json::from_value(doc["dq"].clone()).expect("dq"));
            c.agents
                .push(serde_json::from_value(doc["agent"].clone()).expect("agent"));
            for id in ["t.w1", "t.w2"] {
                c.launch_settings.push(
                    serde_json::from_value(json!({
                        "id": id, "application": "demo", "agent": "worker", "kind": "stream",
                        "retry": { "initial_delay": "100ms", "max_delay": "200ms", "max_deliveries": 3 },
                    }))
                    .expect("ls"),
                );
            }
        }
        c
    };
    f.seed(build(true)).await;
    f.reconcile().await;
    f.publish(&jobs, 0, 20, &[]).await;
    // One queue for both launch settings: each message is there once.
    let shared = f.topology.names().shared_queue("jobs");
    f.expect_depth(&shared, 20).await;
    assert_eq!(f.depth(&f.sub("t.w1")).await, None);

    f.seed(build(false)).await;
    f.reconcile().await;
    eventually("the shared queue is retired", SHORT, || async {
        f.reconcile().await;
        f.depth(&shared).await.is_none().then_some(())
    })
    .await;
    let dead = f.drain(&f.topology.names().dead_letter_queue()).await;
    assert_eq!(dead.len(), 20);
    // The exchange went with the data queue.
    let ch = f.conn.create_channel().await.expect("channel");
    let exists = ch
        .exchange_declare(
            jobs.as_str().into(),
            lapin::ExchangeKind::Headers,
            lapin::options::ExchangeDeclareOptions {
                passive: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await;
    assert!(
        exists.is_err(),
        "the exchange of a deleted data queue is still there"
    );
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_reconcile_together_and_follow_catalog_writes() {
    let f = Fixture::new(Backend::Postgres).await;
    f.seed(f.catalog().ls("t.r", "echo", "stream", json!({})).build())
        .await;
    // Two replicas' reconcilers at once on the same database.
    let stop = tokio_util::sync::CancellationToken::new();
    let depths = rules::DepthsHandle::default();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..2 {
        let (tx, link) = server::broker::link();
        let conn = crate::harness::connect().await.expect("broker");
        tx.send(Some(std::sync::Arc::new(conn))).expect("link");
        tasks.spawn(server::runtime::topology::run(
            f.w.db.clone(),
            f.topology.clone(),
            link.clone(),
            stop.clone(),
        ));
        tasks.spawn(server::runtime::topology::sample(
            f.w.db.clone(),
            depths.clone(),
            link,
            stop.clone(),
        ));
        // Keeps the link's sender alive with the task.
        tasks.spawn(async move {
            let _tx = tx;
            std::future::pending::<()>().await;
        });
    }
    f.reconciled().await;
    f.publish(&f.w.address, 0, 3, &[]).await;
    f.expect_depth(&f.sub("t.r"), 3).await;

    f.seed(
        f.catalog()
            .ls("t.r", "echo", "stream", json!({}))
            .ls("t.new", "echo", "stream", json!({}))
            .build(),
    )
    .await;
    f.reconciled().await;
    f.publish(&f.w.address, 3, 2, &[]).await;
    f.expect_depth(&f.sub("t.r"), 5).await;
    f.expect_depth(&f.sub("t.new"), 2).await;
    // The sampler sees what the broker holds, for the API, the Broker page and /metrics.
    let sub = f.sub("t.r");
    eventually("the sampled depth of t.r", SHORT, || async {
        let d = depths.read().ok()?.clone();
        d.queues
            .iter()
            .any(|q| q.queue == sub && q.ready == 5 && q.launch_setting.as_deref() == Some("t.r"))
            .then_some(())
    })
    .await;

    // Someone deletes a queue by hand; *Reconcile now* declares and binds it again.
    let ch = f.conn.create_channel().await.expect("channel");
    ch.queue_delete(
        f.sub("t.new").as_str().into(),
        QueueDeleteOptions::default(),
    )
    .await
    .expect("deleted by hand");
    rules::request_full_pass(&f.w.db, &Principal::cli(), chrono::Utc::now())
        .await
        .expect("requested");
    eventually("the deleted queue is back", SHORT, || async {
        f.depth(&f.sub("t.new")).await.map(|_| ())
    })
    .await;
    f.reconciled().await;
    eventually("its binding is back too", SHORT, || async {
        f.publish(&f.w.address, 10, 1, &[]).await;
        (f.depth(&f.sub("t.new")).await >= Some(1)).then_some(())
    })
    .await;
    stop.cancel();
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    f.finish().await;
}
