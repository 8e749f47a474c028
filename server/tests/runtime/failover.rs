//! Several broker addresses (`AM_AMQP_URL` as a comma-separated list): the manager and a node
//! each given two addresses of one broker (two proxies in front of it, standing in for two
//! members of a cluster). Cutting the address one of them is on makes it reconnect through
//! the other within seconds, re-creating its channels, consumers and queue: the node stays
//! live, a stream keeps processing every message published, and a run started while a client
//! was between connections still runs (the outbox kept its command).

use crate::harness::{APP, CatalogBuilder, LONG, Proxy, SHORT, World, eventually};
use am_services::testing::Backend;
use serde_json::json;

const STREAM: &str = "demo.echo.failover";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_fail_over_to_another_broker_address() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1"])
            .ls(STREAM, "echo", "stream", json!({}))
            .sleep("demo.nap", "300ms")
            .build(),
    )
    .await;
    let mut first = Proxy::start().await;
    let mut second = Proxy::start().await;
    let both = format!("{},{}", first.url(), second.url());
    let m = w.manager_with(w.config(), &both).await;
    w.start_node_via("h1", 4, &both);
    w.wait_live(&["h1"]).await;

    let mut sent = 0_i64;
    for round in 0..2 {
        for i in 0..10 {
            w.publish(&format!("failover-{round}-{i}")).await;
            sent += 1;
        }
        eventually(&format!("{sent} messages processed"), LONG, || async {
            (w.processed_by(STREAM).await == sent).then_some(())
        })
        .await;
        // Cut one address (the first, then the second once the first is back): whoever was
        // on it moves to the other.
        if round == 0 {
            first.cut();
        } else {
            first.restore().await;
            second.cut();
        }
        // A run asked for at once goes out whenever the manager and the node are back.
        let nap = m.run_ls("demo.nap").await;
        assert_eq!(
            w.wait_done(nap, LONG).await.status,
            "succeeded",
            "{}",
            w.dump().await
        );
        eventually("the manager back on the broker", SHORT, || async {
            m.broker_up().then_some(())
        })
        .await;
        w.wait_live(&["h1"]).await;
    }
    for i in 0..10 {
        w.publish(&format!("failover-last-{i}")).await;
        sent += 1;
    }
    eventually(&format!("all {sent} messages processed"), LONG, || async {
        (w.processed_by(STREAM).await == sent).then_some(())
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(
        w.processed_by(STREAM).await,
        sent,
        "a message was processed twice"
    );
    m.stop().await;
    w.finish(&[STREAM]).await;
}

/// Closes, as an operator's `rabbitmqctl close_connection` would, every broker connection whose
/// client properties hold `name`; returns how many it closed.
async fn close_connections_named(name: &str) -> usize {
    let out = tokio::process::Command::new("rabbitmqctl")
        .args([
            "-q",
            "list_connections",
            "--no-table-headers",
            "pid",
            "client_properties",
        ])
        .output()
        .await
        .expect("rabbitmqctl runs");
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut closed = 0;
    // The connection's Erlang pid first: what `close_connection` takes.
    for line in listed.lines().filter(|l| l.contains(name)) {
        let Some((connection, _)) = line.split_once('\t') else {
            continue;
        };
        let status = tokio::process::Command::new("rabbitmqctl")
            .args([
                "-q",
                "close_connection",
                connection,
                "closed by the failover test",
            ])
            .status()
            .await
            .expect("rabbitmqctl runs");
        assert!(status.success(), "close_connection {connection}");
        closed += 1;
    }
    closed
}

/// The broker closes a node's connection with an error frame (an operator's `close_connection`,
/// a broker shutting down): the node notices, connects again and runs what it is sent. A channel
/// the broker closes does not count as a lost connection, so the loss of the connection itself
/// must.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_the_broker_closes_is_opened_again() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1"])
            .sleep("demo.nap", "200ms")
            .build(),
    )
    .await;
    let m = w.start_pool(&["h1"]).await;
    let node = format!("am-node {APP}@h1 ({})", w.prefix);
    eventually(
        "the node's connection listed by the broker",
        SHORT,
        || async { (close_connections_named(&node).await > 0).then_some(()) },
    )
    .await;
    let run = m.run_ls("demo.nap").await;
    assert_eq!(
        w.wait_done(run, LONG).await.status,
        "succeeded",
        "{}",
        w.dump().await
    );
    w.wait_live(&["h1"]).await;
    m.stop().await;
    w.finish(&[]).await;
}
