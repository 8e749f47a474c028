//! Data messages: one shared subscription across nodes (every message processed once), the
//! retry ladder, dead letters with every header, park, the "temporarily unavailable" budget,
//! the breaker, a scheduled run's idle end and replay tokens.

use crate::{
    harness::{Harness, fast_retry},
    node::NodeProcess,
};
use agent_client::domain::{
    HumanDuration,
    catalog::{DeadLetterPolicy, LaunchKind},
    policy::retry_ladder,
    wire::{self, ActivationResult, FailureReport, Launch, ToManager, ToNode},
};
use lapin::types::AMQPValue;
use serde_json::{Value, json};
use std::{collections::BTreeMap, time::Duration};

const T: Duration = Duration::from_secs(15);

fn body(script: &Value) -> Vec<u8> {
    script.to_string().into_bytes()
}

fn failures(h: &Harness, launch: &Launch) -> Vec<FailureReport> {
    h.reports()
        .into_iter()
        .filter_map(|r| match r {
            ToManager::Failure(f) if f.activation_id == launch.activation_id => Some(f),
            _ => None,
        })
        .collect()
}

fn tripped(h: &Harness) -> bool {
    h.reports()
        .iter()
        .any(|r| matches!(r, ToManager::BreakerTripped(_)))
}

/// A stream of `script-messages` with `max_deliveries`, its topology declared, running on
/// every node of `hosts`.
async fn stream(
    h: &Harness,
    hosts: &[&str],
    max_deliveries: u32,
    edit: impl Fn(&mut Launch),
) -> (Launch, String) {
    let address = h.address("events");
    let mut launch = h
        .stream("app.script-messages.1", "script-messages", &address)
        .await;
    launch.retry = fast_retry(max_deliveries);
    launch.retry_steps = retry_ladder(&launch.retry);
    edit(&mut launch);
    h.subscribe(&launch).await;
    let base = launch.clone();
    for (i, host) in hosts.iter().enumerate() {
        let mut l = base.clone();
        if i > 0 {
            l.activation_id = wire::ActivationId(uuid::Uuid::new_v4().to_string());
        }
        h.send(host, &ToNode::Launch(l.clone())).await;
        h.started(&l.activation_id).await;
        if i == 0 {
            launch = l;
        }
    }
    (launch, address)
}

fn text(v: &AMQPValue) -> String {
    match v {
        AMQPValue::LongString(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        other => panic!("a text header, not {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_on_one_subscription_process_every_message_exactly_once() {
    let h = Harness::new().await;
    let (n1, _) = NodeProcess::start(&h, "n1", 4).await;
    let (n2, _) = NodeProcess::start(&h, "n2", 4).await;
    let (_, address) = stream(&h, &["n1", "n2"], 3, |_| {}).await;
    for i in 0..60 {
        h.publish(
            &address,
            &body(&json!({"id": format!("m{i}"), "hold": "5ms"})),
            &[],
        )
        .await;
    }
    let all = || {
        let mut ids: Vec<String> = n1
            .deliveries("app.script-messages.1")
            .into_iter()
            .chain(n2.deliveries("app.script-messages.1"))
            .map(|r| r["id"].as_str().expect("an id").to_owned())
            .collect();
        ids.sort();
        ids
    };
    let deadline = tokio::time::Instant::now() + T;
    while all().len() < 60 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut expected: Vec<String> = (0..60).map(|i| format!("m{i}")).collect();
    expected.sort();
    assert_eq!(all(), expected, "each message delivered exactly once");
    for node in [&n1, &n2] {
        assert!(
            !node.deliveries("app.script-messages.1").is_empty(),
            "{} took part",
            node.host
        );
    }
    // The heartbeats count them: 60 processed over both nodes, none failed.
    let processed = |host: &str| {
        h.reports()
            .iter()
            .rev()
            .find_map(|r| match r {
                ToManager::Heartbeat(hb) if hb.host == host => hb
                    .running
                    .iter()
                    .find(|ls| ls.launch_setting == "app.script-messages.1")
                    .map(|ls| ls.counters),
                _ => None,
            })
            .unwrap_or_default()
    };
    let deadline = tokio::time::Instant::now() + T;
    while processed("n1").processed + processed("n2").processed < 60
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (c1, c2) = (processed("n1"), processed("n2"));
    assert_eq!(c1.processed + c2.processed, 60, "{c1:?} {c2:?}");
    assert_eq!(c1.failed + c2.failed, 0);
    drop((n1, n2));
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_message_comes_back_through_each_wait_queue_of_the_ladder() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let (launch, address) = stream(&h, &["n1"], 5, |_| {}).await;
    h.publish(&address, &body(&json!({"id": "flaky", "fail": 2})), &[])
        .await;
    let records = node
        .wait_records("three deliveries", T, |r| r.len() >= 3)
        .await;
    let attempts: Vec<u64> = records
        .iter()
        .map(|r| r["attempt"].as_u64().expect("n"))
        .collect();
    assert_eq!(attempts, [1, 2, 3]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(node.records().len(), 3, "processed once it succeeded");
    let f = failures(&h, &launch);
    let seen: Vec<(u32, Option<&str>)> = f
        .iter()
        .map(|f| (f.attempt, f.disposition.as_deref()))
        .collect();
    assert_eq!(
        seen,
        [
            (1, Some(wire::disposition::RETRY)),
            (2, Some(wire::disposition::RETRY))
        ]
    );
    assert!(
        f.iter()
            .all(|f| f.data_message_id.is_some() && f.report_id.is_some())
    );
    assert!(
        f[0].report_id != f[1].report_id,
        "each failure report has an id of its own"
    );
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_message_is_dead_lettered_with_every_header_and_the_stream_goes_on() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let (launch, address) = stream(&h, &["n1"], 2, |_| {}).await;
    h.publish(
        &address,
        &body(&json!({"id": "poison", "fail": 99, "error_type": "Poisoned"})),
        &[("tenant", "acme")],
    )
    .await;
    for i in 0..5 {
        h.publish(&address, &body(&json!({"id": format!("good{i}")})), &[])
            .await;
    }
    let dead = h.take(&h.topology.names().dead_letter_queue(), 1, T).await;
    assert_eq!(dead.len(), 1);
    let headers = dead[0]
        .delivery
        .properties
        .headers()
        .clone()
        .expect("headers");
    let headers: BTreeMap<String, AMQPValue> = headers
        .inner()
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let subscription = h.topology.names().subscription(&launch.launch_setting);
    for (header, value) in [
        (wire::DL_DATA_QUEUE_HEADER, "dq"),
        (wire::DL_LAUNCH_SETTING_HEADER, "app.script-messages.1"),
        (wire::DL_ERROR_TYPE_HEADER, "Poisoned"),
        (wire::DL_ERROR_MESSAGE_HEADER, "scripted failure"),
        (wire::DL_HOST_HEADER, "n1"),
        (wire::DL_QUEUE_HEADER, subscription.as_str()),
        ("tenant", "acme"),
    ] {
        assert_eq!(text(&headers[header]), value, "{header}");
    }
    for header in [wire::FIRST_FAILURE_HEADER, wire::DL_LAST_FAILURE_HEADER] {
        let at = text(&headers[header]);
        assert!(
            chrono::DateTime::parse_from_rfc3339(&at).is_ok(),
            "{header} is RFC 3339: {at}"
        );
    }
    assert_eq!(
        headers[wire::DL_ATTEMPTS_HEADER],
        AMQPValue::LongLongInt(2),
        "attempts as an AMQP long"
    );
    let good = node
        .wait_records("the good messages", T, |r| {
            r.iter()
                .filter(|r| r["id"].as_str().is_some_and(|id| id.starts_with("good")))
                .count()
                == 5
        })
        .await;
    assert_eq!(good.iter().filter(|r| r["id"] == "poison").count(), 2);
    // The failure report of the last attempt follows the dead letter (it says where the
    // message went once the broker confirmed it), so it may come after the copy is read.
    h.wait_for("the last attempt's failure report", T, |r| {
        matches!(r, ToManager::Failure(f) if f.activation_id == launch.activation_id
            && f.disposition.as_deref() == Some(wire::disposition::DEAD_LETTER))
    })
    .await;
    let f = failures(&h, &launch);
    let dispositions: Vec<Option<&str>> = f.iter().map(|f| f.disposition.as_deref()).collect();
    assert_eq!(
        dispositions,
        [
            Some(wire::disposition::RETRY),
            Some(wire::disposition::DEAD_LETTER)
        ],
        "one report per attempt"
    );
    assert!(!tripped(&h), "one poison message does not trip the breaker");
    assert!(
        !h.reports().iter().any(|r| matches!(r, ToManager::Activation(a) if matches!(a.event, wire::ActivationEvent::Finished { .. }))),
        "the stream goes on"
    );
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn park_gives_a_message_a_second_round_then_dead_letters_it() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let (_, address) = stream(&h, &["n1"], 2, |l| {
        l.dead_letter.policy = DeadLetterPolicy::Park;
        l.dead_letter.park_cooldown = HumanDuration::from_millis(300);
    })
    .await;
    h.publish(&address, &body(&json!({"id": "stubborn", "fail": 99})), &[])
        .await;
    let dead = h.take(&h.topology.names().dead_letter_queue(), 1, T).await;
    assert_eq!(dead.len(), 1);
    let headers = dead[0]
        .delivery
        .properties
        .headers()
        .clone()
        .expect("headers");
    assert!(
        headers.inner().contains_key(wire::PARKED_HEADER),
        "it was parked first"
    );
    let attempts: Vec<u64> = node
        .records()
        .iter()
        .map(|r| r["attempt"].as_u64().expect("n"))
        .collect();
    assert_eq!(attempts, [1, 2, 1, 2], "two rounds of two attempts");
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn temporarily_unavailable_uses_no_attempt_until_its_budget_is_spent() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let (launch, address) = stream(&h, &["n1"], 2, |l| {
        l.unavailable_for = HumanDuration::from_millis(700);
        l.failure_threshold = 3;
    })
    .await;
    h.publish(
        &address,
        &body(&json!({"id": "later", "unavailable": 99})),
        &[],
    )
    .await;
    let dead = h.take(&h.topology.names().dead_letter_queue(), 1, T).await;
    assert_eq!(dead.len(), 1);
    let headers = dead[0]
        .delivery
        .properties
        .headers()
        .clone()
        .expect("headers");
    assert_eq!(
        text(&headers.inner()[wire::DL_ERROR_TYPE_HEADER]),
        "TemporarilyUnavailable"
    );
    let records = node.records();
    assert!(records.len() >= 3, "{records:#?}");
    assert!(
        records.iter().all(|r| r["attempt"] == 1),
        "no attempt used: {records:#?}"
    );
    let answers: Vec<u64> = records
        .iter()
        .map(|r| r["unavailable"].as_u64().expect("n"))
        .collect();
    assert!(
        answers.windows(2).all(|w| w[1] == w[0] + 1) && answers[0] == 0,
        "each answer counted: {answers:?}"
    );
    assert!(failures(&h, &launch).iter().all(|f| f.temporary));
    assert!(
        !tripped(&h),
        "answers 'temporarily unavailable' never trip the breaker"
    );
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_breaker_trips_at_m_failures_of_distinct_messages() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    // M = 6, so N = 2: alternating error types never make two of a kind in a row.
    let (launch, address) = stream(&h, &["n1"], 1, |l| l.failure_threshold = 6).await;
    for i in 0..6 {
        let error_type = if i % 2 == 0 { "Even" } else { "Odd" };
        h.publish(
            &address,
            &body(&json!({"id": format!("bad{i}"), "fail": 99, "error_type": error_type})),
            &[],
        )
        .await;
        node.wait_records("one delivery", T, |r| r.len() > i).await;
    }
    let ToManager::BreakerTripped(trip) = h
        .wait_for("a trip", T, |r| matches!(r, ToManager::BreakerTripped(_)))
        .await
    else {
        unreachable!()
    };
    assert_eq!(trip.consecutive_failures, 6);
    assert_eq!(trip.same_type_failures, 1);
    assert_eq!(trip.last_errors.len(), 5);
    assert_eq!(trip.activation_id, launch.activation_id);
    assert_eq!(
        h.finished(&launch.activation_id, T).await.0,
        ActivationResult::Failed
    );
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_run_drains_its_messages_and_ends_when_idle() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let address = h.address("events");
    let mut launch = h
        .stream("app.script-messages.1", "script-messages", &address)
        .await;
    launch.kind = LaunchKind::Scheduled;
    launch.idle_timeout = Some(HumanDuration::from_millis(600));
    h.subscribe(&launch).await;
    for i in 0..3 {
        h.publish(&address, &body(&json!({"id": format!("m{i}")})), &[])
            .await;
    }
    h.send("n1", &ToNode::Launch(launch.clone())).await;
    assert_eq!(
        h.finished(&launch.activation_id, T).await.0,
        ActivationResult::Succeeded
    );
    assert_eq!(node.records().len(), 3, "every waiting message, then idle");
    drop(node);
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_dead_letter_reports_what_became_of_it() {
    let h = Harness::new().await;
    let (node, _) = NodeProcess::start(&h, "n1", 2).await;
    let (launch, address) = stream(&h, &["n1"], 1, |_| {}).await;
    h.publish(
        &address,
        &body(&json!({"id": "fixed"})),
        &[(wire::replay::REPLAY_HEADER, "42.1")],
    )
    .await;
    h.publish(
        &address,
        &body(&json!({"id": "still-broken", "fail": 9})),
        &[(wire::replay::REPLAY_HEADER, "43.2")],
    )
    .await;
    let ToManager::ReplayProcessed(done) = h
        .wait_for("replay-processed", T, |r| {
            matches!(r, ToManager::ReplayProcessed(_))
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!(done.replay.to_string(), "42.1");
    assert_eq!(done.activation_id, launch.activation_id);
    let dead = h.take(&h.topology.names().dead_letter_queue(), 1, T).await;
    let headers = dead[0]
        .delivery
        .properties
        .headers()
        .clone()
        .expect("headers");
    assert_eq!(text(&headers.inner()[wire::replay::REPLAY_HEADER]), "43.2");
    let deadline = tokio::time::Instant::now() + T;
    while failures(&h, &launch).is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        failures(&h, &launch)
            .first()
            .and_then(|f| f.replay)
            .map(|t| t.to_string()),
        Some("43.2".to_owned())
    );
    drop(node);
    h.cleanup().await;
}
