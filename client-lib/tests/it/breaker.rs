//! The breaker counts distinct messages: with the default settings one poison message goes to
//! the dead-letter queue after its deliveries and the launch setting keeps running (its retries
//! do not lengthen the run). That several distinct messages failing alike trip it is in
//! `messages::breaker_trips_on_n_failures_of_one_type`.

use crate::{
    agents::{Probe, log, probe_spec, seen},
    harness::Harness,
};
use agent_client::{
    AgentError,
    domain::{
        catalog::DEFAULT_FAILURE_THRESHOLD,
        wire::{ToManager, ToNode},
    },
};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_poison_message_is_dead_lettered_without_tripping_the_breaker() {
    let h = Harness::new().await;
    let l = log();
    let node = h
        .node("h1")
        .messages(
            probe_spec(),
            Probe::new("h1", &l, |m| {
                if m.body() == b"poison" {
                    Err(AgentError::failed("Poison", "cannot parse"))
                } else {
                    Ok(())
                }
            }),
        )
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");
    let address = h.address("p");
    let mut launch = h.stream("app.probe.1", "probe", &address).await;
    // The defaults: M = 10 (N = 3), 10 deliveries.
    launch.failure_threshold = DEFAULT_FAILURE_THRESHOLD;
    launch.retry.max_deliveries = 10;
    h.subscribe(&launch).await;
    h.send("h1", &ToNode::Launch(launch.clone())).await;
    h.started(&launch.activation_id).await;
    h.publish(&address, b"poison", &[]).await;
    let dead = h.take(&h.topology.names().dead_letter_queue(), 1, T).await;
    assert_eq!(dead.len(), 1, "the poison message is dead-lettered");
    assert_eq!(
        seen(&l).len(),
        10,
        "delivered max_deliveries times, not cut short by a trip"
    );
    assert!(
        !h.reports()
            .iter()
            .any(|r| matches!(r, ToManager::BreakerTripped(_))),
        "one bad message is not a broken agent"
    );
    // The launch setting still runs: the next message is processed.
    h.publish(&address, b"good", &[]).await;
    let deadline = tokio::time::Instant::now() + T;
    while !seen(&l).iter().any(|s| s.body == "good") && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(seen(&l).iter().any(|s| s.body == "good"));
    node.shutdown().await;
    h.cleanup().await;
}
