//! A node of this release talking to a manager of a later one: a launch carrying fields it does
//! not know at every depth and a newer protocol version still runs (standalone and stream, its
//! retries through the ladder the manager sent), and a launch it cannot understand is answered
//! `skipped` with what it could not read, not quarantined in silence.

use crate::{
    agents::{Probe, Sleeper, log, probe_spec, seen, sleeper_spec},
    harness::{Harness, fast_retry, from_a_later_release},
};
use agent_client::{
    AgentError,
    domain::{
        policy::RetryStep,
        wire::{self, ActivationEvent, ActivationResult, ToManager, ToNode},
    },
};
use serde_json::{Value, json};
use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

const T: Duration = Duration::from_secs(10);

/// [`from_a_later_release`], checked to carry a field of the later release inside each
/// catalog object a launch embeds.
fn later(command: &ToNode) -> Vec<u8> {
    let bytes = from_a_later_release(command);
    let value: Value = serde_json::from_slice(&bytes).expect("JSON");
    let mut nested = vec!["/retry/x_later", "/dead_letter/x_later"];
    if value.get("subscription").is_some() {
        nested.push("/subscription/filter/x_later");
    }
    for path in nested {
        assert!(
            value.pointer(path).is_some(),
            "{path}: a field of the later release"
        );
    }
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_of_a_later_release_runs_and_one_it_cannot_read_is_answered() {
    let h = Harness::new().await;
    let runs = Arc::new(Mutex::new(Vec::new()));
    let node = h
        .node("h1")
        .standalone(
            sleeper_spec(),
            Sleeper {
                runs: Arc::clone(&runs),
            },
        )
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");

    let mut launch = h.launch("app.sleep.1", "sleep");
    launch.parameters = serde_json::Map::from_iter([("duration".to_owned(), json!("10ms"))]);
    h.send_raw("h1", &later(&ToNode::Launch(launch.clone())))
        .await;
    assert_eq!(
        h.finished(&launch.activation_id, T).await,
        (ActivationResult::Succeeded, None),
        "unknown fields at every depth and a newer version do not stop a run"
    );

    // A word of a later release (an overlap policy this node does not know): not runnable,
    // answered at once with the reason.
    let unknown = h.launch("app.sleep.1", "sleep");
    let mut value: Value =
        serde_json::from_slice(&wire::encode_command(&ToNode::Launch(unknown.clone())))
            .expect("JSON");
    value["overlap"] = json!("queue-behind");
    h.send_raw("h1", value.to_string().as_bytes()).await;
    let ToManager::Activation(report) = h
        .wait_for(
            "skipped",
            T,
            |r| matches!(r, ToManager::Activation(a) if a.activation_id == unknown.activation_id),
        )
        .await
    else {
        unreachable!()
    };
    let ActivationEvent::Skipped { reason } = &report.event else {
        panic!("the launch is answered skipped, not {:?}", report.event);
    };
    assert!(
        reason.contains("queue-behind"),
        "the reason names what it could not read: {reason}"
    );
    assert_eq!(report.fencing_token, unknown.fencing_token);
    assert_eq!(
        runs.lock().expect("lock").len(),
        1,
        "only the readable launch ran"
    );
    node.shutdown().await;
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_of_a_later_release_processes_every_message_once_and_retries_by_its_ladder() {
    let h = Harness::new().await;
    let seen_log = log();
    let failed_once = Arc::new(Mutex::new(false));
    let node = h
        .node("h1")
        .messages(
            probe_spec(),
            Probe::new("h1", &seen_log, {
                let failed_once = Arc::clone(&failed_once);
                move |m| {
                    let mut failed = failed_once.lock().expect("lock");
                    if m.body_str()? == "7" && !*failed {
                        *failed = true;
                        return Err(AgentError::failed("Flaky", "fails once"));
                    }
                    Ok(())
                }
            }),
        )
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");
    let address = h.address("orders");
    let mut launch = h.stream("app.probe.1", "probe", &address).await;
    launch.retry = fast_retry(5);
    // The manager's ladder: 400 ms from the first retry on, where the policy alone says 100.
    launch.retry_steps = vec![RetryStep {
        attempt: 1,
        delay_ms: 400,
    }];
    h.subscribe(&launch).await;
    h.send_raw("h1", &later(&ToNode::Launch(launch.clone())))
        .await;
    h.started(&launch.activation_id).await;
    for i in 0..20 {
        h.publish(&address, format!("{i}").as_bytes(), &[]).await;
    }
    let deadline = tokio::time::Instant::now() + T;
    while seen(&seen_log).len() < 21 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let all = seen(&seen_log);
    let mut bodies: Vec<u32> = all
        .iter()
        .filter(|s| s.attempt == 1)
        .map(|s| s.body.parse().expect("number"))
        .collect();
    bodies.sort_unstable();
    assert_eq!(
        bodies,
        (0..20).collect::<Vec<_>>(),
        "each message delivered once"
    );
    let seven: Vec<_> = all.iter().filter(|s| s.body == "7").collect();
    assert_eq!(seven.len(), 2, "the failed one came back once: {seven:?}");
    assert_eq!(all.len(), 21, "nothing else came twice");
    let gap = seven[1].at - seven[0].at;
    assert!(
        gap >= Duration::from_millis(400),
        "the retry waited the manager's 400 ms, not the policy's 100 ms: {gap:?}"
    );
    node.shutdown().await;
    h.cleanup().await;
}
