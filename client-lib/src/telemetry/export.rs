//! OTLP export (HTTP/protobuf) set up from the standard variables, and the trace context of
//! `tracing` spans read and set through `tracing-opentelemetry`.

use super::TraceHeaders;
use opentelemetry::{
    propagation::TextMapPropagator,
    trace::{TraceContextExt, TracerProvider as _},
};
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::{
    Resource,
    propagation::TraceContextPropagator,
    trace::{SdkTracerProvider, Tracer},
};
use std::collections::HashMap;
use tracing::Span;
use tracing_opentelemetry::{OpenTelemetryLayer, OpenTelemetrySpanExt};
use tracing_subscriber::{
    Layer,
    filter::{LevelFilter, Targets},
};

/// Why traces could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("cannot set up the OTLP exporter: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
}

/// An OTLP span exporter for this process; spans still buffered are sent by
/// [`Telemetry::shutdown`] (call it before the process exits).
///
/// ```no_run
/// use tracing_subscriber::{layer::SubscriberExt, util::SubscriberInitExt};
///
/// # fn main() -> Result<(), agent_client::telemetry::TelemetryError> {
/// // Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set.
/// let telemetry = agent_client::telemetry::Telemetry::from_env("my-application")?;
/// tracing_subscriber::registry()
///     .with(tracing_subscriber::fmt::layer())
///     .with(telemetry.as_ref().map(|t| t.layer()))
///     .init();
/// // … run the node …
/// if let Some(t) = telemetry {
///     t.shutdown();
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Telemetry {
    provider: SdkTracerProvider,
    tracer: Tracer,
}

/// Whether the standard variables ask for traces to be exported.
fn wanted() -> bool {
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|v| std::env::var(v).is_ok_and(|s| !s.trim().is_empty()))
        && !std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

/// Whether the variables name the service already (`OTEL_SERVICE_NAME`, or `service.name` in
/// `OTEL_RESOURCE_ATTRIBUTES`), which wins over the program's default.
fn named_by_env() -> bool {
    std::env::var("OTEL_SERVICE_NAME").is_ok_and(|s| !s.trim().is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|s| {
            s.split(',')
                .any(|kv| kv.trim().starts_with("service.name="))
        })
}

impl Telemetry {
    /// An exporter to the endpoint of `OTEL_EXPORTER_OTLP_ENDPOINT` (spans to `/v1/traces`) or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, with the resource of `OTEL_SERVICE_NAME` and
    /// `OTEL_RESOURCE_ATTRIBUTES` (the service named `default_service_name` when they do not
    /// name it); `None` when neither endpoint is set or `OTEL_SDK_DISABLED=true`. The batch
    /// settings (`OTEL_BSP_*`) are honoured as well.
    pub fn from_env(default_service_name: &str) -> Result<Option<Self>, TelemetryError> {
        if !wanted() {
            return Ok(None);
        }
        let exporter = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .build()?;
        let mut resource = Resource::builder();
        if !named_by_env() {
            resource = resource.with_service_name(default_service_name.to_owned());
        }
        Ok(Some(Self::with(exporter, resource.build())))
    }

    /// The `tracing` layer that turns spans of level `info` and above, and each data message's
    /// span ([`super::MESSAGE_SPANS`]), into exported ones, whatever `RUST_LOG` lets the log
    /// show. The HTTP client that exports them, the database
    /// driver and the AMQP client are left out: their spans would be noise, and the exporter's
    /// own requests would be traced by the exporter.
    pub fn layer<S>(&self) -> impl Layer<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        let quiet = Targets::new()
            .with_default(LevelFilter::INFO)
            .with_target(super::MESSAGE_SPANS, LevelFilter::DEBUG)
            .with_targets(
                [
                    "hyper",
                    "hyper_util",
                    "h2",
                    "reqwest",
                    "tower",
                    "opentelemetry",
                    "opentelemetry_sdk",
                    "opentelemetry_otlp",
                    "opentelemetry_http",
                    "sqlx",
                    "sea_orm",
                    "lapin",
                    "amq_protocol",
                ]
                .map(|t| (t, LevelFilter::OFF)),
            );
        let layer: OpenTelemetryLayer<S, Tracer> =
            tracing_opentelemetry::layer().with_tracer(self.tracer.clone());
        layer.with_filter(quiet)
    }

    /// An exporter to the OTLP/HTTP collector at `base_url` (spans to `{base_url}/v1/traces`),
    /// the service named `service_name`, whatever the variables say.
    pub fn to_collector(base_url: &str, service_name: &str) -> Result<Self, TelemetryError> {
        let exporter = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{}/v1/traces", base_url.trim_end_matches('/')))
            .build()?;
        let resource = Resource::builder()
            .with_service_name(service_name.to_owned())
            .build();
        Ok(Self::with(exporter, resource))
    }

    fn with(exporter: SpanExporter, resource: Resource) -> Self {
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer(env!("CARGO_PKG_NAME"));
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        Self { provider, tracer }
    }

    /// Sends what is buffered and waits for it (blocking; at the end of the process).
    pub fn flush(&self) {
        if let Err(e) = self.provider.force_flush() {
            tracing::warn!(error = %e, "traces not flushed");
        }
    }

    /// Sends what is buffered and stops the exporter.
    pub fn shutdown(self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "traces not flushed at shutdown");
        }
    }
}

pub(super) fn headers_of(span: &Span) -> TraceHeaders {
    let cx = span.context();
    if !cx.span().span_context().is_valid() {
        return TraceHeaders::default();
    }
    let mut map = HashMap::new();
    TraceContextPropagator::new().inject_context(&cx, &mut map);
    TraceHeaders::from_pairs(map)
}

fn context_of(h: &TraceHeaders) -> opentelemetry::Context {
    let map: HashMap<String, String> = h
        .pairs()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    TraceContextPropagator::new().extract(&map)
}

pub(super) fn set_parent(h: &TraceHeaders, span: &Span) {
    if h.is_empty() {
        return;
    }
    let cx = context_of(h);
    if cx.span().span_context().is_valid() {
        // A span no layer exports (no exporter set up) has no parent to take: nothing lost.
        let _ = span.set_parent(cx);
    }
}

pub(super) fn add_link(h: &TraceHeaders, span: &Span) {
    if h.is_empty() {
        return;
    }
    span.add_link(context_of(h).span().span_context().clone());
}
