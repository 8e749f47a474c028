//! A messages activation: consumes the launch setting's shared subscription, acknowledges
//! after success, sends failures to the retry wait queue of their delay (or to the dead-letter
//! queue after the last attempt), feeds the breaker, and resubscribes after a reconnect.

use crate::{
    AgentError,
    agent::BoundHandler,
    context::{Message, RunInfo, header_text, header_u64},
    runtime::{LsStats, Shared, with_grace},
};
use am_domain::{
    catalog::{DeadLetterPolicy, LaunchKind},
    policy::{retry_delay, should_dead_letter},
    wire::{self, ActivationResult, Launch, Subscription},
};
use futures_util::StreamExt;
use lapin::{
    BasicProperties, Channel, Connection, Consumer,
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicNackOptions, BasicPublishOptions,
        BasicQosOptions, ConfirmSelectOptions,
    },
    types::{AMQPValue, FieldTable, LongString},
};
use std::{sync::Arc, sync::atomic::Ordering, time::Duration};
use tokio::{task::JoinSet, time::Instant};
use tracing::Instrument;

/// How one message ended, for the consumer loop.
enum Outcome {
    Continue,
    /// The channel is broken: resubscribe on the next connection.
    Reconnect,
    Interrupted,
    Tripped(String),
}

/// The channels of one subscription on one connection.
struct Session {
    channel: Channel,
    publisher: Channel,
    consumer: Consumer,
    /// The queue consumed: retries come back to it.
    queue: String,
    /// Acknowledgements on their way; awaited before the channel closes, or they would be
    /// lost and their messages delivered once more.
    acks: JoinSet<()>,
}

impl Session {
    async fn open(
        shared: &Shared,
        conn: &Connection,
        launch_setting: &str,
        subscription: &Subscription,
        prefetch: u16,
    ) -> Result<Self, lapin::Error> {
        let channel = conn.create_channel().await?;
        // The manager declares the data topology from its catalog; a node only checks.
        let queue = shared.topology.consumed_queue(launch_setting, subscription);
        shared.topology.check_queue(&channel, &queue).await?;
        let publisher = conn.create_channel().await?;
        publisher
            .confirm_select(ConfirmSelectOptions::default())
            .await?;
        channel
            .basic_qos(prefetch, BasicQosOptions::default())
            .await?;
        let consumer = channel
            .basic_consume(
                queue.as_str().into(),
                "".into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await?;
        Ok(Self {
            channel,
            publisher,
            consumer,
            queue,
            acks: JoinSet::new(),
        })
    }

    /// Closing the channel hands every unacknowledged (prefetched) message back to the broker.
    async fn close(mut self) {
        let acks = async { while self.acks.join_next().await.is_some() {} };
        if tokio::time::timeout(Duration::from_secs(5), acks)
            .await
            .is_err()
        {
            tracing::warn!(
                "acknowledgements still pending at close; those messages will come back"
            );
        }
        let _ = self.channel.close(200, "activation ended".into()).await;
        let _ = self.publisher.close(200, "activation ended".into()).await;
    }
}

pub(crate) async fn run(
    shared: &Arc<Shared>,
    info: &Arc<RunInfo>,
    handler: &dyn BoundHandler,
    launch: &Launch,
    prefetch: u16,
) -> (ActivationResult, Option<String>) {
    let Some(subscription) = &launch.subscription else {
        return (
            ActivationResult::Failed,
            Some("no subscription in the launch".into()),
        );
    };
    let stats = shared.stats(&launch.launch_setting);
    let idle = (launch.kind == LaunchKind::Scheduled).then(|| {
        launch
            .idle_timeout
            .map_or(shared.default_idle_timeout, |d| d.0)
    });
    let mut last_activity = Instant::now();
    // Created once: a fresh `cancelled()` or timer per message would cost a registration each.
    let cancelled = info.cancel.cancelled();
    tokio::pin!(cancelled);
    let idle_timer = tokio::time::sleep(idle.unwrap_or(Duration::from_secs(3600)));
    tokio::pin!(idle_timer);
    loop {
        let Some(conn) = shared.link.connected(&info.cancel).await else {
            return (ActivationResult::Interrupted, None);
        };
        let mut session = match Session::open(
            shared,
            &conn,
            &launch.launch_setting,
            subscription,
            prefetch,
        )
        .await
        {
            Ok(s) => s,
            Err(e) if is_not_found(&e) => {
                // Retrying cannot help: the catalog does not give this launch setting a queue.
                let queue = shared
                    .topology
                    .consumed_queue(&launch.launch_setting, subscription);
                return (
                    ActivationResult::Failed,
                    Some(format!(
                        "queue `{queue}` of launch setting '{}' does not exist on the broker; \
                         the manager declares it from its catalog (is the launch setting in \
                         the catalog and consuming data queue '{}'?)",
                        launch.launch_setting, subscription.data_queue
                    )),
                );
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot subscribe; retrying");
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(200)) => continue,
                    () = info.cancel.cancelled() => return (ActivationResult::Interrupted, None),
                }
            }
        };
        tracing::debug!("subscribed");
        loop {
            let next = tokio::select! {
                biased;
                () = &mut cancelled => {
                    session.close().await;
                    return (ActivationResult::Interrupted, None);
                }
                d = session.consumer.next() => d,
                () = &mut idle_timer, if idle.is_some() => {
                    // The timer is moved lazily: only when it fires do we look at the last message.
                    let deadline = last_activity + idle.unwrap_or_default();
                    if deadline > Instant::now() {
                        idle_timer.as_mut().reset(deadline);
                        continue;
                    }
                    tracing::info!("subscription idle; scheduled activation done");
                    session.close().await;
                    return (ActivationResult::Succeeded, None);
                }
            };
            let delivery = match next {
                Some(Ok(d)) => d,
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "subscription consumer failed; resubscribing");
                    break;
                }
                None => {
                    tracing::warn!("subscription consumer ended; resubscribing");
                    break;
                }
            };
            match process(
                shared,
                info,
                handler,
                launch,
                subscription,
                &stats,
                &mut session,
                delivery,
            )
            .await
            {
                Outcome::Continue => last_activity = Instant::now(),
                Outcome::Reconnect => break,
                Outcome::Interrupted => {
                    session.close().await;
                    return (ActivationResult::Interrupted, None);
                }
                Outcome::Tripped(error) => {
                    session.close().await;
                    return (ActivationResult::Failed, Some(error));
                }
            }
        }
        session.close().await;
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
            () = info.cancel.cancelled() => return (ActivationResult::Interrupted, None),
        }
    }
}

fn is_not_found(e: &lapin::Error) -> bool {
    e.to_string().contains("NOT_FOUND")
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; a struct would only rename them"
)]
async fn process(
    shared: &Shared,
    info: &RunInfo,
    handler: &dyn BoundHandler,
    launch: &Launch,
    subscription: &Subscription,
    stats: &LsStats,
    session: &mut Session,
    delivery: lapin::message::Delivery,
) -> Outcome {
    let lapin::message::Delivery {
        data,
        properties,
        acker,
        redelivered,
        ..
    } = delivery;
    let attempt = properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get(wire::ATTEMPT_HEADER))
        .and_then(header_u64)
        .and_then(|a| u32::try_from(a).ok())
        .unwrap_or(1)
        .max(1);
    let message_id = properties.message_id().as_ref().map(|s| s.to_string());
    let message = Message::from_delivery(
        data,
        properties.headers().as_ref(),
        message_id.clone(),
        attempt,
        redelivered || attempt > 1,
    );
    let span = tracing::debug_span!("message", activation_id = %info.activation_id,
        launch_setting = %info.launch_setting, host = %info.host, attempt, message_id = message_id.as_deref());
    let result = with_grace(
        handler.handle(&message),
        &info.cancel,
        shared.interrupt_grace,
    )
    .instrument(span.clone())
    .await;
    let _enter = span.enter();
    match result {
        Ok(()) => {
            stats.processed.fetch_add(1, Ordering::Relaxed);
            stats.success();
            // Not awaited inline: waiting for each ack halves throughput, and a lost ack only
            // means a redelivery, which at-least-once delivery allows anyway.
            while session.acks.try_join_next().is_some() {}
            session.acks.spawn(async move {
                if let Err(e) = acker.ack(BasicAckOptions::default()).await {
                    tracing::debug!(error = %e, "ack not sent; the message will be redelivered");
                }
            });
            Outcome::Continue
        }
        Err(e) if e.is_interrupted() || info.cancel.is_cancelled() => {
            let _ = acker
                .nack(BasicNackOptions {
                    requeue: true,
                    ..BasicNackOptions::default()
                })
                .await;
            Outcome::Interrupted
        }
        Err(err) => {
            stats.failed.fetch_add(1, Ordering::Relaxed);
            let give_up = should_dead_letter(&launch.dead_letter, &launch.retry, attempt);
            let parked_before = properties
                .headers()
                .as_ref()
                .is_some_and(|h| h.contains_key(wire::PARKED_HEADER));
            let park =
                give_up && launch.dead_letter.policy == DeadLetterPolicy::Park && !parked_before;
            let dead = give_up && !park;
            let (sent, disposition) = if dead {
                let sent = dead_letter(
                    shared,
                    info,
                    subscription,
                    session,
                    &message,
                    &properties,
                    attempt,
                    &err,
                )
                .await;
                (sent, wire::disposition::DEAD_LETTER)
            } else if park {
                (
                    park_message(shared, launch, session, &message, &properties).await,
                    wire::disposition::PARK,
                )
            } else {
                (
                    retry(shared, launch, session, &message, &properties, attempt).await,
                    wire::disposition::RETRY,
                )
            };
            shared.report_failure(info, &err, attempt, message_id, Some(disposition));
            match sent {
                Ok(()) => {
                    if dead {
                        stats.dead_lettered.fetch_add(1, Ordering::Relaxed);
                    } else {
                        stats.retried.fetch_add(1, Ordering::Relaxed);
                    }
                    // The copy is confirmed; only now may the original go.
                    if let Err(e) = acker.ack(BasicAckOptions::default()).await {
                        tracing::warn!(error = %e, "cannot ack a message already sent on; it will come back once more");
                        return Outcome::Reconnect;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, disposition, "cannot send the failed message on; returning it to the queue");
                    let _ = acker
                        .nack(BasicNackOptions {
                            requeue: true,
                            ..BasicNackOptions::default()
                        })
                        .await;
                    return Outcome::Reconnect;
                }
            }
            if !err.is_temporary()
                && let Some(trip) = stats.failure(&err)
            {
                let summary = format!(
                    "breaker tripped after {} consecutive failures ({} of type {})",
                    trip.consecutive,
                    trip.same_type,
                    err.error_type()
                );
                shared.report_trip(info, trip);
                return Outcome::Tripped(summary);
            }
            Outcome::Continue
        }
    }
}

fn text(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s))
}

/// Policy `park`: the message rests in the sump for the cool-down, then gets a fresh round
/// of attempts; marked so that the next give-up is final.
async fn park_message(
    shared: &Shared,
    launch: &Launch,
    session: &mut Session,
    message: &Message,
    properties: &BasicProperties,
) -> Result<(), String> {
    let cooldown = launch.dead_letter.park_cooldown.0;
    let wait = shared.topology.names().wait(cooldown);
    let mut headers = properties.headers().clone().unwrap_or_default();
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

async fn retry(
    shared: &Shared,
    launch: &Launch,
    session: &mut Session,
    message: &Message,
    properties: &BasicProperties,
    attempt: u32,
) -> Result<(), String> {
    let delay = retry_delay(&launch.retry, attempt);
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
async fn dead_letter(
    shared: &Shared,
    info: &RunInfo,
    subscription: &Subscription,
    session: &Session,
    message: &Message,
    properties: &BasicProperties,
    attempt: u32,
    err: &AgentError,
) -> Result<(), String> {
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
) -> Result<(), String> {
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
        .await
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| e.to_string())?;
    if !confirmation.is_ack() {
        return Err(format!("the broker refused the message for `{target}`"));
    }
    if confirmation.take_message().is_some() {
        return Err(format!("`{target}` routed the message to no queue"));
    }
    Ok(())
}
