//! Traces: the node continues the trace a launch was published under. Its run is a span whose
//! parent is the launch's `traceparent`, every report of the run carries the run's context,
//! and each data message it handles is a span under the run, linked to the producer's span
//! when the message carries one. The node exports them over OTLP/HTTP to
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (protobuf or JSON, as the specification allows).

use crate::{
    harness::{Harness, amqp_url},
    node::NodeProcess,
    otlp::{Got, Spans, ids_of, receiver},
};
use agent_client::domain::wire::{self, ActivationResult, ToManager, ToNode};
use serde_json::json;
use std::time::Duration;

const T: Duration = Duration::from_secs(15);

/// A fresh W3C context, as the manager's relay would send: (traceparent, trace id, span id).
fn context() -> (String, Vec<u8>, Vec<u8>) {
    let trace = uuid::Uuid::new_v4().simple().to_string();
    let span = &uuid::Uuid::new_v4().simple().to_string()[..16];
    let tp = format!("00-{trace}-{span}-01");
    let (t, s) = ids_of(&tp).expect("a valid traceparent");
    (tp, t, s)
}

/// Starts a node exporting its spans to a receiver of the test, every 100 ms.
async fn traced_node(h: &Harness, host: &str) -> (NodeProcess, Spans) {
    let (url, spans) = receiver().await;
    let (node, _) = NodeProcess::start_env(
        h,
        host,
        2,
        &amqp_url(),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", url.as_str()),
            ("OTEL_SERVICE_NAME", "conformance-node"),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    )
    .await;
    (node, spans)
}

/// Waits for an exported span matching `pred`.
async fn span(spans: &Spans, what: &str, pred: impl Fn(&Got) -> bool) -> Got {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        if let Some(s) = spans.lock().expect("spans").iter().find(|s| pred(s)) {
            return s.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {what} among the exported spans: {:?}",
            spans.lock().expect("spans")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The `traceparent` of every report about `activation`.
fn report_contexts(h: &Harness, activation: &wire::ActivationId) -> Vec<Option<String>> {
    h.traced_reports()
        .into_iter()
        .filter_map(|(r, tp)| match r {
            ToManager::Activation(a) if &a.activation_id == activation => Some(tp),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_continues_the_launchs_trace_and_its_reports_carry_the_run() {
    let h = Harness::new().await;
    let (node, spans) = traced_node(&h, "n1").await;
    let (tp, trace, parent) = context();
    let mut launch = h.launch("app.script.1", "script");
    launch.parameters = json!({"sleep": "50ms"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    h.send_traced("n1", &ToNode::Launch(launch.clone()), &tp)
        .await;
    assert_eq!(
        h.finished(&launch.activation_id, T).await,
        (ActivationResult::Succeeded, None)
    );
    let id = launch.activation_id.0.clone();
    let run = span(&spans, "the run's span", |s| {
        s.name == "activation" && s.attr("activation_id") == Some(id.as_str())
    })
    .await;
    assert_eq!(run.trace, trace, "the run is in the launch's trace");
    assert_eq!(
        run.parent, parent,
        "the run is a child of the launch's span"
    );
    assert_eq!(run.attr("launch_setting"), Some("app.script.1"));
    assert_eq!(run.attr("host"), Some("n1"));
    assert_eq!(run.attr("agent"), Some("script"));
    assert_eq!(
        run.service, "conformance-node",
        "OTEL_SERVICE_NAME names it"
    );
    // accepted, started, finished: each carries the run's context.
    let contexts = report_contexts(&h, &launch.activation_id);
    assert!(contexts.len() >= 3, "{contexts:?}");
    for tp in contexts {
        let (t, s) = tp
            .as_deref()
            .and_then(ids_of)
            .unwrap_or_else(|| panic!("a report without a valid traceparent: {tp:?}"));
        assert_eq!(
            (t, s),
            (run.trace.clone(), run.id.clone()),
            "the report names the run"
        );
    }
    node.terminate().await;
    h.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_message_is_a_span_under_the_run_linked_to_its_producer() {
    let h = Harness::new().await;
    let (node, spans) = traced_node(&h, "n1").await;
    let address = h.address("events");
    let launch = h
        .stream("app.script-messages.1", "script-messages", &address)
        .await;
    h.subscribe(&launch).await;
    let (tp, trace, _) = context();
    h.send_traced("n1", &ToNode::Launch(launch.clone()), &tp)
        .await;
    h.started(&launch.activation_id).await;
    let (produced, producer_trace, producer_span) = context();
    h.publish(
        &address,
        json!({"id": "traced"}).to_string().as_bytes(),
        &[("traceparent", produced.as_str())],
    )
    .await;
    h.publish(&address, json!({"id": "plain"}).to_string().as_bytes(), &[])
        .await;
    let id = launch.activation_id.0.clone();
    // The run goes on (its span is exported when it ends): its context is the one its
    // `started` report carries.
    let (run_trace, run_id) = report_contexts(&h, &launch.activation_id)
        .into_iter()
        .flatten()
        .find_map(|tp| ids_of(&tp))
        .expect("the started report names the run");
    assert_eq!(run_trace, trace, "the run is in the launch's trace");
    let traced = span(&spans, "the traced message's span", |s| {
        s.name == "message" && s.links.iter().any(|(_, sp)| *sp == producer_span)
    })
    .await;
    assert_eq!(traced.trace, trace, "a message span is in the run's trace");
    assert_eq!(
        traced.parent, run_id,
        "a message span is a child of the run"
    );
    assert!(
        traced
            .links
            .iter()
            .any(|l| *l == (producer_trace.clone(), producer_span.clone())),
        "{traced:?}"
    );
    let plain = span(&spans, "the plain message's span", |s| {
        s.name == "message" && s.parent == run_id && s.links.is_empty()
    })
    .await;
    assert_eq!(plain.attr("activation_id"), Some(id.as_str()));
    node.terminate().await;
    h.cleanup().await;
}
