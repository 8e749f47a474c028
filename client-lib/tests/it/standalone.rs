//! Launches of standalone agents: lifecycle reports, typed parameters, failures, overlap
//! policies, interruption, stop, capacity, and malformed commands.

use crate::{
    agents::{Sleeper, sleeper_spec},
    harness::{APP, Harness},
};
use agent_client::domain::{
    catalog::{InputKind, OverlapPolicy},
    wire::{
        ActivationEvent, ActivationResult, Interrupt, QUARANTINE_REASON_HEADER, Stop, ToManager,
        ToNode,
    },
};
use serde_json::json;
use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

const T: Duration = Duration::from_secs(10);

fn sleeper() -> (Sleeper, Arc<Mutex<Vec<String>>>) {
    let runs = Arc::new(Mutex::new(Vec::new()));
    (
        Sleeper {
            runs: Arc::clone(&runs),
        },
        runs,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publishes_itself_and_runs_a_launch_to_success() {
    let h = Harness::new().await;
    let (agent, runs) = sleeper();
    let node = h
        .node("h1")
        .version("1.2.3")
        .standalone(sleeper_spec(), agent)
        .classifier(agent_client::Classifier::new("sites", "Sites").value("par", "Paris"))
        .classifier(agent_client::Classifier::provider("orgs", "Orgs", || {
            (0..1000)
                .map(|i| agent_client::domain::catalog::ClassifierValue {
                    code: format!("o{i}"),
                    label: format!("Org {i}"),
                })
                .collect()
        }))
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");

    let ToManager::Publication(p) = h
        .wait_for("publication", T, |r| matches!(r, ToManager::Publication(_)))
        .await
    else {
        unreachable!()
    };
    assert_eq!(
        (p.application.as_str(), p.host.as_str(), p.version.as_str()),
        (APP, "h1", "1.2.3")
    );
    assert_eq!(p.agents.len(), 1);
    assert_eq!(p.agents[0].input, InputKind::Standalone);
    assert_eq!(p.agents[0].parameters.len(), 2);
    assert_eq!(p.classifiers[1].values.len(), 1000);

    // No parameter given: the schema's default (50ms) applies.
    let launch = h.launch("app.sleep.1", "sleep");
    h.send("h1", &ToNode::Launch(launch.clone())).await;
    assert_eq!(
        h.finished(&launch.activation_id, T).await,
        (ActivationResult::Succeeded, None)
    );
    let events: Vec<_> = h
        .reports()
        .into_iter()
        .filter_map(|r| match r {
            ToManager::Activation(a) if a.activation_id == launch.activation_id => {
                assert_eq!((a.host.as_str(), a.fencing_token), ("h1", 1));
                Some(a.event)
            }
            _ => None,
        })
        .collect();
    assert!(matches!(events[0], ActivationEvent::Accepted), "{events:?}");
    assert!(matches!(events[1], ActivationEvent::Started), "{events:?}");
    assert!(
        matches!(events[2], ActivationEvent::Progress { done: Some(0), .. }),
        "{events:?}"
    );
    assert_eq!(runs.lock().expect("lock").len(), 1);

    // A heartbeat comes with capacity and no running activation left.
    h.wait_for(
        "heartbeat",
        T,
        |r| matches!(r, ToManager::Heartbeat(hb) if hb.capacity == 8 && hb.load.is_some()),
    )
    .await;
    node.shutdown().await;
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_and_bad_parameters_end_failed_with_a_report() {
    let h = Harness::new().await;
    let (agent, _) = sleeper();
    let node = h
        .node("h1")
        .standalone(sleeper_spec(), agent)
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");

    let mut failing = h.launch("app.sleep.1", "sleep");
    failing.parameters.insert("fail".into(), json!("Exploded"));
    h.send("h1", &ToNode::Launch(failing.clone())).await;
    let (result, error) = h.finished(&failing.activation_id, T).await;
    assert_eq!(result, ActivationResult::Failed);
    assert_eq!(error.as_deref(), Some("Exploded: asked to fail"));
    let ToManager::Failure(f) = h
        .wait_for(
            "failure",
            T,
            |r| matches!(r, ToManager::Failure(f) if f.activation_id == failing.activation_id),
        )
        .await
    else {
        unreachable!()
    };
    assert_eq!(
        (
            f.error_type.as_str(),
            f.details.as_str(),
            f.attempt,
            f.temporary
        ),
        ("Exploded", "stack", 1, false)
    );
    assert_eq!((f.agent.as_str(), f.host.as_str()), ("sleep", "h1"));

    let mut bad = h.launch("app.sleep.2", "sleep");
    bad.parameters.insert("duration".into(), json!(42));
    h.send("h1", &ToNode::Launch(bad.clone())).await;
    assert_eq!(
        h.finished(&bad.activation_id, T).await.0,
        ActivationResult::Failed
    );
    h.wait_for("invalid parameters", T, |r| {
        matches!(r, ToManager::Failure(f) if f.activation_id == bad.activation_id && f.error_type == "InvalidParameters")
    })
    .await;

    let unknown = h.launch("app.x.1", "no-such-agent");
    h.send("h1", &ToNode::Launch(unknown.clone())).await;
    let skipped = h
        .wait_event(&unknown.activation_id, T, |e| {
            matches!(e, ActivationEvent::Skipped { .. })
        })
        .await;
    assert!(format!("{skipped:?}").contains("no-such-agent"));
    node.shutdown().await;
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_breaker_trips_across_activations() {
    let h = Harness::new().await;
    let (agent, _) = sleeper();
    let node = h
        .node("h1")
        .standalone(sleeper_spec(), agent)
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");
    // M = 6 → N = 2: the second failure of the same type in a row trips.
    for i in 0..2 {
        let mut l = h.launch("app.sleep.1", "sleep");
        l.failure_threshold = 6;
        l.parameters.insert("fail".into(), json!("Same"));
        h.send("h1", &ToNode::Launch(l.clone())).await;
        assert_eq!(
            h.finished(&l.activation_id, T).await.0,
            ActivationResult::Failed
        );
        let trips = h
            .reports()
            .iter()
            .filter(|r| matches!(r, ToManager::BreakerTripped(_)))
            .count();
        assert_eq!(trips, i, "after failure {}", i + 1);
    }
    node.shutdown().await;
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlap_policies_skip_interrupt_and_allow() {
    let h = Harness::new().await;
    let (agent, runs) = sleeper();
    let node = h
        .node("h1")
        .standalone(sleeper_spec(), agent)
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");
    let long = |h: &Harness, overlap| {
        let mut l = h.launch("app.sleep.1", "sleep");
        l.parameters.insert("duration".into(), json!("30s"));
        l.overlap = overlap;
        l
    };

    let first = long(&h, OverlapPolicy::Allow);
    h.send("h1", &ToNode::Launch(first.clone())).await;
    h.started(&first.activation_id).await;
    // The same command again (a redelivery) does not start a second run.
    h.send("h1", &ToNode::Launch(first.clone())).await;

    let skipped = long(&h, OverlapPolicy::Skip);
    h.send("h1", &ToNode::Launch(skipped.clone())).await;
    h.wait_event(&skipped.activation_id, T, |e| {
        matches!(e, ActivationEvent::Skipped { .. })
    })
    .await;

    let beside = long(&h, OverlapPolicy::Allow);
    h.send("h1", &ToNode::Launch(beside.clone())).await;
    h.started(&beside.activation_id).await;

    let interrupting = long(&h, OverlapPolicy::Interrupt);
    h.send("h1", &ToNode::Launch(interrupting.clone())).await;
    h.started(&interrupting.activation_id).await;
    for old in [&first, &beside] {
        assert_eq!(
            h.finished(&old.activation_id, T).await.0,
            ActivationResult::Interrupted
        );
    }
    // The new run started only after both old ones had finished.
    let reports = h.reports();
    let pos = |pred: &dyn Fn(&ToManager) -> bool| reports.iter().position(pred).expect("present");
    let started = pos(
        &|r| matches!(r, ToManager::Activation(a) if a.activation_id == interrupting.activation_id && a.event == ActivationEvent::Started),
    );
    for old in [&first, &beside] {
        let ended = pos(
            &|r| matches!(r, ToManager::Activation(a) if a.activation_id == old.activation_id && matches!(a.event, ActivationEvent::Finished { .. })),
        );
        assert!(ended < started, "{old:?} ended after the new one started");
    }

    // An interrupt meant for an older launch of the activation (a lower fencing token) leaves
    // this one running: the command and a later launch may cross.
    h.send(
        "h1",
        &ToNode::Interrupt(Interrupt {
            activation_id: interrupting.activation_id.clone(),
            reason: "an older copy".into(),
            up_to_token: Some(interrupting.fencing_token - 1),
        }),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !h.reports()
            .iter()
            .any(|r| matches!(r, ToManager::Activation(a)
            if a.activation_id == interrupting.activation_id
                && matches!(a.event, ActivationEvent::Finished { .. }))),
        "an interrupt for an older launch ended the newer one"
    );
    // Interrupt by activation id (up to its own token), then stop by launch setting.
    h.send(
        "h1",
        &ToNode::Interrupt(Interrupt {
            activation_id: interrupting.activation_id.clone(),
            reason: "test".into(),
            up_to_token: Some(interrupting.fencing_token),
        }),
    )
    .await;
    assert_eq!(
        h.finished(&interrupting.activation_id, T).await.0,
        ActivationResult::Interrupted
    );
    let again = long(&h, OverlapPolicy::Skip);
    h.send("h1", &ToNode::Launch(again.clone())).await;
    h.started(&again.activation_id).await;
    h.send(
        "h1",
        &ToNode::Stop(Stop {
            launch_setting: "app.sleep.1".into(),
            reason: "disabled".into(),
        }),
    )
    .await;
    assert_eq!(
        h.finished(&again.activation_id, T).await.0,
        ActivationResult::Interrupted
    );
    assert_eq!(runs.lock().expect("lock").len(), 4);
    node.shutdown().await;
    h.cleanup().await;
}

/// A full node never drops a launch: the one beyond its capacity is accepted, counted in the
/// heartbeat, and starts as soon as the slot frees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launches_beyond_capacity_wait_for_a_slot() {
    let h = Harness::new().await;
    let (agent, runs) = sleeper();
    let node = h
        .node("h1")
        .capacity(1)
        .standalone(sleeper_spec(), agent)
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");
    let mut a = h.launch("app.sleep.1", "sleep");
    a.parameters.insert("duration".into(), json!("2s"));
    h.send("h1", &ToNode::Launch(a.clone())).await;
    h.started(&a.activation_id).await;
    let mut b = h.launch("app.sleep.2", "sleep");
    b.parameters.insert("duration".into(), json!("100ms"));
    h.send("h1", &ToNode::Launch(b.clone())).await;
    h.wait_event(&b.activation_id, T, |e| {
        matches!(e, ActivationEvent::Accepted)
    })
    .await;
    // Queued while the first runs: in the heartbeats, not started, never skipped.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let beats: Vec<Vec<String>> = h
        .reports()
        .into_iter()
        .filter_map(|r| match r {
            ToManager::Heartbeat(hb) => {
                Some(hb.running.into_iter().map(|ls| ls.launch_setting).collect())
            }
            _ => None,
        })
        .collect();
    assert!(
        beats.iter().flatten().any(|ls| ls == "app.sleep.2"),
        "the queued launch is reported running: {beats:?}"
    );
    let events_of_b = |h: &Harness| {
        h.reports()
            .into_iter()
            .filter_map(|r| match r {
                ToManager::Activation(e) if e.activation_id == b.activation_id => Some(e.event),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let early = events_of_b(&h);
    assert!(
        !early.iter().any(|e| matches!(
            e,
            ActivationEvent::Started | ActivationEvent::Skipped { .. }
        )),
        "{early:?}"
    );
    assert_eq!(
        h.finished(&a.activation_id, T).await.0,
        ActivationResult::Succeeded
    );
    assert_eq!(
        h.finished(&b.activation_id, T).await.0,
        ActivationResult::Succeeded
    );
    assert_eq!(runs.lock().expect("lock").len(), 2);
    node.shutdown().await;
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_commands_are_quarantined_and_counted() {
    let h = Harness::new().await;
    let (agent, _) = sleeper();
    let node = h
        .node("h1")
        .standalone(sleeper_spec(), agent)
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");
    h.send_raw("h1", b"not json at all").await;
    h.send_raw("h1", br#"{"v":0,"type":"launch"}"#).await;
    h.send_raw("h1", br#"{"v":1,"type":"self-destruct"}"#).await;
    // A launch of a newer version is read, but without an activation it cannot be answered.
    h.send_raw("h1", br#"{"v":99,"type":"launch"}"#).await;

    let quarantined = h.take(&h.topology.names().quarantine_queue(), 4, T).await;
    assert_eq!(quarantined.len(), 4);
    let reasons: Vec<String> = quarantined
        .iter()
        .map(|m| {
            let headers = m.delivery.properties.headers().clone().expect("headers");
            match headers.inner().get(QUARANTINE_REASON_HEADER) {
                Some(lapin::types::AMQPValue::LongString(s)) => {
                    String::from_utf8_lossy(s.as_bytes()).into_owned()
                }
                other => panic!("no reason: {other:?}"),
            }
        })
        .collect();
    assert!(reasons[0].contains("JSON"), "{reasons:?}");
    assert!(reasons[1].contains("version 0"), "{reasons:?}");
    assert!(reasons[2].contains("self-destruct"), "{reasons:?}");
    assert!(reasons[3].contains("activation_id"), "{reasons:?}");
    assert_eq!(quarantined[0].delivery.data, b"not json at all");

    // The node still works and counts what it rejected.
    let l = h.launch("app.sleep.1", "sleep");
    h.send("h1", &ToNode::Launch(l.clone())).await;
    assert_eq!(
        h.finished(&l.activation_id, T).await.0,
        ActivationResult::Succeeded
    );
    h.wait_for(
        "heartbeat counting 4",
        T,
        |r| matches!(r, ToManager::Heartbeat(hb) if hb.quarantined == 4),
    )
    .await;
    node.shutdown().await;
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_registrations_are_refused_at_start() {
    let (a, _) = sleeper();
    let (b, _) = sleeper();
    let err = agent_client::NodeBuilder::new("app", "h1")
        .standalone(sleeper_spec(), a)
        .standalone(sleeper_spec(), b)
        .standalone(agent_client::AgentSpec::new("Bad Id"), sleeper().0)
        .start()
        .await
        .expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains("registered twice") && text.contains("Bad Id"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_are_interrupted_at_their_maximum_run_time() {
    let h = Harness::new().await;
    let (agent, _) = sleeper();
    let node = h
        .node("h1")
        .standalone(sleeper_spec(), agent)
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");
    let mut l = h.launch("app.sleep.1", "sleep");
    l.parameters.insert("duration".into(), json!("30s"));
    l.max_run_time = Some(agent_client::domain::HumanDuration::from_millis(300));
    let sent = tokio::time::Instant::now();
    h.send("h1", &ToNode::Launch(l.clone())).await;
    assert_eq!(
        h.finished(&l.activation_id, T).await.0,
        ActivationResult::Interrupted
    );
    let took = sent.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
    node.shutdown().await;
    h.cleanup().await;
}
