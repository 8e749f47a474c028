//! Reading a dead-lettered message: its headers into the columns the browser filters by, its
//! identity into a de-duplication key, its body into something a person can read. Pure
//! functions: a header that is missing or malformed leaves its column empty instead of
//! failing, because an error here would block the dead-letter queue behind one bad message.
//!
//! Headers arrive as JSON (the AMQP field table converted by the server): strings, numbers,
//! booleans, arrays and objects, AMQP timestamps as seconds since the epoch.

use am_domain::{
    read::dead_letters::{BodyEncoding, BodyView},
    wire::{self, names::Names},
};
use base64::Engine;
use chrono::{DateTime, TimeZone, Utc};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The columns of a dead letter its headers give.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub launch_setting_id: Option<String>,
    pub data_queue_id: Option<String>,
    pub error_type: Option<String>,
    pub error_message: Option<String>,
    /// Deliveries of the message; 0 when nothing says.
    pub attempts: i32,
    pub first_failure_at: Option<DateTime<Utc>>,
    pub last_failure_at: Option<DateTime<Utc>>,
    pub host: Option<String>,
}

/// Error type of a message the broker dead-lettered itself (`broker:delivery_limit`): the node
/// never gave up on it, the subscription queue's delivery limit did (a message that keeps
/// crashing nodes, or an agent that never acknowledges).
pub const BROKER_ERROR_PREFIX: &str = "broker:";

/// The columns `headers` give. Our own dead-letter headers (docs/concepts.md, Dead letters),
/// which a node sets when it gives up, come first; a message the broker dead-lettered from a
/// subscription queue has only `x-death`, from which the launch setting (the queue
/// `<prefix>.ls.<id>`), the reason and the time are taken. The data queue of such a message is
/// not in its headers: the caller looks it up from the launch setting.
pub fn parse(names: &Names, headers: &Map<String, Value>) -> Parsed {
    let text = |k: &str| headers.get(k).and_then(as_text);
    let death = broker_death(names, headers);
    let attempts = headers
        .get(wire::DL_ATTEMPTS_HEADER)
        .or_else(|| headers.get(wire::ATTEMPT_HEADER))
        .and_then(as_int)
        .map_or(0, |n| i32::try_from(n.max(0)).unwrap_or(i32::MAX));
    let mut p = Parsed {
        launch_setting_id: text(wire::DL_LAUNCH_SETTING_HEADER),
        data_queue_id: text(wire::DL_DATA_QUEUE_HEADER),
        error_type: text(wire::DL_ERROR_TYPE_HEADER),
        error_message: text(wire::DL_ERROR_MESSAGE_HEADER),
        attempts,
        first_failure_at: headers.get(wire::FIRST_FAILURE_HEADER).and_then(as_time),
        last_failure_at: headers.get(wire::DL_LAST_FAILURE_HEADER).and_then(as_time),
        host: text(wire::DL_HOST_HEADER),
    };
    // A node's own headers say everything; `x-death` then only tells of earlier retries.
    let by_node = p.launch_setting_id.is_some() || p.error_type.is_some();
    if let Some(d) = death.filter(|_| !by_node) {
        p.launch_setting_id = d.launch_setting;
        p.error_type = Some(format!("{BROKER_ERROR_PREFIX}{}", d.reason));
        p.error_message = Some(match d.count {
            Some(n) if n > 1 => format!(
                "the broker dead-lettered the message from `{}` ({}, {n} times)",
                d.queue, d.reason
            ),
            _ => format!(
                "the broker dead-lettered the message from `{}` ({})",
                d.queue, d.reason
            ),
        });
        if p.last_failure_at.is_none() {
            p.last_failure_at = d.time;
        }
    }
    p
}

/// When the message went through the sump of a launch setting with policy `park` (it had its
/// one more round after the cool-down before it died), as the node wrote it.
pub fn parked_at(headers: &Value) -> Option<String> {
    headers.get(wire::PARKED_HEADER).and_then(as_text)
}

/// One dead-lettering by the broker, read from `x-death`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Death {
    queue: String,
    reason: String,
    launch_setting: Option<String>,
    time: Option<DateTime<Utc>>,
    count: Option<i64>,
}

/// The broker's dead-lettering of the message from a subscription queue. Entries with reason
/// `expired` are the message's earlier stays in retry, park or delay queues (they expire back
/// into the subscription) and are skipped; `x-death` is not chronological, so no position is
/// trusted. Without a usable entry the `x-last-death-*` and `x-first-death-*` headers are read.
fn broker_death(names: &Names, headers: &Map<String, Value>) -> Option<Death> {
    let subscriptions = format!("{}.ls.", names.prefix());
    let launch_setting = |queue: &str| {
        queue
            .strip_prefix(&subscriptions)
            .filter(|ls| !ls.is_empty())
            .map(str::to_owned)
    };
    let deaths: Vec<Death> = headers
        .get("x-death")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let queue = e.get("queue").and_then(as_text)?;
            let reason = e.get("reason").and_then(as_text)?;
            (reason != "expired").then(|| Death {
                launch_setting: launch_setting(&queue),
                time: e.get("time").and_then(as_time),
                count: e.get("count").and_then(as_int),
                queue,
                reason,
            })
        })
        .collect();
    // An entry from one of our subscription queues wins over any other.
    let chosen = match deaths.iter().position(|d| d.launch_setting.is_some()) {
        Some(i) => deaths.into_iter().nth(i),
        None => deaths.into_iter().next(),
    };
    chosen.or_else(|| {
        ["x-last-death", "x-first-death"].iter().find_map(|p| {
            let queue = headers.get(&format!("{p}-queue")).and_then(as_text)?;
            let reason = headers.get(&format!("{p}-reason")).and_then(as_text)?;
            (reason != "expired").then(|| Death {
                launch_setting: launch_setting(&queue),
                time: None,
                count: None,
                queue,
                reason,
            })
        })
    })
}

/// `s` without NUL characters, which PostgreSQL refuses in text (and in JSON it binds as
/// `jsonb`); a header carrying one must not block the queue.
pub(crate) fn clean(s: &str) -> String {
    s.replace('\0', "")
}

/// `v` with NUL characters removed from every string and key.
pub(crate) fn scrub(v: &Value) -> Value {
    match v {
        Value::String(s) if s.contains('\0') => Value::String(clean(s)),
        Value::Array(items) => Value::Array(items.iter().map(scrub).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (clean(k), scrub(v))).collect()),
        other => other.clone(),
    }
}

fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(clean(s.trim())).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// RFC 3339 text, or seconds since the epoch (an AMQP timestamp).
fn as_time(v: &Value) -> Option<DateTime<Utc>> {
    match v {
        Value::String(s) => DateTime::parse_from_rfc3339(s.trim())
            .ok()
            .map(|t| t.with_timezone(&Utc)),
        Value::Number(n) => n.as_i64().and_then(|s| Utc.timestamp_opt(s, 0).single()),
        _ => None,
    }
}

/// What identifies one broker message: the same bytes when the broker delivers it again (a
/// batch redelivered after our commit but before our acknowledgement), different for another
/// dead-lettering of the same data message (its failure headers carry a new time).
pub struct Identity<'a> {
    pub exchange: &'a str,
    pub routing_key: &'a str,
    pub message_id: Option<&'a str>,
    pub content_type: Option<&'a str>,
    pub properties: &'a Map<String, Value>,
    pub headers: &'a Map<String, Value>,
    pub body: &'a [u8],
}

/// SHA-256 (hex) over every part of `id`, each length-prefixed so that no two different
/// messages concatenate to the same bytes, maps in key order whatever order they came in.
pub fn dedupe_key(id: &Identity<'_>) -> String {
    let mut h = Sha256::new();
    let mut part = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(bytes);
    };
    part(id.exchange.as_bytes());
    part(id.routing_key.as_bytes());
    part(id.message_id.unwrap_or("\u{0}none").as_bytes());
    part(id.content_type.unwrap_or("\u{0}none").as_bytes());
    let mut buf = Vec::new();
    canonical(&Value::Object(id.properties.clone()), &mut buf);
    part(&buf);
    buf.clear();
    canonical(&Value::Object(id.headers.clone()), &mut buf);
    part(&buf);
    part(id.body);
    hex::encode(h.finalize())
}

/// JSON with object keys sorted at every depth.
fn canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(Value::String(k.clone()).to_string().as_bytes());
                out.push(b':');
                if let Some(v) = m.get(k) {
                    canonical(v, out);
                }
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

/// The body pretty-printed when it is JSON, as text when it is UTF-8, else in base64.
pub fn body_view(body: &[u8]) -> BodyView {
    let size = body.len() as u64;
    if let Ok(v) = serde_json::from_slice::<Value>(body)
        && let Ok(text) = serde_json::to_string_pretty(&v)
    {
        return BodyView {
            encoding: BodyEncoding::Json,
            text,
            size,
        };
    }
    match std::str::from_utf8(body) {
        Ok(s) => BodyView {
            encoding: BodyEncoding::Text,
            text: s.to_owned(),
            size,
        },
        Err(_) => BodyView {
            encoding: BodyEncoding::Base64,
            text: base64::engine::general_purpose::STANDARD.encode(body),
            size,
        },
    }
}

/// The start of a body for a list: its text with whitespace collapsed, at most `max` characters
/// (a body cut inside a UTF-8 sequence loses that sequence), or a note for binary bodies.
pub fn preview(start: &[u8], size: u64, max: usize) -> String {
    let text = match std::str::from_utf8(start) {
        Ok(s) => s,
        Err(e) if e.error_len().is_none() => {
            // Only the cut at the end is incomplete.
            std::str::from_utf8(&start[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return format!("({size} bytes of binary data)"),
    };
    let collapsed: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = collapsed.chars().take(max).collect();
    if out.chars().count() < collapsed.chars().count() || (start.len() as u64) < size {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names() -> Names {
        Names::new("am")
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_nodes_headers_fill_every_column() {
        let h = obj(json!({
            "x-am-launch-setting": "billing.export.1",
            "x-am-data-queue": "invoices",
            "x-am-last-error-type": "Permanent",
            "x-am-last-error-message": "no such customer",
            "x-am-attempts": 3,
            "x-am-attempt": 3,
            "x-am-first-failure": "2030-01-01T00:00:00Z",
            "x-am-last-failure": "2030-01-01T00:00:07.5+00:00",
            "x-am-host": "host-a",
            // Earlier retries leave x-death entries behind; the node's headers win.
            "x-death": [{"queue": "am.ls.billing.export.1.retry.1000ms", "reason": "expired", "count": 2, "time": 1_900_000_000}],
        }));
        let p = parse(&names(), &h);
        assert_eq!(p.launch_setting_id.as_deref(), Some("billing.export.1"));
        assert_eq!(p.data_queue_id.as_deref(), Some("invoices"));
        assert_eq!(p.error_type.as_deref(), Some("Permanent"));
        assert_eq!(p.error_message.as_deref(), Some("no such customer"));
        assert_eq!(p.attempts, 3);
        assert_eq!(
            p.first_failure_at,
            Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).single()
        );
        assert_eq!(
            p.last_failure_at.map(|t| t.timestamp_millis()),
            Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 7)
                .single()
                .map(|t| t.timestamp_millis() + 500)
        );
        assert_eq!(p.host.as_deref(), Some("host-a"));
    }

    #[test]
    fn a_broker_dead_letter_names_its_subscription() {
        // Not chronological: the expired retry entry first, the delivery limit second.
        let h = obj(json!({
            "x-am-attempt": 2,
            "x-am-first-failure": "2030-01-01T00:00:00Z",
            "x-death": [
                {"queue": "am.ls.demo.flaky.1.retry.1000ms", "reason": "expired", "count": 1, "time": 1_893_456_000},
                {"queue": "am.ls.demo.flaky.1", "reason": "delivery_limit", "count": 1, "time": 1_893_456_060,
                 "exchange": "demo-in", "routing-keys": [""]},
            ],
            "x-first-death-queue": "am.ls.demo.flaky.1.retry.1000ms",
            "x-first-death-reason": "expired",
        }));
        let p = parse(&names(), &h);
        assert_eq!(p.launch_setting_id.as_deref(), Some("demo.flaky.1"));
        assert_eq!(p.data_queue_id, None);
        assert_eq!(p.error_type.as_deref(), Some("broker:delivery_limit"));
        assert!(
            p.error_message
                .as_deref()
                .is_some_and(|m| m.contains("am.ls.demo.flaky.1") && m.contains("delivery_limit")),
            "{:?}",
            p.error_message
        );
        assert_eq!(p.attempts, 2);
        assert_eq!(
            p.last_failure_at.map(|t| t.timestamp()),
            Some(1_893_456_060)
        );
        assert_eq!(
            p.first_failure_at,
            Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).single()
        );
    }

    #[test]
    fn first_death_headers_are_read_without_x_death() {
        let h = obj(json!({
            "x-first-death-queue": "am.ls.a.b",
            "x-first-death-reason": "rejected",
        }));
        let p = parse(&names(), &h);
        assert_eq!(p.launch_setting_id.as_deref(), Some("a.b"));
        assert_eq!(p.error_type.as_deref(), Some("broker:rejected"));
        assert_eq!(p.attempts, 0);
    }

    #[test]
    fn other_installations_queues_give_no_launch_setting() {
        let h = obj(json!({
            "x-death": [{"queue": "other.ls.x", "reason": "delivery_limit", "count": 1}],
        }));
        let p = parse(&names(), &h);
        assert_eq!(p.launch_setting_id, None);
        assert_eq!(p.error_type.as_deref(), Some("broker:delivery_limit"));
        // An entry of ours wins over one of another prefix, wherever it is in the list.
        let h = obj(json!({
            "x-death": [
                {"queue": "other.ls.x", "reason": "delivery_limit", "count": 1},
                {"queue": "am.ls.mine", "reason": "delivery_limit", "count": 1},
            ],
        }));
        assert_eq!(
            parse(&names(), &h).launch_setting_id.as_deref(),
            Some("mine")
        );
    }

    #[test]
    fn bad_or_missing_headers_leave_columns_empty() {
        assert_eq!(parse(&names(), &Map::new()), Parsed::default());
        let h = obj(json!({
            "x-am-launch-setting": ["not", "text"],
            "x-am-attempts": "many",
            "x-am-first-failure": "yesterday",
            "x-am-last-failure": {"t": 1},
            "x-am-host": "  ",
            "x-death": "not a list",
        }));
        assert_eq!(parse(&names(), &h), Parsed::default());
        let h = obj(json!({"x-am-attempts": -4, "x-am-host": 7}));
        let p = parse(&names(), &h);
        assert_eq!(p.attempts, 0);
        assert_eq!(p.host.as_deref(), Some("7"));
        let h = obj(json!({"x-am-attempts": 9_000_000_000_i64}));
        assert_eq!(parse(&names(), &h).attempts, i32::MAX);
    }

    #[test]
    fn parked_marker() {
        assert_eq!(
            parked_at(&json!({"x-am-parked": "2030-01-01T00:00:00Z"})).as_deref(),
            Some("2030-01-01T00:00:00Z")
        );
        assert_eq!(parked_at(&json!({})), None);
    }

    fn identity<'a>(
        headers: &'a Map<String, Value>,
        props: &'a Map<String, Value>,
        body: &'a [u8],
    ) -> Identity<'a> {
        Identity {
            exchange: "",
            routing_key: "am.dead-letters",
            message_id: Some("m-1"),
            content_type: Some("application/json"),
            properties: props,
            headers,
            body,
        }
    }

    #[test]
    fn the_same_message_has_the_same_key_whatever_the_key_order() {
        let a = obj(json!({"b": 1, "a": {"y": [1, 2], "x": "s"}}));
        let mut b = Map::new();
        b.insert("a".into(), json!({"x": "s", "y": [1, 2]}));
        b.insert("b".into(), json!(1));
        let props = Map::new();
        assert_eq!(
            dedupe_key(&identity(&a, &props, b"{}")),
            dedupe_key(&identity(&b, &props, b"{}"))
        );
        assert_eq!(dedupe_key(&identity(&a, &props, b"{}")).len(), 64);
    }

    #[test]
    fn any_difference_changes_the_key() {
        let h = obj(json!({"x-am-last-failure": "2030-01-01T00:00:00Z"}));
        let h2 = obj(json!({"x-am-last-failure": "2030-01-01T00:00:01Z"}));
        let props = Map::new();
        let base = dedupe_key(&identity(&h, &props, b"body"));
        assert_ne!(base, dedupe_key(&identity(&h2, &props, b"body")));
        assert_ne!(base, dedupe_key(&identity(&h, &props, b"body2")));
        let other_props = obj(json!({"correlation_id": "c"}));
        assert_ne!(base, dedupe_key(&identity(&h, &other_props, b"body")));
        let mut id = identity(&h, &props, b"body");
        id.message_id = None;
        assert_ne!(base, dedupe_key(&id));
        // Parts do not run into each other.
        let mut x = identity(&h, &props, b"");
        x.exchange = "ab";
        x.routing_key = "c";
        let mut y = identity(&h, &props, b"");
        y.exchange = "a";
        y.routing_key = "bc";
        assert_ne!(dedupe_key(&x), dedupe_key(&y));
    }

    #[test]
    fn bodies_are_shown_as_json_text_or_base64() {
        let j = body_view(br#"{"order":7,"lines":[1]}"#);
        assert_eq!(j.encoding, BodyEncoding::Json);
        assert!(j.text.contains("\n  \"order\": 7"), "{}", j.text);
        assert_eq!(j.size, 23);
        let t = body_view("plain ünïcode".as_bytes());
        assert_eq!(t.encoding, BodyEncoding::Text);
        assert_eq!(t.text, "plain ünïcode");
        let b = body_view(&[0xff, 0x00, 0x10]);
        assert_eq!(b.encoding, BodyEncoding::Base64);
        assert_eq!(b.text, "/wAQ");
        assert_eq!(body_view(b"").encoding, BodyEncoding::Text);
    }

    #[test]
    fn previews_are_short_and_mark_what_is_cut() {
        assert_eq!(preview(b"{\n  \"a\": 1\n}", 12, 80), "{ \"a\": 1 }");
        assert_eq!(preview(b"abcdef", 6, 3), "abc…");
        // Cut by the database inside a multi-byte character.
        let s = "héllo".as_bytes();
        assert_eq!(preview(&s[..2], 6, 80), "h…");
        assert_eq!(
            preview(&[0xff, 0xfe, 0x00], 3, 80),
            "(3 bytes of binary data)"
        );
    }
}
