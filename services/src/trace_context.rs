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

#[cfg(test)]
mod tests {
    #[test]
    fn outside_an_exported_span_there_is_no_context() {
        assert_eq!(super::current(), None);
    }
}
