//! An OTLP/HTTP trace receiver for tests, as a collector would be: it takes protobuf (what
//! the Rust node and manager send) and JSON (the Java node) at `/v1/traces` and keeps every
//! span. Shared by the node conformance suite and the manager's runtime tests.

use axum::{Router, body::Bytes, extract::State, http::HeaderMap, routing::post};
use opentelemetry_proto::tonic::{
    collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse},
    common::v1::{AnyValue, KeyValue, any_value},
};
use prost::Message;
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// A span as the receiver got it; ids as bytes whatever the encoding.
#[derive(Debug, Clone)]
pub struct Got {
    pub service: String,
    pub name: String,
    pub trace: Vec<u8>,
    pub id: Vec<u8>,
    pub parent: Vec<u8>,
    pub links: Vec<(Vec<u8>, Vec<u8>)>,
    pub attributes: Vec<(String, String)>,
}

impl Got {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The W3C `traceparent` naming this span.
    pub fn traceparent(&self) -> String {
        format!("00-{}-{}-01", hex(&self.trace), hex(&self.id))
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// The span ids of a `traceparent`: (trace id, span id).
pub fn ids_of(traceparent: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut parts = traceparent.split('-');
    let (_, trace, span) = (parts.next()?, parts.next()?, parts.next()?);
    (trace.len() == 32 && span.len() == 16).then(|| (unhex(trace), unhex(span)))
}

pub type Spans = Arc<Mutex<Vec<Got>>>;

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

fn from_protobuf(body: Bytes) -> Vec<Got> {
    let req = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf trace export");
    let mut got = Vec::new();
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
    got
}

/// An attribute's value in OTLP JSON: `{"stringValue": …}`, `{"intValue": "7"}`, ….
fn json_text(v: &Value) -> String {
    for key in ["stringValue", "intValue", "boolValue", "doubleValue"] {
        match v.get(key) {
            Some(Value::String(s)) => return s.clone(),
            Some(other) if !other.is_null() => return other.to_string(),
            _ => {}
        }
    }
    String::new()
}

fn json_pairs(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                a["key"].as_str().unwrap_or_default().to_owned(),
                json_text(&a["value"]),
            )
        })
        .collect()
}

fn from_json(body: &[u8]) -> Vec<Got> {
    let req: Value = serde_json::from_slice(body).expect("an OTLP JSON trace export");
    let id = |v: &Value| unhex(v.as_str().unwrap_or_default());
    let mut got = Vec::new();
    for rs in req["resourceSpans"].as_array().into_iter().flatten() {
        let resource = json_pairs(&rs["resource"]["attributes"]);
        let service = resource
            .iter()
            .find(|(k, _)| k == "service.name")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
            for s in ss["spans"].as_array().into_iter().flatten() {
                got.push(Got {
                    service: service.clone(),
                    name: s["name"].as_str().unwrap_or_default().to_owned(),
                    trace: id(&s["traceId"]),
                    id: id(&s["spanId"]),
                    parent: id(&s["parentSpanId"]),
                    links: s["links"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|l| (id(&l["traceId"]), id(&l["spanId"])))
                        .collect(),
                    attributes: json_pairs(&s["attributes"]),
                });
            }
        }
    }
    got
}

async fn receive(State(spans): State<Spans>, headers: HeaderMap, body: Bytes) -> Vec<u8> {
    let json = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let got = if json {
        from_json(&body)
    } else {
        from_protobuf(body)
    };
    spans.lock().expect("spans").extend(got);
    if json {
        b"{}".to_vec()
    } else {
        ExportTraceServiceResponse::default().encode_to_vec()
    }
}

/// A receiver on a free port: its base URL (for `OTEL_EXPORTER_OTLP_ENDPOINT`) and what it
/// received.
pub async fn receiver() -> (String, Spans) {
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
