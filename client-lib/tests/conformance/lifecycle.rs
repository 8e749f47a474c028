//! A node's life: its publication and heartbeats, a graceful stop, a crash whose message
//! another node takes, a lost connection it comes back from, and the loss of its broker member
//! in a cluster.

use crate::{
    cluster::Cluster,
    harness::{APP, Harness, close_connection_of, fast_retry, rabbitmqctl},
    node::NodeProcess,
};
use agent_client::domain::{
    catalog::InputKind,
    params::ParamType,
    policy::retry_ladder,
    wire::{self, ActivationResult, ToManager, ToNode},
};
use serde_json::json;
use std::time::Duration;

const T: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_publishes_its_agents_and_heartbeats_its_runs() {
    let h = Harness::new().await;
    let (node, p) = NodeProcess::start(&h, "n1", 3).await;
    assert_eq!(
        (p.application.as_str(), p.host.as_str(), p.capacity),
        ("app", "n1", 3)
    );
    assert!(p.protocol >= 3, "speaks protocol version 3: {}", p.protocol);
    let agent = |id: &str| {
        p.agents
            .iter()
            .find(|a| a.id == id)
            .unwrap_or_else(|| panic!("offers {id}"))
    };
    assert_eq!(agent("script").input, InputKind::Standalone);
    assert_eq!(agent("script-messages").input, InputKind::Messages);
    let params: Vec<(&str, &ParamType)> = agent("script")
        .parameters
        .iter()
        .map(|s| (s.name.as_str(), &s.ty))
        .collect();
    assert_eq!(
        params,
        [
            ("sleep", &ParamType::Duration),
            ("fail", &ParamType::String),
            ("progress", &ParamType::Boolean)
        ]
    );

    let run = {
        let mut l = h.launch("app.script.1", "script");
        l.parameters.insert("sleep".into(), json!("30s"));
        l
    };
    h.send("n1", &ToNode::Launch(run.clone())).await;
    h.started(&run.activation_id).await;
    let ToManager::Heartbeat(beat) = h
        .wait_for("a heartbeat with the run", T, |r| {
            matches!(r, ToManager::Heartbeat(hb) if hb.running.iter().any(|ls| ls.activations.contains(&run.activation_id)))
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!((beat.host.as_str(), beat.capacity), ("n1", 3));
    let ls = beat
        .running
        .iter()
        .find(|ls| ls.launch_setting == "app.script.1")
        .expect("its launch setting");
    assert!(
        ls.by_activation.is_empty()
            || ls
                .by_activation
                .iter()
                .any(|a| a.activation_id == run.activation_id),
        "per-activation counters name the run"
    );
    let beats = || {
        h.reports()
            .iter()
            .filter(|r| matches!(r, ToManager::Heartbeat(hb) if hb.host == "n1"))
            .count()
    };
    let before = beats();
    tokio::time::sleep(Duration::from_millis(1_600)).await;
    assert!(
        beats() >= before + 2,
        "a heartbeat every AM_HEARTBEAT (500 ms)"
    );
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_reports_its_runs_interrupted_and_exits_zero() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 4).await;
    let mut run = h.launch("app.script.1", "script");
    run.parameters.insert("sleep".into(), json!("60s"));
    h.send("n1", &ToNode::Launch(run.clone())).await;
    h.started(&run.activation_id).await;
    let address = h.address("events");
    let stream = h
        .stream("app.script-messages.1", "script-messages", &address)
        .await;
    h.subscribe(&stream).await;
    h.send("n1", &ToNode::Launch(stream.clone())).await;
    h.started(&stream.activation_id).await;

    let status = node.terminate().await;
    assert!(status.success(), "exit status after SIGTERM: {status:?}");
    for id in [&run.activation_id, &stream.activation_id] {
        assert_eq!(
            h.finished(id, Duration::from_secs(1)).await.0,
            ActivationResult::Interrupted,
            "reported before the node exited"
        );
    }
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_node_gives_its_message_back_and_another_node_processes_it() {
    let h = Harness::new().await;
    let (n1, _) = NodeProcess::start(&h, "n1", 2).await;
    let (n2, _) = NodeProcess::start(&h, "n2", 2).await;
    let address = h.address("events");
    let mut launch = h
        .stream("app.script-messages.1", "script-messages", &address)
        .await;
    launch.retry = fast_retry(3);
    launch.retry_steps = retry_ladder(&launch.retry);
    h.subscribe(&launch).await;
    for host in ["n1", "n2"] {
        let mut l = launch.clone();
        l.activation_id = wire::ActivationId(uuid::Uuid::new_v4().to_string());
        h.send(host, &ToNode::Launch(l.clone())).await;
        h.started(&l.activation_id).await;
    }
    h.publish(
        &address,
        json!({"id": "long", "hold": "3s"}).to_string().as_bytes(),
        &[],
    )
    .await;
    let deadline = tokio::time::Instant::now() + T;
    let holder = loop {
        if !n1.records().is_empty() {
            break "n1";
        }
        if !n2.records().is_empty() {
            break "n2";
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "nobody took the message"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    let survivor = if holder == "n1" {
        n1.kill().await;
        n2
    } else {
        n2.kill().await;
        n1
    };
    let records = survivor
        .wait_records("the message given back", T, |r| !r.is_empty())
        .await;
    assert_eq!(records[0]["id"], "long");
    assert_eq!(
        records[0]["redelivered"], true,
        "the broker gave it back: {records:?}"
    );
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        survivor.records().len(),
        1,
        "processed once by the survivor"
    );
    assert_eq!(
        h.depth(&h.topology.names().subscription(&launch.launch_setting))
            .await,
        0
    );
    drop(survivor);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_comes_back_after_its_connection_is_cut_and_its_stream_goes_on() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let address = h.address("events");
    let launch = h
        .stream("app.script-messages.1", "script-messages", &address)
        .await;
    h.subscribe(&launch).await;
    h.send("n1", &ToNode::Launch(launch.clone())).await;
    h.started(&launch.activation_id).await;
    h.publish(
        &address,
        json!({"id": "before"}).to_string().as_bytes(),
        &[],
    )
    .await;
    node.wait_records("the first message", T, |r| r.len() == 1)
        .await;

    // The connection name is the one the protocol fixes: the cut finds it by that name.
    close_connection_of(h.prefix(), "n1").await;
    h.wait_for("a second publication", T, |_| {
        h.reports()
            .iter()
            .filter(|r| matches!(r, ToManager::Publication(p) if p.host == "n1"))
            .count()
            >= 2
    })
    .await;
    h.publish(&address, json!({"id": "after"}).to_string().as_bytes(), &[])
        .await;
    let records = node
        .wait_records("the message after the cut", T, |r| {
            r.iter().any(|r| r["id"] == "after")
        })
        .await;
    assert_eq!(
        records.iter().filter(|r| r["id"] == "before").count(),
        1,
        "what was acknowledged is not processed again"
    );
    drop(node);
    h.cleanup().await;
}

/// The conformance cluster's ports: AMQP on 5981-5983 (scripts/cluster.sh), beside the fault
/// suite's and the Java guide's clusters.
const CLUSTER_PORTS: u16 = 5980;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_moves_to_another_member_when_its_broker_member_dies_and_its_stream_goes_on() {
    let cluster = Cluster::start_beside(CLUSTER_PORTS, "amconf").await;
    let urls = cluster.urls().await;
    let members: Vec<&str> = urls.split(',').collect();
    assert_eq!(members.len(), 3, "{urls}");
    // The suite stays on the third member; the node is given the other two.
    let h = Harness::on(members[2]).await;
    let (node, _) =
        NodeProcess::start_with(&h, "n1", 2, &format!("{},{}", members[0], members[1])).await;
    let address = h.address("events");
    let launch = h
        .stream("app.script-messages.1", "script-messages", &address)
        .await;
    h.subscribe(&launch).await;
    h.send("n1", &ToNode::Launch(launch.clone())).await;
    h.started(&launch.activation_id).await;
    h.publish(
        &address,
        json!({"id": "before"}).to_string().as_bytes(),
        &[],
    )
    .await;
    node.wait_records("the first message", T, |r| r.len() == 1)
        .await;

    let held_by = connection_member(h.prefix(), "n1", "amconf3@localhost").await;
    let member = held_by
        .strip_prefix("amconf")
        .and_then(|rest| rest.split('@').next())
        .expect("a member of the conformance cluster")
        .to_owned();
    assert_ne!(member, "3", "the node was not given the third member");
    cluster.kill(&member).await;
    h.wait_for("a publication after the member's loss", T, |_| {
        h.reports()
            .iter()
            .filter(|r| matches!(r, ToManager::Publication(p) if p.host == "n1"))
            .count()
            >= 2
    })
    .await;
    let moved_to = connection_member(h.prefix(), "n1", "amconf3@localhost").await;
    assert_ne!(moved_to, held_by, "the node is on another member");
    h.publish(&address, json!({"id": "after"}).to_string().as_bytes(), &[])
        .await;
    let records = node
        .wait_records("the message after the loss", T, |r| {
            r.iter().any(|r| r["id"] == "after")
        })
        .await;
    assert_eq!(
        records.iter().filter(|r| r["id"] == "before").count(),
        1,
        "what was acknowledged is not processed again"
    );
    drop(node);
    // No clean-up of the queues: they go with the cluster (deleting a quorum queue whose
    // member is down waits for the broker's timeouts).
    drop(cluster);
}

/// The cluster node (`<name><n>@localhost`) that holds a node's broker connection, asked of
/// cluster node `ask`.
async fn connection_member(prefix: &str, host: &str, ask: &str) -> String {
    let name = format!("am-node {APP}@{host} ({prefix})");
    // RabbitMQ 3.10 lists no node per connection; a connection's pid names its node
    // (`<amconf2@localhost.1701.0.1>`).
    let out = rabbitmqctl(&[
        "-q",
        "-n",
        ask,
        "list_connections",
        "pid",
        "client_properties",
    ])
    .await;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.contains(&name))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|pid| pid.trim_start_matches('<').split('.').next())
        .unwrap_or_else(|| panic!("connection `{name}` not found in {text}"))
        .to_owned()
}
