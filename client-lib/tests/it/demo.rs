//! The `demo-node` binary as a real process: publication, the demo agents, graceful SIGTERM.

use crate::harness::{APP, Harness};
use agent_client::domain::{
    catalog::InputKind,
    wire::{ActivationResult, ToManager, ToNode},
};
use serde_json::json;
use std::time::Duration;

const T: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_node_offers_and_runs_the_demo_agents() {
    let h = Harness::new().await;
    let _ = h.node("demo1"); // registers the host for clean-up
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_demo-node"))
        .env("AM_AMQP_URL", crate::harness::amqp_url())
        .env("AM_APP", APP)
        .env("AM_HOST", "demo1")
        .env("AM_PREFIX", h.prefix())
        .env("AM_QUEUE_EXPIRY", "60s")
        .env("RUST_LOG", "warn")
        .kill_on_drop(true)
        .spawn()
        .expect("demo-node starts");

    let ToManager::Publication(p) = h
        .wait_for("publication", T, |r| matches!(r, ToManager::Publication(_)))
        .await
    else {
        unreachable!()
    };
    let mut agents: Vec<(&str, InputKind)> =
        p.agents.iter().map(|a| (a.id.as_str(), a.input)).collect();
    agents.sort_by_key(|a| a.0);
    assert_eq!(
        agents,
        [
            ("echo", InputKind::Messages),
            ("fail", InputKind::Standalone),
            ("flaky", InputKind::Messages),
            ("poison", InputKind::Messages),
            ("sleep", InputKind::Standalone),
        ]
    );
    let orgs = p
        .classifiers
        .iter()
        .find(|c| c.name == "organisations")
        .expect("organisations");
    assert_eq!(orgs.values.len(), 1000);
    assert!(p.classifiers.iter().any(|c| c.name == "sites"));

    let fail = h.launch("app.fail.1", "fail");
    h.send("demo1", &ToNode::Launch(fail.clone())).await;
    assert_eq!(
        h.finished(&fail.activation_id, T).await.0,
        ActivationResult::Failed
    );

    let mut sleep = h.launch("app.sleep.1", "sleep");
    sleep.parameters.insert("duration".into(), json!("200ms"));
    h.send("demo1", &ToNode::Launch(sleep.clone())).await;
    assert_eq!(
        h.finished(&sleep.activation_id, T).await.0,
        ActivationResult::Succeeded
    );

    let address = h.address("demo-events");
    let mut poison = h.stream("app.poison.1", "poison", &address).await;
    poison.retry.max_deliveries = 1;
    h.subscribe(&poison).await;
    h.send("demo1", &ToNode::Launch(poison.clone())).await;
    h.started(&poison.activation_id).await;
    h.publish(&address, b"good food", &[]).await;
    h.publish(&address, b"some poison", &[]).await;
    let dead = h.take(&h.topology.names().dead_letter_queue(), 1, T).await;
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].delivery.data, b"some poison");

    // SIGTERM: a graceful stop that still reports the interrupted activation.
    let pid = child.id().expect("running").to_string();
    let status = tokio::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .await
        .expect("kill");
    assert!(status.success());
    let exit = tokio::time::timeout(T, child.wait())
        .await
        .expect("exits")
        .expect("status");
    assert!(exit.success(), "{exit:?}");
    assert_eq!(
        h.finished(&poison.activation_id, T).await.0,
        ActivationResult::Interrupted
    );
    h.cleanup().await;
}
