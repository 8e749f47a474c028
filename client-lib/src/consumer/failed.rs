//! Where a message the agent failed on goes, each copy confirmed by the broker before the
//! original is acknowledged: back after its retry delay (through the shared wait queue of that
//! delay), to the sump (policy `park`), or to the dead-letter queue. An answer "temporarily
//! unavailable" is not a delivery attempt: the message comes back after the launch setting's
//! growing delays without using up its attempts, for as long as its `unavailable_for` budget
//! (counted from the first such answer) lasts, and is dead-lettered with that reason after.

use super::Session;
use crate::{
    AgentError,
    confirmed::{SendError, landed},
    context::{Message, RunInfo, header_text, header_u64},
    shared::Shared,
};
use am_domain::wire::{self, Launch, Subscription};
use chrono::{DateTime, Utc};
use lapin::{
    BasicProperties, Channel,
    options::BasicPublishOptions,
    types::{AMQPValue, FieldTable, LongString},
};

fn text(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s))
}

/// Where an "unavailable" answer sent the message, and the error to report for it.
pub(super) struct Unavailable {
    pub sent: Result<(), SendError>,
    pub disposition: &'static str,
    pub error: AgentError,
}

/// An answer "temporarily unavailable": the message comes back after the delay of its
/// `unavailable`-th such answer, its attempt unchanged, or, once `unavailable_for` has passed
/// since the first such answer, goes to the dead-letter queue saying so.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site; a struct would only rename them"
)]
pub(super) async fn unavailable(
    shared: &Shared,
    info: &RunInfo,
    launch: &Launch,
    subscription: &Subscription,
    session: &Session,
    message: &Message,
    properties: &BasicProperties,
    err: &AgentError,
) -> Unavailable {
    let now = Utc::now();
    let headers = properties.headers().clone().unwrap_or_default();
    let since = headers
        .inner()
        .get(wire::UNAVAILABLE_SINCE_HEADER)
        .and_then(header_text)
        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .map_or(now, |t| t.with_timezone(&Utc));
    let answers = message.unavailable().saturating_add(1);
    let budget = launch.unavailable_for;
    let spent = now
        .signed_duration_since(since)
        .to_std()
        .unwrap_or_default();
    if spent >= budget.0 {
        let error = AgentError::temporarily_unavailable(format!(
            "still unavailable after {budget} ({answers} answers since {}): {}",
            since.to_rfc3339(),
            err.message()
        ));
        let sent = dead_letter(
            shared,
            info,
            subscription,
            session,
            message,
            properties,
            message.attempt(),
            &error,
        )
        .await;
        return Unavailable {
            sent,
            disposition: wire::disposition::DEAD_LETTER,
            error,
        };
    }
    let delay = launch.retry_delay(answers);
    let wait = shared.topology.names().wait(delay);
    let mut headers = headers;
    headers.insert(
        wire::UNAVAILABLE_SINCE_HEADER.into(),
        text(&since.to_rfc3339()),
    );
    headers.insert(
        wire::UNAVAILABLE_HEADER.into(),
        AMQPValue::LongLongInt(i64::from(answers)),
    );
    tracing::debug!(?delay, answers, "message unavailable; it comes back later");
    let sent = publish(
        &session.publisher,
        &wait,
        &session.queue,
        message.body(),
        properties,
        headers,
    )
    .await;
    Unavailable {
        sent,
        disposition: wire::disposition::RETRY,
        error: err.clone(),
    }
}

/// The number of "unavailable" answers a message's headers count.
pub(super) fn unavailable_answers(headers: Option<&FieldTable>) -> u32 {
    headers
        .and_then(|h| h.inner().get(wire::UNAVAILABLE_HEADER))
        .and_then(header_u64)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0)
}

/// Policy `park`: the message rests in the sump for the cool-down, then gets a fresh round
/// of attempts; marked so that the next give-up is final.
pub(super) async fn park_message(
    shared: &Shared,
    launch: &Launch,
    session: &mut Session,
    message: &Message,
    properties: &BasicProperties,
) -> Result<(), SendError> {
    let cooldown = launch.dead_letter.park_cooldown.0;
    let wait = shared.topology.names().wait(cooldown);
    // A fresh round: its "unavailable" budget starts again too.
    let mut headers: FieldTable = properties
        .headers()
        .as_ref()
        .map(|h| {
            h.inner()
                .iter()
                .filter(|(k, _)| {
                    ![wire::UNAVAILABLE_SINCE_HEADER, wire::UNAVAILABLE_HEADER]
                        .contains(&k.as_str())
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<std::collections::BTreeMap<_, _>>()
                .into()
        })
        .unwrap_or_default();
    headers.insert(wire::ATTEMPT_HEADER.into(), AMQPValue::LongLongInt(1));
    headers.insert(
        wire::PARKED_HEADER.into(),
        text(&chrono::Utc::now().to_rfc3339()),
    );
    if !headers.contains_key(wire::FIRST_FAILURE_HEADER) {
        headers.insert(
            wire::FIRST_FAILURE_HEADER.into(),
            text(&chrono::Utc::now().to_rfc3339()),
        );
    }
    tracing::info!(?cooldown, "message parked");
    publish(
        &session.publisher,
        &wait,
        &session.queue,
        message.body(),
        properties,
        headers,
    )
    .await
}

pub(super) async fn retry(
    shared: &Shared,
    launch: &Launch,
    session: &mut Session,
    message: &Message,
    properties: &BasicProperties,
    attempt: u32,
) -> Result<(), SendError> {
    let delay = launch.retry_delay(attempt);
    // The wait queue of this delay gives the message back to the queue it came from.
    let wait = shared.topology.names().wait(delay);
    let mut headers = properties.headers().clone().unwrap_or_default();
    headers.insert(
        wire::ATTEMPT_HEADER.into(),
        AMQPValue::LongLongInt(i64::from(attempt) + 1),
    );
    if !headers.contains_key(wire::FIRST_FAILURE_HEADER) {
        headers.insert(
            wire::FIRST_FAILURE_HEADER.into(),
            text(&chrono::Utc::now().to_rfc3339()),
        );
    }
    tracing::debug!(?delay, next_attempt = attempt + 1, "message sent to retry");
    publish(
        &session.publisher,
        &wait,
        &session.queue,
        message.body(),
        properties,
        headers,
    )
    .await
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; a struct would only rename them"
)]
pub(super) async fn dead_letter(
    shared: &Shared,
    info: &RunInfo,
    subscription: &Subscription,
    session: &Session,
    message: &Message,
    properties: &BasicProperties,
    attempt: u32,
    err: &AgentError,
) -> Result<(), SendError> {
    let now = chrono::Utc::now().to_rfc3339();
    let mut headers = properties.headers().clone().unwrap_or_default();
    let first = headers
        .inner()
        .get(wire::FIRST_FAILURE_HEADER)
        .and_then(header_text)
        .unwrap_or_else(|| now.clone());
    for (k, v) in [
        (wire::DL_DATA_QUEUE_HEADER, subscription.data_queue.as_str()),
        (wire::DL_LAUNCH_SETTING_HEADER, info.launch_setting.as_str()),
        (wire::DL_ERROR_TYPE_HEADER, err.error_type()),
        (wire::DL_ERROR_MESSAGE_HEADER, err.message()),
        (wire::FIRST_FAILURE_HEADER, first.as_str()),
        (wire::DL_LAST_FAILURE_HEADER, now.as_str()),
        (wire::DL_HOST_HEADER, shared.host.as_str()),
        (wire::DL_QUEUE_HEADER, session.queue.as_str()),
    ] {
        headers.insert(k.into(), text(v));
    }
    headers.insert(
        wire::DL_ATTEMPTS_HEADER.into(),
        AMQPValue::LongLongInt(i64::from(attempt)),
    );
    tracing::info!(attempt, "message dead-lettered");
    publish(
        &session.publisher,
        "",
        &shared.topology.names().dead_letter_queue(),
        message.body(),
        properties,
        headers,
    )
    .await
}

/// Publishes a copy and waits for the broker's confirm; a copy no queue took is an error.
async fn publish(
    channel: &Channel,
    exchange: &str,
    routing_key: &str,
    body: &[u8],
    properties: &BasicProperties,
    headers: FieldTable,
) -> Result<(), SendError> {
    let target = if exchange.is_empty() {
        routing_key
    } else {
        exchange
    };
    let confirmation = channel
        .basic_publish(
            exchange.into(),
            routing_key.into(),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            body,
            properties
                .clone()
                .with_headers(headers)
                .with_delivery_mode(2),
        )
        .await?
        .await?;
    landed(confirmation, target)
}
