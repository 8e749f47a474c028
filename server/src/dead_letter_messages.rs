//! The broker side of dead letters: reading a message of the dead-letter queue into what the
//! database keeps ([`incoming`]), and sending stored dead letters back to their launch
//! setting's subscription ([`publish_batch`]).
//!
//! AMQP field tables are kept as JSON: strings, numbers, booleans, arrays, objects, and
//! timestamps as seconds since the epoch. A replay publishes strings as long strings, integers
//! as 64-bit integers and numbers with a fraction as doubles, so the narrower integer types,
//! decimals and byte arrays of the original come back widened (agents read header values, not
//! their wire types).

use am_domain::wire::{self, names::Names};
use am_services::{
    dead_letters::IncomingDeadLetter, entity::dead_letters, operations::ReplayError,
};
use lapin::{
    BasicProperties, Channel,
    message::Delivery,
    options::BasicPublishOptions,
    types::{AMQPValue, FieldArray, FieldTable, LongString, ShortString},
};
use serde_json::{Map, Number, Value};
use std::time::Duration;
use tokio::time::{Instant, timeout_at};

/// Headers a replay drops: the failure state of the message's last life. A replay is a fresh
/// start: attempt 1, a new first failure, no parked round used up, no broker deaths.
const DROPPED: [&str; 16] = [
    wire::FIRST_FAILURE_HEADER,
    wire::PARKED_HEADER,
    wire::UNAVAILABLE_HEADER,
    wire::UNAVAILABLE_SINCE_HEADER,
    wire::DL_DATA_QUEUE_HEADER,
    wire::DL_LAUNCH_SETTING_HEADER,
    wire::DL_ATTEMPTS_HEADER,
    wire::DL_ERROR_TYPE_HEADER,
    wire::DL_ERROR_MESSAGE_HEADER,
    wire::DL_LAST_FAILURE_HEADER,
    wire::DL_HOST_HEADER,
    wire::DL_QUEUE_HEADER,
    "x-death",
    "x-delivery-count",
    "x-first-death-queue",
    "x-last-death-queue",
];
/// Prefixes of the broker's other death headers (`x-first-death-reason`, ...).
const DROPPED_PREFIXES: [&str; 2] = ["x-first-death-", "x-last-death-"];
/// How long one batch may wait for the broker (a blocked connection, a broker that stopped
/// answering) before its unconfirmed rows count as failed, so an operation ends instead of
/// hanging. Such a row stays a dead letter; if the broker delivered it after all, a second
/// replay sends it twice (delivery is at least once anyway).
const BATCH_DEADLINE: Duration = Duration::from_secs(30);

/// A field table as JSON.
pub fn table_to_json(table: &FieldTable) -> Map<String, Value> {
    table
        .inner()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), to_json(v)))
        .collect()
}

fn to_json(v: &AMQPValue) -> Value {
    match v {
        AMQPValue::Boolean(b) => Value::Bool(*b),
        AMQPValue::ShortShortInt(n) => Value::from(*n),
        AMQPValue::ShortShortUInt(n) => Value::from(*n),
        AMQPValue::ShortInt(n) => Value::from(*n),
        AMQPValue::ShortUInt(n) => Value::from(*n),
        AMQPValue::LongInt(n) => Value::from(*n),
        AMQPValue::LongUInt(n) => Value::from(*n),
        AMQPValue::LongLongInt(n) => Value::from(*n),
        AMQPValue::Timestamp(n) => Value::from(*n),
        AMQPValue::Float(f) => Number::from_f64(f64::from(*f)).map_or(Value::Null, Value::Number),
        AMQPValue::Double(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
        AMQPValue::DecimalValue(d) => {
            Number::from_f64(f64::from(d.value) / 10f64.powi(i32::from(d.scale)))
                .map_or(Value::Null, Value::Number)
        }
        AMQPValue::ShortString(s) => Value::String(s.as_str().to_owned()),
        AMQPValue::LongString(s) => Value::String(String::from_utf8_lossy(s.as_bytes()).into()),
        AMQPValue::FieldArray(a) => Value::Array(a.as_slice().iter().map(to_json).collect()),
        AMQPValue::FieldTable(t) => Value::Object(table_to_json(t)),
        AMQPValue::ByteArray(b) => {
            Value::Array(b.as_slice().iter().map(|x| Value::from(*x)).collect())
        }
        AMQPValue::Void => Value::Null,
    }
}

/// JSON as a field table.
pub fn json_to_table(map: &Map<String, Value>) -> FieldTable {
    let mut t = FieldTable::default();
    for (k, v) in map {
        t.insert(ShortString::from(k.as_str()), to_amqp(v));
    }
    t
}

fn to_amqp(v: &Value) -> AMQPValue {
    match v {
        Value::Null => AMQPValue::Void,
        Value::Bool(b) => AMQPValue::Boolean(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => AMQPValue::LongLongInt(i),
            (None, Some(u), _) => AMQPValue::Timestamp(u),
            (None, None, Some(f)) => AMQPValue::Double(f),
            (None, None, None) => AMQPValue::Void,
        },
        Value::String(s) => AMQPValue::LongString(LongString::from(s.as_str())),
        Value::Array(items) => AMQPValue::FieldArray(FieldArray::from(
            items.iter().map(to_amqp).collect::<Vec<_>>(),
        )),
        Value::Object(m) => AMQPValue::FieldTable(json_to_table(m)),
    }
}

/// A delivery of the dead-letter queue as the database keeps it. Properties a replay must not
/// restore are left out: `expiration` (the replayed message would expire again) and `user-id`
/// (the broker refuses a user id other than the publisher's).
pub fn incoming(d: &Delivery) -> IncomingDeadLetter {
    let p = &d.properties;
    let mut properties = Map::new();
    let mut text = |k: &str, v: &Option<ShortString>| {
        if let Some(v) = v {
            properties.insert(k.to_owned(), Value::String(v.as_str().to_owned()));
        }
    };
    text("content_encoding", p.content_encoding());
    text("correlation_id", p.correlation_id());
    text("reply_to", p.reply_to());
    text("type", p.kind());
    text("app_id", p.app_id());
    if let Some(t) = p.timestamp() {
        properties.insert("timestamp".into(), Value::from(*t));
    }
    if let Some(n) = p.priority() {
        properties.insert("priority".into(), Value::from(*n));
    }
    IncomingDeadLetter {
        exchange: d.exchange.as_str().to_owned(),
        routing_key: d.routing_key.as_str().to_owned(),
        message_id: p.message_id().as_ref().map(|s| s.as_str().to_owned()),
        content_type: p.content_type().as_ref().map(|s| s.as_str().to_owned()),
        properties,
        headers: p.headers().as_ref().map(table_to_json).unwrap_or_default(),
        body: d.data.clone(),
    }
}

/// Where a dead letter goes back to: the queue its node consumed it from when the node said
/// (a `queue` data queue's shared queue), else its launch setting's subscription. Only a queue
/// of this installation is taken from the header.
pub fn replay_queue(names: &Names, row: &dead_letters::Model, launch_setting: &str) -> String {
    row.headers
        .get(wire::DL_QUEUE_HEADER)
        .and_then(Value::as_str)
        .filter(|q| {
            q.strip_prefix(names.prefix())
                .is_some_and(|rest| rest.starts_with('.'))
        })
        .map_or_else(|| names.subscription(launch_setting), str::to_owned)
}

/// The properties a dead letter is replayed with: its own (message id, content type, the
/// others it was published with), persistent, and its headers as a fresh start.
pub fn replay_properties(
    row: &dead_letters::Model,
    replayed_by: &str,
    replayed_at: &str,
) -> BasicProperties {
    let mut headers = headers_of(row);
    headers.retain(|k, _| {
        !DROPPED.contains(&k.as_str()) && !DROPPED_PREFIXES.iter().any(|p| k.starts_with(p))
    });
    headers.insert(wire::ATTEMPT_HEADER.into(), Value::from(1));
    headers.insert(wire::REPLAYED_BY_HEADER.into(), Value::from(replayed_by));
    headers.insert(wire::REPLAYED_AT_HEADER.into(), Value::from(replayed_at));
    // Every outcome of this replay names it (docs/runtime.md, Replay outcomes).
    headers.insert(
        wire::replay::REPLAY_HEADER.into(),
        Value::from(am_services::dead_letters::next_replay_token(row).to_string()),
    );
    stored_properties(row, &headers)
}

/// The properties a forwarded copy carries: the dead letter's own, and every header it had,
/// failure headers included (the receiver wants to know why it failed).
pub fn forward_properties(row: &dead_letters::Model) -> BasicProperties {
    stored_properties(row, &headers_of(row))
}

fn headers_of(row: &dead_letters::Model) -> Map<String, Value> {
    match &row.headers {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    }
}

/// The dead letter's stored properties, persistent, with `headers`.
fn stored_properties(row: &dead_letters::Model, headers: &Map<String, Value>) -> BasicProperties {
    let mut props = BasicProperties::default()
        .with_delivery_mode(2)
        .with_headers(json_to_table(headers));
    if let Some(id) = &row.message_id {
        props = props.with_message_id(id.as_str().into());
    }
    if let Some(ct) = &row.content_type {
        props = props.with_content_type(ct.as_str().into());
    }
    let saved = row.properties.as_ref().and_then(Value::as_object);
    let text = |k: &str| {
        saved
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .map(ShortString::from)
    };
    if let Some(v) = text("content_encoding") {
        props = props.with_content_encoding(v);
    }
    if let Some(v) = text("correlation_id") {
        props = props.with_correlation_id(v);
    }
    if let Some(v) = text("reply_to") {
        props = props.with_reply_to(v);
    }
    if let Some(v) = text("type") {
        props = props.with_type(v);
    }
    if let Some(v) = text("app_id") {
        props = props.with_app_id(v);
    }
    if let Some(t) = saved
        .and_then(|m| m.get("timestamp"))
        .and_then(Value::as_u64)
    {
        props = props.with_timestamp(t);
    }
    if let Some(n) = saved
        .and_then(|m| m.get("priority"))
        .and_then(Value::as_u64)
        .and_then(|n| u8::try_from(n).ok())
    {
        props = props.with_priority(n);
    }
    props
}

/// Sends dead letters back to their launch settings' subscriptions: to the default exchange
/// with the subscription queue as routing key (not to the shared data exchange, whose other
/// subscribers processed the message already), mandatory and persistent. Everything is
/// published first and the confirms awaited after, for throughput. `channel` must be in
/// confirm mode. One result per row, in the order of `rows`: a row without a launch setting,
/// a subscription that does not exist (the broker returns the message), a publication the
/// broker refuses or the connection loses, or one the broker has not confirmed within 30 s is
/// that row's error.
pub async fn publish_batch(
    channel: &Channel,
    names: &Names,
    rows: &[dead_letters::Model],
    replayed_by: &str,
) -> Vec<Result<(), ReplayError>> {
    let replayed_at = chrono::Utc::now().to_rfc3339();
    let deadline = Instant::now() + BATCH_DEADLINE;
    let mut pending = Vec::with_capacity(rows.len());
    let mut broken: Option<ReplayError> = None;
    for row in rows {
        let Some(ls) = &row.launch_setting_id else {
            pending.push(Pending::Failed(ReplayError::NoLaunchSetting(row.id)));
            continue;
        };
        if let Some(e) = &broken {
            pending.push(Pending::Failed(e.clone()));
            continue;
        }
        let queue = replay_queue(names, row, ls);
        let published = timeout_at(
            deadline,
            channel.basic_publish(
                "".into(),
                queue.as_str().into(),
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                &row.body,
                replay_properties(row, replayed_by, &replayed_at),
            ),
        )
        .await;
        match published {
            Ok(Ok(confirm)) => pending.push(Pending::Sent(queue, confirm)),
            Ok(Err(e)) => {
                let e = ReplayError::Publish(e.to_string());
                broken = Some(e.clone());
                pending.push(Pending::Failed(e));
            }
            Err(_) => {
                let e = ReplayError::Blocked(BATCH_DEADLINE.as_secs());
                broken = Some(e.clone());
                pending.push(Pending::Failed(e));
            }
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    for p in pending {
        out.push(match p {
            Pending::Failed(e) => Err(e),
            Pending::Sent(queue, confirm) => match timeout_at(deadline, confirm).await {
                Err(_) => Err(ReplayError::Unconfirmed {
                    queue,
                    secs: BATCH_DEADLINE.as_secs(),
                }),
                Ok(Ok(c)) if !c.is_ack() => Err(ReplayError::Refused(queue)),
                // An unroutable mandatory message is acknowledged *and* returned.
                Ok(Ok(c)) => match c.take_message() {
                    Some(_) => Err(ReplayError::NoSubscription(queue)),
                    None => Ok(()),
                },
                Ok(Err(e)) => Err(ReplayError::ConfirmLost {
                    queue,
                    detail: e.to_string(),
                }),
            },
        });
    }
    out
}

enum Pending {
    Sent(String, lapin::PublisherConfirm),
    Failed(ReplayError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_replay_goes_back_to_the_queue_it_was_consumed_from() {
        let names = Names::new("am");
        let shared = row(json!({ wire::DL_QUEUE_HEADER: "am.dq.jobs" }), None);
        assert_eq!(replay_queue(&names, &shared, "a.b"), "am.dq.jobs");
        // Another installation's queue, or none named: the launch setting's subscription.
        let foreign = row(json!({ wire::DL_QUEUE_HEADER: "amx.dq.jobs" }), None);
        assert_eq!(replay_queue(&names, &foreign, "a.b"), "am.ls.a.b");
        assert_eq!(
            replay_queue(&names, &row(json!({}), None), "a.b"),
            "am.ls.a.b"
        );
    }

    fn row(headers: Value, properties: Option<Value>) -> dead_letters::Model {
        dead_letters::Model {
            id: 1,
            dedupe_key: "k".into(),
            launch_setting_id: Some("a.b".into()),
            data_queue_id: Some("q".into()),
            message_id: Some("m-1".into()),
            routing_key: None,
            headers,
            body: b"{}".to_vec(),
            content_type: Some("application/json".into()),
            error_type: None,
            error_message: None,
            attempts: 3,
            first_failure_at: None,
            last_failure_at: None,
            host: None,
            received_at: chrono::Utc::now(),
            status: "dead".into(),
            park_until: None,
            replay_count: 0,
            replayed_at: None,
            replayed_by: None,
            properties,
            forward_to: None,
            forward_next_at: None,
            forwarded_at: None,
            forward_attempts: 0,
            forward_error: None,
            replay_operation: None,
            replay_result: None,
            replay_result_at: None,
            replay_error: None,
            replay_dead_letter: None,
        }
    }

    #[test]
    fn a_replay_is_a_fresh_start_with_the_original_properties() {
        let r = row(
            json!({
                "tenant": "acme",
                "n": 7,
                "flags": [true, null, 1.5],
                "x-am-attempt": 10,
                "x-am-first-failure": "t",
                "x-am-parked": "t",
                "x-am-launch-setting": "a.b",
                "x-am-last-error-type": "E",
                "x-death": [{"queue": "am.ls.a.b"}],
                "x-first-death-reason": "delivery_limit",
                "x-last-death-queue": "am.ls.a.b",
            }),
            Some(
                json!({"correlation_id": "c-1", "timestamp": 1_900_000_000_u64, "priority": 3, "type": "order"}),
            ),
        );
        let p = replay_properties(&r, "alice", "2030-01-01T00:00:00Z");
        let h = table_to_json(p.headers().as_ref().expect("headers"));
        assert_eq!(
            Value::Object(h),
            json!({
                "tenant": "acme",
                "n": 7,
                "flags": [true, null, 1.5],
                "x-am-attempt": 1,
                "x-am-replayed-by": "alice",
                "x-am-replayed-at": "2030-01-01T00:00:00Z",
                // Dead letter 1's first replay: every outcome of it names this token.
                "x-am-replay": "1.1",
            })
        );
        assert_eq!(p.message_id().as_ref().map(|s| s.as_str()), Some("m-1"));
        assert_eq!(
            p.content_type().as_ref().map(|s| s.as_str()),
            Some("application/json")
        );
        assert_eq!(p.correlation_id().as_ref().map(|s| s.as_str()), Some("c-1"));
        assert_eq!(p.kind().as_ref().map(|s| s.as_str()), Some("order"));
        assert_eq!(*p.timestamp(), Some(1_900_000_000));
        assert_eq!(*p.priority(), Some(3));
        assert_eq!(*p.delivery_mode(), Some(2));
    }

    #[test]
    fn field_tables_round_trip_through_json() {
        let mut inner = FieldTable::default();
        inner.insert("count".into(), AMQPValue::LongLongInt(2));
        inner.insert("time".into(), AMQPValue::Timestamp(1_900_000_000));
        let mut t = FieldTable::default();
        t.insert("s".into(), AMQPValue::LongString("ü".into()));
        t.insert("short".into(), AMQPValue::ShortString("x".into()));
        t.insert("i".into(), AMQPValue::LongInt(-3));
        t.insert("b".into(), AMQPValue::Boolean(false));
        t.insert("d".into(), AMQPValue::Double(0.25));
        t.insert("v".into(), AMQPValue::Void);
        t.insert(
            "x-death".into(),
            AMQPValue::FieldArray(vec![AMQPValue::FieldTable(inner)].into()),
        );
        let j = table_to_json(&t);
        assert_eq!(
            Value::Object(j.clone()),
            json!({"s": "ü", "short": "x", "i": -3, "b": false, "d": 0.25, "v": null,
                   "x-death": [{"count": 2, "time": 1_900_000_000}]})
        );
        // Back again: the same JSON (wire types widened).
        assert_eq!(table_to_json(&json_to_table(&j)), j);
    }
}
