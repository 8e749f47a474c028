//! One trace from a schedule's fire to the node's reports, through the real broker: the
//! manager (in this process) and a demo node (a process) export spans over OTLP/HTTP to a
//! receiver inside the test, which decodes them as a collector would.

use crate::{
    harness::{CatalogBuilder, LONG, World},
    otlp::{Got, Spans, hex, receiver},
};
use agent_client::telemetry::Telemetry;
use am_services::testing::Backend;
use serde_json::json;
use tracing_subscriber::{layer::SubscriberExt, util::SubscriberInitExt};

/// Spans of this process (the manager) and of the test's nodes go to a receiver of the test.
struct Traced {
    spans: Spans,
    telemetry: Telemetry,
    url: String,
}

impl Traced {
    /// Before the harness's own subscriber, which then stays out.
    async fn start() -> Self {
        let (url, spans) = receiver().await;
        let telemetry = Telemetry::to_collector(&url, "agent-manager").expect("an exporter");
        tracing_subscriber::registry()
            .with(telemetry.layer())
            .try_init()
            .expect("the test's subscriber");
        Self {
            spans,
            telemetry,
            url,
        }
    }

    /// The variables that make a node of `w` export its spans here, as `node-<host>`.
    fn nodes_of(&self, w: &mut World, host: &str) {
        w.node_env = vec![
            ("OTEL_EXPORTER_OTLP_ENDPOINT".into(), self.url.clone()),
            ("OTEL_SERVICE_NAME".into(), format!("node-{host}")),
            ("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into()),
        ];
    }

    /// Sends the manager's spans, then waits for the node's run span of `activation`: every
    /// span received by then.
    async fn collect(self, w: &World, activation: &str) -> Vec<Got> {
        tokio::task::spawn_blocking(move || self.telemetry.shutdown())
            .await
            .expect("flushed");
        w.wait(
            "the node's run span, and the manager's spans",
            LONG,
            || async {
                let got = self.spans.lock().expect("spans").clone();
                run_of(&got, activation).is_some().then_some(got)
            },
        )
        .await
    }
}

/// The node's span of the run of `activation`.
fn run_of<'a>(got: &'a [Got], activation: &str) -> Option<&'a Got> {
    got.iter().find(|s| {
        s.service.starts_with("node-")
            && s.name == "activation"
            && s.attr("activation_id") == Some(activation)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_follows_a_fire_to_the_nodes_run_and_back_to_its_reports() {
    let traced = Traced::start().await;
    let mut w = World::new(Backend::Sqlite).await;
    traced.nodes_of(&mut w, "h1");
    w.seed(
        CatalogBuilder::new(&w, &["h1"])
            .sleep("demo.traced", "200ms")
            .group("demo.every", "* * * * * *", &["demo.traced"], json!({}))
            .build(),
    )
    .await;
    w.start_node("h1");
    let m = w.manager().await;
    w.wait_live(&["h1"]).await;
    // A fire before the node was live waits and is dispatched by the watchdog later (its
    // dispatch a child of that pass): a fire from now on is dispatched as it fires.
    let since = chrono::Utc::now();

    // A fired run that succeeded, and its reports handled.
    let run = w
        .wait(
            "a fired run of demo.traced that succeeded",
            LONG,
            || async {
                for fire in w.group_runs("demo.every").await {
                    if let Some(r) = w
                        .members_of(fire.id)
                        .await
                        .into_iter()
                        .find(|r| r.status == "succeeded" && r.created_at > since)
                    {
                        return Some(r);
                    }
                }
                None
            },
        )
        .await;
    let id = run.id.to_string();
    w.reports_drained(&["h1"]).await;
    m.stop().await;
    let got = traced.collect(&w, &id).await;
    let by_id = |span: &[u8]| got.iter().find(|s| s.id == span);
    let node_run = run_of(&got, &id).expect("the node's run span");

    // Its parents, all in one trace: the relay's publication, the dispatch, the fire.
    let publish = by_id(&node_run.parent).expect("the run's parent was exported");
    assert_eq!(
        (publish.service.as_str(), publish.name.as_str()),
        ("agent-manager", "publish"),
        "{publish:?}"
    );
    let dispatch = by_id(&publish.parent).expect("the publication's parent");
    assert_eq!(dispatch.name, "dispatch", "{dispatch:?}");
    assert_eq!(dispatch.attr("activation"), Some(id.as_str()));
    let fire = by_id(&dispatch.parent).expect("the dispatch's parent");
    assert_eq!(fire.name, "fire", "{fire:?}");
    assert_eq!(fire.attr("group"), Some("demo.every"));
    for s in [publish, dispatch, fire] {
        assert_eq!(s.trace, node_run.trace, "{} is in the run's trace", s.name);
    }
    assert_eq!(
        run.trace_parent
            .as_deref()
            .map(|tp| tp.contains(&hex(&fire.id))),
        Some(true),
        "the activation keeps the fire's context: {:?}",
        run.trace_parent
    );

    // The manager's handling of the run's reports links to the run on the node.
    let handled: Vec<&Got> = got
        .iter()
        .filter(|s| {
            s.service == "agent-manager"
                && s.links
                    .iter()
                    .any(|(t, i)| *t == node_run.trace && *i == node_run.id)
        })
        .collect();
    assert!(
        !handled.is_empty(),
        "no manager span links to the node's run; manager spans: {:?}",
        got.iter()
            .filter(|s| s.service == "agent-manager")
            .map(|s| (&s.name, s.links.len()))
            .collect::<Vec<_>>()
    );
    assert!(handled.iter().all(|s| s.name == "handle"), "{handled:?}");
    w.finish(&[]).await;
}

/// A run that waited for a node is dispatched later, by the watchdog: that dispatch's span
/// links to the span the run began in (here *Run now*), and the node's run continues it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_dispatched_after_waiting_links_to_the_run_now_it_began_in() {
    let traced = Traced::start().await;
    let mut w = World::new(Backend::Sqlite).await;
    traced.nodes_of(&mut w, "h1");
    w.seed(
        CatalogBuilder::new(&w, &["h1"])
            .sleep("demo.later", "100ms")
            .build(),
    )
    .await;
    let m = w.manager().await;
    let id = m.run_ls("demo.later").await;
    w.wait_status(id, &["waiting"], LONG).await;
    w.start_node("h1");
    w.wait_done(id, LONG).await;
    w.reports_drained(&["h1"]).await;
    m.stop().await;
    let id = id.to_string();
    let got = traced.collect(&w, &id).await;
    let by_id = |span: &[u8]| got.iter().find(|s| s.id == span);
    let node_run = run_of(&got, &id).expect("the node's run span");
    let publish = by_id(&node_run.parent).expect("the run's parent");
    let dispatch = by_id(&publish.parent).expect("the publication's parent");
    assert_eq!(dispatch.name, "dispatch", "{dispatch:?}");
    let began = got
        .iter()
        .find(|s| s.name == "run_now")
        .expect("the Run now span");
    assert!(
        dispatch
            .links
            .iter()
            .any(|(t, i)| *t == began.trace && *i == began.id),
        "the later dispatch links to Run now: {dispatch:?}, {began:?}"
    );
    w.finish(&[]).await;
}
