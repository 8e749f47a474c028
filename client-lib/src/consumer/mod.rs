//! A messages activation: consumes the launch setting's shared subscription, acknowledges
//! after success, sends failures to the retry wait queue of their delay (or to the dead-letter
//! queue after the last attempt), feeds the breaker, and resubscribes after a reconnect.

mod failed;

use crate::telemetry::TraceHeaders;
use crate::{
    agent::BoundHandler,
    agent::with_grace,
    context::{DeliveryCount, Message, RunInfo, header_text, header_u64},
    shared::{LsStats, Shared, count},
};
use am_domain::{
    catalog::{DeadLetterPolicy, LaunchKind},
    policy::should_dead_letter,
    wire::{
        self, ActivationResult, Launch, Subscription,
        replay::{REPLAY_HEADER, ReplayToken},
    },
};
use futures_util::StreamExt;
use lapin::{
    Channel, Connection, Consumer,
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicNackOptions, BasicQosOptions,
        ConfirmSelectOptions,
    },
    types::FieldTable,
};
use std::{sync::Arc, time::Duration};
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
    let mut resubscribing = false;
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
        if resubscribing {
            tracing::info!(queue = %session.queue, "subscribed again");
        } else {
            tracing::debug!(queue = %session.queue, "subscribed");
        }
        resubscribing = true;
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
    // A replayed dead letter: its outcome goes back to the manager.
    let replay = properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get(REPLAY_HEADER))
        .and_then(header_text)
        .and_then(|t| t.parse::<ReplayToken>().ok());
    let message = Message::from_delivery(
        data,
        properties.headers().as_ref(),
        message_id.clone(),
        DeliveryCount {
            attempt,
            unavailable: failed::unavailable_answers(properties.headers().as_ref()),
            redelivered,
        },
    );
    let span = message_span(info, attempt, message_id.as_deref(), &properties);
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
            count(stats, info, |t| &t.processed);
            stats.success();
            if let Some(replay) = replay {
                shared.report_replay_processed(info, replay);
            }
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
        Err(err) if err.is_temporary() => {
            // Not an attempt, not a failure: the message comes back later (or its budget is
            // spent and it is dead-lettered saying so).
            let u = failed::unavailable(
                shared,
                info,
                launch,
                subscription,
                session,
                &message,
                &properties,
                &err,
            )
            .await;
            shared.report_failure(
                info,
                &u.error,
                attempt,
                message_id,
                Some(u.disposition),
                replay,
            );
            settle(
                stats,
                info,
                acker,
                u.sent,
                u.disposition == wire::disposition::DEAD_LETTER,
                u.disposition,
            )
            .await
        }
        Err(err) => {
            count(stats, info, |t| &t.failed);
            let give_up = should_dead_letter(&launch.dead_letter, &launch.retry, attempt);
            let parked_before = properties
                .headers()
                .as_ref()
                .is_some_and(|h| h.contains_key(wire::PARKED_HEADER));
            let park =
                give_up && launch.dead_letter.policy == DeadLetterPolicy::Park && !parked_before;
            let dead = give_up && !park;
            let (sent, disposition) = if dead {
                let sent = failed::dead_letter(
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
                    failed::park_message(shared, launch, session, &message, &properties).await,
                    wire::disposition::PARK,
                )
            } else {
                (
                    failed::retry(shared, launch, session, &message, &properties, attempt).await,
                    wire::disposition::RETRY,
                )
            };
            shared.report_failure(info, &err, attempt, message_id, Some(disposition), replay);
            if let Outcome::Reconnect = settle(stats, info, acker, sent, dead, disposition).await {
                return Outcome::Reconnect;
            }
            if let Some(trip) = stats.failure(&err, Some(identity(&message))) {
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

/// Who a data message is, for the breaker's runs: its message id, else its body.
/// The span of one message's handling: a child of the run, linked to whoever published the
/// message when it carries a trace context.
fn message_span(
    info: &RunInfo,
    attempt: u32,
    message_id: Option<&str>,
    properties: &lapin::BasicProperties,
) -> tracing::Span {
    // Level debug: a log at info pays nothing per message; the exporter takes it
    // (`telemetry::MESSAGE_SPANS`).
    let span = tracing::debug_span!(target: crate::telemetry::MESSAGE_SPANS, "message", activation_id = %info.activation_id,
        launch_setting = %info.launch_setting, host = %info.host, attempt, message_id);
    TraceHeaders::from_amqp(properties.headers().as_ref()).link_from(&span);
    span
}

fn identity(message: &Message) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    match message.message_id() {
        Some(id) => id.hash(&mut h),
        None => message.body().hash(&mut h),
    }
    h.finish()
}

/// Acknowledges a failed message once its copy (retry, park, dead letter) is confirmed, or
/// gives it back to the queue when the copy could not be sent.
async fn settle(
    stats: &LsStats,
    info: &RunInfo,
    acker: lapin::Acker,
    sent: Result<(), crate::confirmed::SendError>,
    dead: bool,
    disposition: &str,
) -> Outcome {
    match sent {
        Ok(()) => {
            if dead {
                count(stats, info, |t| &t.dead_lettered);
            } else {
                count(stats, info, |t| &t.retried);
            }
            // The copy is confirmed; only now may the original go.
            if let Err(e) = acker.ack(BasicAckOptions::default()).await {
                tracing::warn!(error = %e, "cannot ack a message already sent on; it will come back once more");
                return Outcome::Reconnect;
            }
            Outcome::Continue
        }
        Err(e) => {
            tracing::warn!(error = %e, disposition, "cannot send the failed message on; returning it to the queue");
            let _ = acker
                .nack(BasicNackOptions {
                    requeue: true,
                    ..BasicNackOptions::default()
                })
                .await;
            Outcome::Reconnect
        }
    }
}
