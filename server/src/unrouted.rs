//! The broker side of replaying unrouted messages: what no launch setting of a data queue took
//! waits in that data queue's unrouted queue (docs/protocol.md, "Broker topology"); once a
//! launch setting exists, an operator's replay moves it back to the data queue's exchange.
//!
//! A message is taken unacknowledged, published with publisher confirms and acknowledged only
//! once the broker confirmed the copy: a crash or a lost connection in between leaves it in the
//! unrouted queue (at worst also delivered once through the exchange: delivery is at least
//! once), never nowhere.

use am_domain::wire::{self, names::Names};
use am_services::operations::{ReplayError, UnroutedBatch};
use lapin::{
    BasicProperties, Channel,
    options::{BasicAckOptions, BasicGetOptions, BasicNackOptions, BasicPublishOptions},
    types::{AMQPValue, FieldTable, LongString},
};
use std::time::Duration;
use tokio::time::{Instant, timeout_at};

/// How long one batch may wait for the broker before it gives up; what it took and did not
/// get confirmed goes back to the unrouted queue.
const BATCH_DEADLINE: Duration = Duration::from_secs(30);

/// Moves up to `max` messages from the unrouted queue of `data_queue` to the exchange
/// `address`, oldest first, marked as replayed by `replayed_by`. `channel` must be in confirm
/// mode. Says how many moved (confirmed and acknowledged; fewer than `max` when the queue ran
/// empty) and what stopped it early.
pub async fn replay_batch(
    channel: &Channel,
    names: &Names,
    data_queue: &str,
    address: &str,
    max: u64,
    replayed_by: &str,
) -> UnroutedBatch {
    let queue = names.unrouted(data_queue);
    let deadline = Instant::now() + BATCH_DEADLINE;
    let replayed_at = chrono::Utc::now().to_rfc3339();
    let mut sent = Vec::new();
    let mut failure = None;
    for _ in 0..max {
        let got = match timeout_at(
            deadline,
            channel.basic_get(queue.as_str().into(), BasicGetOptions { no_ack: false }),
        )
        .await
        {
            Ok(Ok(Some(m))) => m,
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                failure = Some(ReplayError::CannotTake {
                    queue: queue.clone(),
                    detail: e.to_string(),
                });
                break;
            }
            Err(_) => {
                failure = Some(ReplayError::NothingInTime(queue.clone()));
                break;
            }
        };
        let delivery = got.delivery;
        let properties = replayed(delivery.properties.clone(), replayed_by, &replayed_at);
        let published = timeout_at(
            deadline,
            channel.basic_publish(
                address.into(),
                delivery.routing_key.as_str().into(),
                BasicPublishOptions::default(),
                &delivery.data,
                properties,
            ),
        )
        .await;
        let error = match published {
            Ok(Ok(confirm)) => {
                sent.push((delivery.delivery_tag, confirm));
                continue;
            }
            Ok(Err(e)) => ReplayError::PublishToExchange {
                exchange: address.to_owned(),
                detail: e.to_string(),
            },
            Err(_) => ReplayError::Blocked(BATCH_DEADLINE.as_secs()),
        };
        // Not sent: it goes back to the unrouted queue now, not when the channel closes.
        let _ = channel
            .basic_nack(
                delivery.delivery_tag,
                BasicNackOptions {
                    requeue: true,
                    ..BasicNackOptions::default()
                },
            )
            .await;
        failure = Some(error);
        break;
    }
    let mut moved = 0;
    for (tag, confirm) in sent {
        let confirmed = match timeout_at(deadline, confirm).await {
            Ok(Ok(c)) if c.is_ack() => true,
            Ok(Ok(_)) => {
                failure.get_or_insert_with(|| ReplayError::RefusedByExchange(address.to_owned()));
                false
            }
            Ok(Err(e)) => {
                failure.get_or_insert_with(|| ReplayError::Lost(e.to_string()));
                false
            }
            Err(_) => {
                failure
                    .get_or_insert_with(|| ReplayError::BatchUnconfirmed(BATCH_DEADLINE.as_secs()));
                false
            }
        };
        // The copy is safe: let the original go. Otherwise it goes back where it was.
        let settled = if confirmed {
            channel
                .basic_ack(tag, BasicAckOptions::default())
                .await
                .map(|()| moved += 1)
        } else {
            channel
                .basic_nack(
                    tag,
                    BasicNackOptions {
                        requeue: true,
                        ..BasicNackOptions::default()
                    },
                )
                .await
        };
        if let Err(e) = settled {
            // The channel is gone: the broker puts back every message it did not see
            // acknowledged, so a confirmed copy may now exist twice (at least once).
            failure.get_or_insert_with(|| ReplayError::CannotSettle {
                queue: queue.clone(),
                detail: e.to_string(),
            });
        }
    }
    UnroutedBatch {
        moved,
        error: failure,
    }
}

/// The message's properties with who replayed it and when.
fn replayed(properties: BasicProperties, by: &str, at: &str) -> BasicProperties {
    let mut headers: FieldTable = properties.headers().clone().unwrap_or_default();
    headers.insert(
        wire::REPLAYED_BY_HEADER.into(),
        AMQPValue::LongString(LongString::from(by)),
    );
    headers.insert(
        wire::REPLAYED_AT_HEADER.into(),
        AMQPValue::LongString(LongString::from(at)),
    );
    properties.with_headers(headers)
}
