//! Traces in an application that embeds the library: with an exporter set up in the process
//! (`Telemetry` and its layer), a launch published under a trace context runs as a span of
//! that trace, and its reports carry the run's context. The node conformance suite checks the
//! same of a node process; this is the library as an application uses it.

use crate::{
    agents::{Sleeper, sleeper_spec},
    harness::Harness,
    otlp::{ids_of, receiver},
};
use agent_client::{
    domain::wire::{ActivationResult, ToManager, ToNode},
    telemetry::Telemetry,
};
use std::time::Duration;
use tracing_subscriber::{layer::SubscriberExt, util::SubscriberInitExt};

const T: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedded_node_runs_a_launch_in_its_trace() {
    let (url, spans) = receiver().await;
    let telemetry = Telemetry::to_collector(&url, "shop").expect("an exporter");
    // Before the harness's own subscriber, which then stays out.
    tracing_subscriber::registry()
        .with(telemetry.layer())
        .try_init()
        .expect("the test's subscriber");
    let h = Harness::new().await;
    let node = h
        .node("h1")
        .standalone(
            sleeper_spec(),
            Sleeper {
                runs: std::sync::Arc::default(),
            },
        )
        .start()
        .await
        .expect("starts");
    node.ready(T).await.expect("ready");
    let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let launch = h.launch("app.sleep.1", "sleep");
    h.send_traced("h1", &ToNode::Launch(launch.clone()), tp)
        .await;
    assert_eq!(
        h.finished(&launch.activation_id, T).await.0,
        ActivationResult::Succeeded
    );
    node.shutdown().await;
    tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .expect("flushed");

    let got = spans.lock().expect("spans").clone();
    let run = got
        .iter()
        .find(|s| {
            s.name == "activation" && s.attr("activation_id") == Some(&launch.activation_id.0)
        })
        .unwrap_or_else(|| panic!("the run's span among {got:?}"));
    let (trace, parent) = ids_of(tp).expect("valid");
    assert_eq!((&run.trace, &run.parent), (&trace, &parent));
    assert_eq!(run.service, "shop");
    let contexts: Vec<Option<String>> = h
        .traced_reports()
        .into_iter()
        .filter_map(|(r, tp)| match r {
            ToManager::Activation(a) if a.activation_id == launch.activation_id => Some(tp),
            _ => None,
        })
        .collect();
    assert!(contexts.len() >= 3, "{contexts:?}");
    for c in contexts {
        assert_eq!(
            c.as_deref(),
            Some(run.traceparent().as_str()),
            "a report names the run"
        );
    }
    h.cleanup().await;
}
