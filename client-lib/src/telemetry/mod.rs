//! Traces across processes: the W3C trace context (`traceparent`, `tracestate`) travels in the
//! AMQP headers of commands, reports and data messages, so one trace follows an activation
//! from the manager's fire to the node's run and back to the manager's handling of its
//! reports. With the `otel` feature, [`Telemetry::from_env`] exports spans over OTLP; without
//! it, or while no exporter is set up, every function here does nothing.

#[cfg(feature = "otel")]
mod export;

#[cfg(feature = "otel")]
pub use export::{Telemetry, TelemetryError};

use lapin::types::{AMQPValue, FieldTable, ShortString};
use tracing::Span;

/// The target of the span of each data message a node handles: level `debug`, so a log at
/// `info` creates none, while the exporter takes them.
pub const MESSAGE_SPANS: &str = "agent_client::message";

/// The header names of the W3C trace context.
pub const TRACE_HEADERS: [&str; 2] = ["traceparent", "tracestate"];

/// The trace context of a span, as message headers (`traceparent`, and `tracestate` when
/// there is one). Empty when no span is exported.
///
/// ```
/// use agent_client::telemetry::TraceHeaders;
///
/// // Outside any exported span there is nothing to carry.
/// assert!(TraceHeaders::current().is_empty());
/// let h = TraceHeaders::from_pairs([(
///     "traceparent",
///     "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
/// )]);
/// assert_eq!(h.get("traceparent").map(str::len), Some(55));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceHeaders(Vec<(String, String)>);

impl TraceHeaders {
    /// The context of the current span.
    pub fn current() -> Self {
        Self::of(&Span::current())
    }

    /// The context of `span`.
    #[cfg_attr(not(feature = "otel"), allow(unused_variables))]
    pub fn of(span: &Span) -> Self {
        #[cfg(feature = "otel")]
        return export::headers_of(span);
        #[cfg(not(feature = "otel"))]
        Self::default()
    }

    /// The trace headers among `pairs` (others, and empty values, are ignored).
    pub fn from_pairs<K: AsRef<str>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self(
            pairs
                .into_iter()
                .filter(|(k, _)| TRACE_HEADERS.contains(&k.as_ref()))
                .map(|(k, v)| (k.as_ref().to_owned(), v.into()))
                .filter(|(_, v): &(String, String)| !v.is_empty())
                .collect(),
        )
    }

    /// The trace headers of a message's AMQP headers (long or short strings).
    pub fn from_amqp(headers: Option<&FieldTable>) -> Self {
        let Some(headers) = headers else {
            return Self::default();
        };
        Self::from_pairs(headers.inner().iter().filter_map(|(k, v)| {
            let v = match v {
                AMQPValue::LongString(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
                AMQPValue::ShortString(s) => s.as_str().to_owned(),
                _ => return None,
            };
            Some((k.as_str().to_owned(), v))
        }))
    }

    /// Adds the headers to a message's AMQP headers.
    pub fn add_to(&self, table: &mut FieldTable) {
        for (k, v) in &self.0 {
            table.insert(
                ShortString::from(k.clone()),
                AMQPValue::LongString(v.as_str().into()),
            );
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Makes `span` a child of this context; call it before the span is first entered.
    #[cfg_attr(not(feature = "otel"), allow(unused_variables))]
    pub fn parent_of(&self, span: &Span) {
        #[cfg(feature = "otel")]
        export::set_parent(self, span);
    }

    /// Links `span` to this context (a run started again, a message's producer).
    #[cfg_attr(not(feature = "otel"), allow(unused_variables))]
    pub fn link_from(&self, span: &Span) {
        #[cfg(feature = "otel")]
        export::add_link(self, span);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_trace_headers_are_read_from_a_message() {
        let mut table = FieldTable::default();
        table.insert(
            "traceparent".into(),
            AMQPValue::LongString("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into()),
        );
        table.insert("x-am-version".into(), AMQPValue::LongString("3".into()));
        table.insert("tracestate".into(), AMQPValue::ShortString("a=1".into()));
        let h = TraceHeaders::from_amqp(Some(&table));
        assert_eq!(h.get("tracestate"), Some("a=1"));
        assert_eq!(h.pairs().count(), 2);
        let mut out = FieldTable::default();
        h.add_to(&mut out);
        assert_eq!(TraceHeaders::from_amqp(Some(&out)), h);
        assert!(TraceHeaders::from_amqp(None).is_empty());
        // An empty `tracestate` (no vendor state) is no header.
        assert!(TraceHeaders::from_pairs([("tracestate", "")]).is_empty());
    }
}
