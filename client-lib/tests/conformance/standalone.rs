//! Standalone runs: the lifecycle and its reports, typed parameters, failures, overlap,
//! capacity, interrupt with fencing tokens, stop, the maximum run time, and launches the node
//! cannot run.

use crate::{
    harness::{Harness, from_a_later_release},
    node::NodeProcess,
};
use agent_client::domain::{
    catalog::OverlapPolicy,
    wire::{self, ActivationEvent, ActivationResult, Interrupt, Stop, ToManager, ToNode},
};
use serde_json::{Value, json};
use std::time::Duration;

const T: Duration = Duration::from_secs(15);

fn script(h: &Harness, ls: &str, params: Value) -> wire::Launch {
    let mut l = h.launch(ls, "script");
    l.parameters = params.as_object().cloned().unwrap_or_default();
    l
}

/// The events of one activation, in the order they arrived.
fn events(h: &Harness, id: &wire::ActivationId) -> Vec<ActivationEvent> {
    h.reports()
        .into_iter()
        .filter_map(|r| match r {
            ToManager::Activation(a) if &a.activation_id == id => Some(a.event),
            _ => None,
        })
        .collect()
}

fn is_start(r: &Value, id: &wire::ActivationId) -> bool {
    r["event"] == "start" && r["activation"] == id.0.as_str()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_runs_with_its_typed_parameters_and_reports_every_step() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let mut launch = script(
        &h,
        "app.script.1",
        json!({"sleep": "50ms", "progress": true}),
    );
    launch.fencing_token = 7;
    h.send("n1", &ToNode::Launch(launch.clone())).await;
    assert_eq!(
        h.finished(&launch.activation_id, T).await,
        (ActivationResult::Succeeded, None)
    );
    let kinds: Vec<&str> = events(&h, &launch.activation_id)
        .iter()
        .map(|e| match e {
            ActivationEvent::Accepted => "accepted",
            ActivationEvent::Started => "started",
            ActivationEvent::Progress { .. } => "progress",
            ActivationEvent::Finished { .. } => "finished",
            ActivationEvent::Skipped { .. } => "skipped",
        })
        .collect();
    assert_eq!(kinds, ["accepted", "started", "progress", "finished"]);
    assert!(
        events(&h, &launch.activation_id).contains(&ActivationEvent::Progress {
            done: Some(1),
            total: Some(1),
            message: "slept".into()
        })
    );
    for r in h.reports() {
        if let ToManager::Activation(a) = r
            && a.activation_id == launch.activation_id
        {
            assert_eq!((a.fencing_token, a.host.as_str()), (7, "n1"), "{a:?}");
        }
    }
    let records = node
        .wait_records("the run's end", T, |r| {
            r.iter().any(|r| r["event"] == "end")
        })
        .await;
    let start = records
        .iter()
        .find(|r| is_start(r, &launch.activation_id))
        .expect("a start record");
    assert_eq!(start["launch_setting"], "app.script.1");
    assert_eq!(start["params"]["progress"], true, "{start}");
    let slept: agent_client::domain::HumanDuration = start["params"]["sleep"]
        .as_str()
        .expect("a duration")
        .parse()
        .expect("a duration");
    assert_eq!(slept.0, Duration::from_millis(50));
    assert_eq!(records.last().expect("end")["outcome"], "succeeded");
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_is_reported_once_with_its_type_and_ends_the_run_failed() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let launch = script(&h, "app.script.1", json!({"fail": "LedgerClosed"}));
    h.send("n1", &ToNode::Launch(launch.clone())).await;
    let (result, error) = h.finished(&launch.activation_id, T).await;
    assert_eq!(result, ActivationResult::Failed);
    assert!(error.unwrap_or_default().contains("LedgerClosed"));
    let failures: Vec<_> = h
        .reports()
        .into_iter()
        .filter_map(|r| match r {
            ToManager::Failure(f) if f.activation_id == launch.activation_id => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    let f = &failures[0];
    assert_eq!(
        (
            f.error_type.as_str(),
            f.message.as_str(),
            f.attempt,
            f.temporary
        ),
        ("LedgerClosed", "scripted failure", 1, false)
    );
    assert!(f.report_id.is_some(), "a failure report carries its id");
    assert_eq!(f.agent, "script");
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlap_skip_refuses_a_second_run_and_interrupt_replaces_the_first() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 4).await;
    let mut first = script(&h, "app.script.1", json!({"sleep": "30s"}));
    first.overlap = OverlapPolicy::Skip;
    h.send("n1", &ToNode::Launch(first.clone())).await;
    h.started(&first.activation_id).await;

    let mut second = script(&h, "app.script.1", json!({}));
    second.overlap = OverlapPolicy::Skip;
    h.send("n1", &ToNode::Launch(second.clone())).await;
    let skipped = h
        .wait_event(&second.activation_id, T, |e| {
            matches!(e, ActivationEvent::Skipped { .. })
        })
        .await;
    assert!(matches!(skipped, ActivationEvent::Skipped { reason } if !reason.is_empty()));

    let mut third = script(&h, "app.script.1", json!({}));
    third.overlap = OverlapPolicy::Interrupt;
    h.send("n1", &ToNode::Launch(third.clone())).await;
    assert_eq!(
        h.finished(&first.activation_id, T).await.0,
        ActivationResult::Interrupted
    );
    assert_eq!(
        h.finished(&third.activation_id, T).await.0,
        ActivationResult::Succeeded
    );
    let records = node.records();
    let ended_first = records
        .iter()
        .position(|r| r["event"] == "end" && r["activation"] == first.activation_id.0.as_str())
        .expect("the first run ended");
    let started_third = records
        .iter()
        .position(|r| is_start(r, &third.activation_id))
        .expect("the third run started");
    assert!(
        ended_first < started_third,
        "the replacing run starts once the interrupted one ended: {records:#?}"
    );
    assert!(
        !records.iter().any(|r| is_start(r, &second.activation_id)),
        "a skipped launch never runs"
    );
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_node_accepts_a_launch_and_starts_it_when_a_slot_frees() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 1).await;
    let busy = script(&h, "app.script.1", json!({"sleep": "800ms"}));
    h.send("n1", &ToNode::Launch(busy.clone())).await;
    h.started(&busy.activation_id).await;
    let waiting = script(&h, "app.script.2", json!({}));
    h.send("n1", &ToNode::Launch(waiting.clone())).await;
    h.wait_event(&waiting.activation_id, T, |e| {
        matches!(e, ActivationEvent::Accepted)
    })
    .await;
    assert!(
        !events(&h, &busy.activation_id)
            .iter()
            .any(|e| matches!(e, ActivationEvent::Finished { .. })),
        "accepted while the only slot is busy"
    );
    assert_eq!(
        h.finished(&waiting.activation_id, T).await.0,
        ActivationResult::Succeeded
    );
    let reports = h.reports();
    let position = |id: &wire::ActivationId, pred: fn(&ActivationEvent) -> bool| {
        reports
            .iter()
            .position(|r| matches!(r, ToManager::Activation(a) if &a.activation_id == id && pred(&a.event)))
            .expect("reported")
    };
    assert!(
        position(&busy.activation_id, |e| matches!(
            e,
            ActivationEvent::Finished { .. }
        )) < position(&waiting.activation_id, |e| matches!(
            e,
            ActivationEvent::Started
        )),
        "it starts once the slot is free"
    );
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupts_respect_fencing_tokens_and_stop_ends_every_run_of_its_launch_setting() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 4).await;
    let mut run = script(&h, "app.script.1", json!({"sleep": "30s"}));
    run.fencing_token = 5;
    h.send("n1", &ToNode::Launch(run.clone())).await;
    h.started(&run.activation_id).await;
    let interrupt = |up_to_token| {
        ToNode::Interrupt(Interrupt {
            activation_id: run.activation_id.clone(),
            reason: "test".into(),
            up_to_token: Some(up_to_token),
        })
    };
    h.send("n1", &interrupt(4)).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        !events(&h, &run.activation_id)
            .iter()
            .any(|e| matches!(e, ActivationEvent::Finished { .. })),
        "an interrupt for an older dispatch leaves the run alone"
    );
    h.send("n1", &interrupt(5)).await;
    assert_eq!(
        h.finished(&run.activation_id, T).await.0,
        ActivationResult::Interrupted
    );

    let a = script(&h, "app.script.2", json!({"sleep": "30s"}));
    let b = script(&h, "app.script.2", json!({"sleep": "30s"}));
    let other = script(&h, "app.script.3", json!({"sleep": "2s"}));
    for l in [&a, &b, &other] {
        h.send("n1", &ToNode::Launch(l.clone())).await;
        h.started(&l.activation_id).await;
    }
    h.send(
        "n1",
        &ToNode::Stop(Stop {
            launch_setting: "app.script.2".into(),
            reason: "disabled".into(),
        }),
    )
    .await;
    for l in [&a, &b] {
        assert_eq!(
            h.finished(&l.activation_id, T).await.0,
            ActivationResult::Interrupted
        );
    }
    assert_eq!(
        h.finished(&other.activation_id, T).await.0,
        ActivationResult::Succeeded,
        "another launch setting's run goes on"
    );
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_maximum_run_time_interrupts_a_run() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let mut run = script(&h, "app.script.1", json!({"sleep": "30s"}));
    run.max_run_time = Some(agent_client::domain::HumanDuration::from_millis(300));
    h.send("n1", &ToNode::Launch(run.clone())).await;
    assert_eq!(
        h.finished(&run.activation_id, T).await.0,
        ActivationResult::Interrupted
    );
    drop(node);
    h.cleanup().await;
}

/// A manager of a later release: unknown fields at every depth and a newer version still run;
/// an unknown word or agent is answered `skipped` with why, and nothing else happens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launches_of_a_later_release_run_and_those_the_node_cannot_run_are_skipped_with_why() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let newer = script(&h, "app.script.1", json!({"sleep": "10ms"}));
    h.send_raw("n1", &from_a_later_release(&ToNode::Launch(newer.clone())))
        .await;
    assert_eq!(
        h.finished(&newer.activation_id, T).await.0,
        ActivationResult::Succeeded
    );

    let unknown_word = script(&h, "app.script.1", json!({}));
    let mut value: Value =
        serde_json::from_slice(&wire::encode_command(&ToNode::Launch(unknown_word.clone())))
            .expect("JSON");
    value["kind"] = json!("eventually");
    h.send_raw("n1", value.to_string().as_bytes()).await;
    let unknown_agent = h.launch("app.ghost.1", "ghost");
    h.send("n1", &ToNode::Launch(unknown_agent.clone())).await;
    for (id, word) in [
        (&unknown_word.activation_id, "eventually"),
        (&unknown_agent.activation_id, "ghost"),
    ] {
        let event = h
            .wait_event(id, T, |e| matches!(e, ActivationEvent::Skipped { .. }))
            .await;
        let ActivationEvent::Skipped { reason } = event else {
            unreachable!()
        };
        assert!(reason.contains(word), "the reason names `{word}`: {reason}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !node
            .records()
            .iter()
            .any(|r| is_start(r, &unknown_word.activation_id)),
        "a launch the node cannot read never runs"
    );
    drop(node);
    h.cleanup().await;
}
