//! The W3C trace context of the current span, stored with each broker command (the outbox
//! row's headers), so that whichever replica's relay publishes the command publishes it under
//! the span that wrote it. Empty unless the process exports traces (the propagator is set up
//! with the exporter; until then the global one injects nothing).

use opentelemetry::trace::TraceContextExt;
use std::collections::HashMap;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// `{"traceparent": …, "tracestate": …}` of the current span, or `None` outside an exported one.
pub fn current() -> Option<serde_json::Value> {
    let cx = tracing::Span::current().context();
    if !cx.span().span_context().is_valid() {
        return None;
    }
    let mut headers: HashMap<String, String> = HashMap::new();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut headers));
    (!headers.is_empty()).then(|| serde_json::json!(headers))
}

/// The W3C `traceparent` of the current span, or `None` outside an exported one.
pub fn current_traceparent() -> Option<String> {
    current()?.get("traceparent")?.as_str().map(str::to_owned)
}

/// Links `span` to the span of `traceparent` (a later dispatch of an activation to the span
/// that created it); nothing when it cannot be read.
pub fn link(span: &tracing::Span, traceparent: &str) {
    let headers = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    let cx = opentelemetry::global::get_text_map_propagator(|p| p.extract(&headers));
    span.add_link(cx.span().span_context().clone());
}

#[cfg(test)]
mod tests {
    #[test]
    fn outside_an_exported_span_there_is_no_context() {
        assert_eq!(super::current(), None);
        assert_eq!(super::current_traceparent(), None);
        // A link to something unreadable is no link, and no panic.
        super::link(&tracing::Span::current(), "not a traceparent");
    }
}
