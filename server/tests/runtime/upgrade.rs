//! A node of this version meeting the classic control queue an older node declared under its
//! name (control queues are quorum queues now, so a member's loss does not cut a node off): it
//! replaces the queue once, goes live and runs what it is sent.

use crate::harness::{APP, CatalogBuilder, SHORT, World, connect, within};
use agent_client::Topology;
use am_services::testing::Backend;
use lapin::{
    options::QueueDeclareOptions,
    types::{AMQPValue, FieldTable},
};

fn args(quorum: bool) -> FieldTable {
    let mut args = FieldTable::default();
    args.insert("x-expires".into(), AMQPValue::LongLongInt(60_000));
    if quorum {
        args.insert(
            "x-queue-type".into(),
            AMQPValue::LongString("quorum".into()),
        );
    }
    args
}

/// Declares `queue` durable with `args`: succeeds only if the broker holds it with the same.
async fn declare(queue: &str, args: FieldTable) -> Result<(), lapin::Error> {
    let conn = connect().await.expect("broker");
    let ch = conn.create_channel().await.expect("channel");
    let declared = within(
        "a queue declare",
        ch.queue_declare(
            queue.into(),
            QueueDeclareOptions {
                durable: true,
                ..QueueDeclareOptions::default()
            },
            args,
        ),
    )
    .await
    .map(|_| ());
    agent_client::close(&conn, 200, "").await;
    declared
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_replaces_an_old_classic_control_queue_and_goes_live() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1"])
            .sleep("demo.nap", "100ms")
            .build(),
    )
    .await;
    let queue = Topology::new(w.prefix.clone())
        .names()
        .node_queue(APP, "h1");
    declare(&queue, args(false))
        .await
        .expect("the old node's classic queue");

    let m = w.start_pool(&["h1"]).await;
    let run = m.run_ls("demo.nap").await;
    assert_eq!(w.wait_done(run, SHORT).await.status, "succeeded");
    declare(&queue, args(true))
        .await
        .expect("the control queue is a quorum queue now");

    m.stop().await;
    w.finish(&[]).await;
}
