//! Counters per activation are exact: two activations of one launch setting, one after the
//! other on one node, each report what they did themselves (heartbeats while running, the
//! `finished` report at the end), not the node's running total.

use crate::{
    agents::{Probe, log, probe_spec, seen},
    harness::Harness,
};
use agent_client::domain::wire::{
    self, ActivationEvent, ActivationId, Counters, Interrupt, ToManager, ToNode,
};
use std::time::Duration;

const T: Duration = Duration::from_secs(10);

/// The last heartbeat's counters of `activation`, once one shows `processed`.
async fn heartbeat_counters(h: &Harness, activation: &ActivationId, processed: u64) -> Counters {
    let found = h
        .wait_for("the activation's own counters", T, |r| {
            matches!(r, ToManager::Heartbeat(hb) if hb.running.iter().any(|ls| ls.by_activation.iter().any(|a| &a.activation_id == activation && a.counters.processed == processed)))
        })
        .await;
    let ToManager::Heartbeat(hb) = found else {
        unreachable!()
    };
    hb.running
        .iter()
        .flat_map(|ls| ls.by_activation.iter())
        .find(|a| &a.activation_id == activation)
        .map(|a| a.counters)
        .expect("the activation")
}

async fn finished_counters(h: &Harness, activation: &ActivationId) -> Option<Counters> {
    match h
        .wait_event(activation, T, |e| {
            matches!(e, ActivationEvent::Finished { .. })
        })
        .await
    {
        ActivationEvent::Finished { counters, .. } => counters,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_activations_on_one_node_count_what_each_did() {
    let h = Harness::new().await;
    let l = log();
    let node = h
        .node("h1")
        .messages(probe_spec(), Probe::ok("h1", &l))
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");
    let address = h.address("c");
    let first = h.stream("app.probe.1", "probe", &address).await;
    h.subscribe(&first).await;
    h.send("h1", &ToNode::Launch(first.clone())).await;
    h.started(&first.activation_id).await;
    for i in 0..5 {
        h.publish(&address, format!("a{i}").as_bytes(), &[]).await;
    }
    let c = heartbeat_counters(&h, &first.activation_id, 5).await;
    assert_eq!(c.processed, 5);
    h.send(
        "h1",
        &ToNode::Interrupt(Interrupt {
            activation_id: first.activation_id.clone(),
            reason: "test".into(),
            up_to_token: None,
        }),
    )
    .await;
    assert_eq!(
        finished_counters(&h, &first.activation_id)
            .await
            .map(|c| c.processed),
        Some(5)
    );

    // The next activation of the same launch setting on the same node starts from zero.
    let mut second = first.clone();
    second.activation_id = wire::ActivationId(uuid::Uuid::new_v4().to_string());
    h.send("h1", &ToNode::Launch(second.clone())).await;
    h.started(&second.activation_id).await;
    for i in 0..3 {
        h.publish(&address, format!("b{i}").as_bytes(), &[]).await;
    }
    let c = heartbeat_counters(&h, &second.activation_id, 3).await;
    assert_eq!((c.processed, c.failed), (3, 0));
    assert_eq!(seen(&l).len(), 8);
    // The node's own metrics count both runs together, per launch setting.
    let text = node.metrics().to_text();
    let processed = "am_node_messages_total{application=\"app\",host=\"h1\",launch_setting=\"app.probe.1\",outcome=\"processed\"} 8";
    assert!(text.lines().any(|l| l == processed), "{text}");
    assert!(
        text.contains("am_node_connected{application=\"app\",host=\"h1\"} 1"),
        "{text}"
    );
    let types = text.lines().filter(|l| l.starts_with("# TYPE ")).count();
    let helps = text.lines().filter(|l| l.starts_with("# HELP ")).count();
    assert_eq!((types, helps), (7, 7), "{text}");
    node.shutdown().await;
    assert_eq!(
        finished_counters(&h, &second.activation_id)
            .await
            .map(|c| c.processed),
        Some(3),
        "the final report carries the final figures"
    );
    h.cleanup().await;
}
