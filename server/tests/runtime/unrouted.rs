//! Replaying what no launch setting took: messages kept in a data queue's unrouted queue go
//! back to its exchange through a bulk operation once a launch setting exists; those that still
//! match none come back to the unrouted queue. Every message published is counted.

use crate::topology::{Fixture, bodies};
use am_domain::read::operations::OperationRequest;
use am_services::{
    Principal, Services, Settings,
    health::BrokerStatus,
    operations::{self, RunEnd},
    runtime::RuntimeConfig,
    testing::Backend,
};
use lapin::options::BasicGetOptions;
use serde_json::json;
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unrouted_messages_reach_a_launch_setting_added_later_and_the_rest_stay_kept() {
    let f = Fixture::new(Backend::Sqlite).await;
    let late = f.exchange("late");
    let build = |with_ls: bool| {
        let mut c = f.catalog().build();
        c.data_queues.push(
            serde_json::from_value(json!({ "id": "late", "kind": "topic", "address": late }))
                .expect("data queue"),
        );
        if with_ls {
            c.agents.push(
                serde_json::from_value(json!({
                    "application": "demo", "id": "late", "input": "messages",
                    "data_queue": "late", "concurrency": "ANY", "overlap": "allow",
                }))
                .expect("agent"),
            );
            c.launch_settings.push(
                serde_json::from_value(json!({
                    "id": "t.late", "application": "demo", "agent": "late", "kind": "stream",
                    "filter": { "headers": { "tenant": "acme" } },
                }))
                .expect("launch setting"),
            );
        }
        c
    };
    f.seed(build(false)).await;
    f.reconcile().await;
    // Published before any launch setting takes the data queue: kept, not dropped.
    f.publish(&late, 0, 20, &[("tenant", "acme")]).await;
    f.publish(&late, 20, 10, &[("tenant", "globex")]).await;
    let unrouted = f.topology.names().unrouted("late");
    f.expect_depth(&unrouted, 30).await;

    let services = Services::new(f.w.db.clone(), BrokerStatus::default(), Settings::default())
        .with_runtime(RuntimeConfig::new(&f.w.prefix));
    server::runtime::topology::sample_once(&f.w.db, &f.conn, &services.broker_depths)
        .await
        .expect("sampled");
    let who = Principal::cli();
    let replay = OperationRequest::ReplayUnrouted {
        data_queue: "late".into(),
    };
    // Nothing takes them yet: they would come straight back.
    let refused = operations::start(&services, &who, replay.clone())
        .await
        .expect_err("no launch setting takes the data queue yet");
    assert!(
        refused.to_string().contains("no launch setting takes"),
        "{refused}"
    );

    f.seed(build(true)).await;
    f.reconcile().await;
    server::runtime::topology::sample_once(&f.w.db, &f.conn, &services.broker_depths)
        .await
        .expect("sampled");
    let op = operations::start(&services, &who, replay)
        .await
        .expect("started");
    assert_eq!(op.total, 30);

    let conn = crate::harness::connect().await.expect("broker");
    let (tx, link) = server::broker::link();
    tx.send(Some(Arc::new(conn))).expect("link");
    let stop = CancellationToken::new();
    let publisher =
        server::jobs::BrokerPublisher::new(link, f.topology.names().clone(), stop.clone());
    let end = tokio::time::timeout(
        Duration::from_secs(30),
        operations::run(&f.w.db, &services.runtime, op.id, &publisher),
    )
    .await
    .expect("the operation ends")
    .expect("it runs");
    assert_eq!(end, RunEnd::Finished(operations::status::SUCCEEDED));
    let op = operations::get(&f.w.db, &who, op.id)
        .await
        .expect("operation");
    assert_eq!((op.done, op.failed), (30, 0));

    // The matching ones reached the launch setting once each, marked as replayed; the others
    // are kept again, once each. Nothing lost, nothing doubled.
    let sub = f.sub("t.late");
    f.expect_depth(&sub, 20).await;
    f.expect_depth(&unrouted, 10).await;
    let probe = f.conn.create_channel().await.expect("channel");
    let first = probe
        .basic_get(sub.as_str().into(), BasicGetOptions { no_ack: false })
        .await
        .expect("basic.get")
        .expect("a message");
    let headers = first
        .delivery
        .properties
        .headers()
        .clone()
        .expect("headers");
    assert!(
        headers
            .inner()
            .contains_key(am_domain::wire::REPLAYED_BY_HEADER),
        "{headers:?}"
    );
    assert!(headers.inner().contains_key("tenant"), "{headers:?}");
    // Closing the channel gives the unacknowledged message back.
    probe.close(200, "".into()).await.expect("close");
    let got: Vec<String> = f.drain(&sub).await.into_iter().map(|(b, _)| b).collect();
    assert_eq!(got, bodies(0, 20));
    let kept: Vec<String> = f
        .drain(&unrouted)
        .await
        .into_iter()
        .map(|(b, _)| b)
        .collect();
    assert_eq!(kept, bodies(20, 10));
    stop.cancel();
    f.finish().await;
}
