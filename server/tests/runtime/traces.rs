//! One trace from a schedule's fire to the node's reports, through the real broker: the
//! manager (in this process) and a demo node (a process) export spans over OTLP/HTTP to a
//! receiver inside the test, which decodes them as a collector would.

use crate::harness::{CatalogBuilder, LONG, World};
use agent_client::telemetry::Telemetry;
use am_services::testing::Backend;
use axum::{Router, body::Bytes, extract::State, routing::post};
use opentelemetry_proto::tonic::{
    collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse},
    common::v1::{AnyValue, KeyValue, any_value},
};
use prost::Message;
use serde_json::json;
use std::sync::{Arc, Mutex};
use tracing_subscriber::{layer::SubscriberExt, util::SubscriberInitExt};

/// A span as the receiver got it.
#[derive(Debug, Clone)]
struct Got {
    service: String,
    name: String,
    trace: Vec<u8>,
    id: Vec<u8>,
    parent: Vec<u8>,
    links: Vec<(Vec<u8>, Vec<u8>)>,
    attributes: Vec<(String, String)>,
}

impl Got {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn text(v: Option<&AnyValue>) -> String {
    match v.and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn pairs(kv: &[KeyValue]) -> Vec<(String, String)> {
    kv.iter()
        .map(|a| (a.key.clone(), text(a.value.as_ref())))
        .collect()
}

type Spans = Arc<Mutex<Vec<Got>>>;

async fn receive(State(spans): State<Spans>, body: Bytes) -> Vec<u8> {
    let req = ExportTraceServiceRequest::decode(body).expect("an OTLP trace export");
    let mut got = spans.lock().expect("spans");
    for rs in req.resource_spans {
        let resource = pairs(&rs.resource.map(|r| r.attributes).unwrap_or_default());
        let service = resource
            .iter()
            .find(|(k, _)| k == "service.name")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for s in ss.spans {
                got.push(Got {
                    service: service.clone(),
                    name: s.name,
                    trace: s.trace_id,
                    id: s.span_id,
                    parent: s.parent_span_id,
                    links: s
                        .links
                        .into_iter()
                        .map(|l| (l.trace_id, l.span_id))
                        .collect(),
                    attributes: pairs(&s.attributes),
                });
            }
        }
    }
    ExportTraceServiceResponse::default().encode_to_vec()
}

/// An OTLP/HTTP receiver on a free port: its base URL and what it received.
async fn receiver() -> (String, Spans) {
    let spans = Spans::default();
    let app = Router::new()
        .route("/v1/traces", post(receive))
        .with_state(Arc::clone(&spans));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, spans)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_follows_a_fire_to_the_nodes_run_and_back_to_its_reports() {
    let (url, spans) = receiver().await;
    // This process is the manager: its spans go to the receiver (before the harness's own
    // subscriber, which then stays out).
    let telemetry = Telemetry::to_collector(&url, "agent-manager").expect("an exporter");
    tracing_subscriber::registry()
        .with(telemetry.layer())
        .try_init()
        .expect("the test's subscriber");
    let mut w = World::new(Backend::Sqlite).await;
    w.node_env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT".into(), url.clone()),
        ("OTEL_SERVICE_NAME".into(), "node-h1".into()),
        ("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into()),
    ];
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
    // The manager's spans so far, then the node's (its batches leave every 100 ms).
    tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .expect("flushed");
    let got = w
        .wait(
            "the node's run span, and the manager's spans",
            LONG,
            || async {
                let got = spans.lock().expect("spans").clone();
                let node_run = got.iter().any(|s| {
                    s.service == "node-h1"
                        && s.name == "activation"
                        && s.attr("activation_id") == Some(&id)
                });
                node_run.then_some(got)
            },
        )
        .await;
    let by_id = |span: &[u8]| got.iter().find(|s| s.id == span);
    let node_run = got
        .iter()
        .find(|s| {
            s.service == "node-h1" && s.name == "activation" && s.attr("activation_id") == Some(&id)
        })
        .expect("the node's run span");

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

    // The manager's handling of the run's reports links to the run on the node.
    let handled = got.iter().filter(|s| {
        s.service == "agent-manager"
            && s.links
                .iter()
                .any(|(t, i)| *t == node_run.trace && *i == node_run.id)
    });
    assert!(
        handled.clone().count() >= 1,
        "no manager span links to the node's run; manager spans: {:?}",
        got.iter()
            .filter(|s| s.service == "agent-manager")
            .map(|s| (&s.name, s.links.len()))
            .collect::<Vec<_>>()
    );
    assert!(
        handled.clone().all(|s| s.name == "handle"),
        "{:?}",
        handled.collect::<Vec<_>>()
    );
    w.finish(&[]).await;
}
