//! Nodes dying mid-message and broker connections cut and restored.

use crate::{
    agents::{Probe, log, probe_spec, seen},
    harness::{Harness, close_connection_of},
};
use agent_client::domain::wire::{self, ActivationResult, ToManager, ToNode};
use std::time::Duration;

const T: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_held_by_a_dead_node_is_processed_by_another() {
    let h = Harness::new().await;
    let l = log();
    let stuck = h
        .node("h1")
        .messages(
            probe_spec().prefetch(1),
            Probe::ok("h1", &l).holding(Duration::from_secs(600)),
        )
        .start()
        .await
        .expect("starts");
    let healthy = h
        .node("h2")
        .messages(probe_spec(), Probe::ok("h2", &l))
        .start()
        .await
        .expect("starts");
    stuck.ready(T).await.expect("ready");
    healthy.ready(T).await.expect("ready");
    let address = h.address("work");
    let launch = h.stream("app.probe.1", "probe", &address).await;
    h.subscribe(&launch).await;
    h.send("h1", &ToNode::Launch(launch.clone())).await;
    h.started(&launch.activation_id).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    h.publish(&address, b"precious", &[]).await;
    let deadline = tokio::time::Instant::now() + T;
    while seen(&l).is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(seen(&l)[0].host, "h1");

    let mut second = launch.clone();
    second.activation_id = wire::ActivationId(uuid::Uuid::new_v4().to_string());
    h.send("h2", &ToNode::Launch(second.clone())).await;
    h.started(&second.activation_id).await;
    stuck.abort().await;

    let deadline = tokio::time::Instant::now() + T;
    while seen(&l).len() < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let s = seen(&l);
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!((s[1].host.as_str(), s[1].body.as_str()), ("h2", "precious"));
    assert!(s[1].redelivered, "the broker marks it redelivered");
    healthy.shutdown().await;
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_connection_is_restored_and_consumption_resumes() {
    let h = Harness::new().await;
    let l = log();
    let node = h
        .node("h1")
        .messages(probe_spec(), Probe::ok("h1", &l))
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");
    let address = h.address("cut");
    let launch = h.stream("app.probe.1", "probe", &address).await;
    h.subscribe(&launch).await;
    h.send("h1", &ToNode::Launch(launch.clone())).await;
    h.started(&launch.activation_id).await;
    h.publish(&address, b"before", &[]).await;
    let deadline = tokio::time::Instant::now() + T;
    while seen(&l).is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let publications = |h: &Harness| {
        h.reports()
            .iter()
            .filter(|r| matches!(r, ToManager::Publication(_)))
            .count()
    };
    assert_eq!(publications(&h), 1);

    close_connection_of(h.prefix(), "h1").await;
    // Messages published while the node is away wait in the subscription.
    h.publish(&address, b"during", &[]).await;
    let deadline = tokio::time::Instant::now() + T;
    while publications(&h) < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        publications(&h),
        2,
        "the node republishes itself after reconnecting"
    );
    node.ready(T).await.expect("listens again");
    h.publish(&address, b"after", &[]).await;
    let deadline = tokio::time::Instant::now() + T;
    while seen(&l).len() < 3 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let bodies: Vec<String> = seen(&l).into_iter().map(|s| s.body).collect();
    assert_eq!(bodies, ["before", "during", "after"]);
    let subscription = h.topology.names().subscription("app.probe.1");
    assert_eq!(
        h.consumers(&subscription).await,
        1,
        "resubscribed once, no duplicate consumer"
    );

    // The same activation goes on (no second activation, one consumer): a stop ends it.
    h.send(
        "h1",
        &ToNode::Stop(wire::Stop {
            launch_setting: "app.probe.1".into(),
            reason: "test".into(),
        }),
    )
    .await;
    assert_eq!(
        h.finished(&launch.activation_id, T).await.0,
        ActivationResult::Interrupted
    );
    node.shutdown().await;
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_returns_the_message_in_hand_and_the_prefetched_ones() {
    let h = Harness::new().await;
    let l = log();
    let leaving = h
        .node("h1")
        .interrupt_grace(Duration::from_millis(300))
        .messages(
            probe_spec().prefetch(5),
            Probe::ok("h1", &l).holding(Duration::from_secs(600)),
        )
        .start()
        .await
        .expect("starts");
    leaving.ready(T).await.expect("ready");
    let address = h.address("handover");
    let launch = h.stream("app.probe.1", "probe", &address).await;
    h.subscribe(&launch).await;
    h.send("h1", &ToNode::Launch(launch.clone())).await;
    h.started(&launch.activation_id).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    for body in ["a", "b", "c"] {
        h.publish(&address, body.as_bytes(), &[]).await;
    }
    let deadline = tokio::time::Instant::now() + T;
    while seen(&l).is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The agent ignores the interruption: after the grace its message goes back.
    leaving.shutdown().await;
    assert_eq!(
        h.finished(&launch.activation_id, T).await.0,
        ActivationResult::Interrupted
    );
    let subscription = h.topology.names().subscription("app.probe.1");
    assert_eq!(
        h.depth(&subscription).await,
        3,
        "all three wait in the broker again"
    );

    let staying = h
        .node("h2")
        .messages(probe_spec(), Probe::ok("h2", &l))
        .start()
        .await
        .expect("starts");
    staying.ready(T).await.expect("ready");
    let mut second = launch.clone();
    second.activation_id = wire::ActivationId(uuid::Uuid::new_v4().to_string());
    h.send("h2", &ToNode::Launch(second)).await;
    let deadline = tokio::time::Instant::now() + T;
    while seen(&l).iter().filter(|s| s.host == "h2").count() < 3
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut bodies: Vec<String> = seen(&l)
        .into_iter()
        .filter(|s| s.host == "h2")
        .map(|s| s.body)
        .collect();
    bodies.sort();
    assert_eq!(bodies, ["a", "b", "c"]);
    staying.shutdown().await;
    h.cleanup().await;
}
