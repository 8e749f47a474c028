//! Queues the catalog no longer wants leave without dropping what they hold: a draining
//! queue (delay or wait) is deleted once its messages have expired into where they go; a
//! retiring queue (a deleted launch setting's subscription, a deleted data queue's queues) is
//! held while retries may still come back to it, then what it holds moves to the dead-letter
//! queue with the reason, then it is deleted. A queue is deleted only when it holds nothing and
//! nothing consumes it, so a message that arrives late or a node still attached keeps it for
//! the next pass.

use super::apply::{Steps, is_not_found};
use am_domain::{
    topology::{Departure, QueueRole},
    wire,
};
use am_services::topology::{LeavingSince, Outcome};
use chrono::{DateTime, Utc};
use lapin::{
    BasicProperties,
    options::{
        BasicAckOptions, BasicGetOptions, BasicPublishOptions, QueueDeclareOptions,
        QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable, LongString},
};

/// Messages moved per queue and pass: a large backlog moves over several passes without
/// holding the reconciler up.
const MOVE_PER_PASS: usize = 5_000;

/// Handles every leaving queue once; the ones that are gone go into `outcome.gone`.
pub(super) async fn leave(
    steps: &mut Steps<'_>,
    leaving: impl Iterator<Item = &LeavingSince>,
    now: DateTime<Utc>,
    outcome: &mut Outcome,
) {
    for l in leaving {
        let name = &l.leaving.queue.name;
        match step(steps, l, now).await {
            Ok(true) => {
                tracing::info!(queue = %name, "queue no longer wanted is gone");
                outcome.gone.push(name.clone());
            }
            Ok(false) => {}
            Err(e) => outcome.errors.push(format!("leaving queue `{name}`: {e}")),
        }
    }
}

/// Ready messages and consumers of a queue; `None` when it does not exist.
async fn counts(steps: &mut Steps<'_>, name: &str) -> Result<Option<(u32, u32)>, lapin::Error> {
    let declared = steps
        .channel()
        .await?
        .queue_declare(
            name.into(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await;
    match declared {
        Ok(q) => Ok(Some((q.message_count(), q.consumer_count()))),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// One step of a leaving queue; true once it is gone.
async fn step(
    steps: &mut Steps<'_>,
    l: &LeavingSince,
    now: DateTime<Utc>,
) -> Result<bool, lapin::Error> {
    let queue = &l.leaving.queue;
    let Some((mut ready, mut consumers)) = counts(steps, &queue.name).await? else {
        return Ok(true);
    };
    if ready > 0 {
        match &l.leaving.departure {
            // Its messages are on their way out by themselves.
            Departure::Drain => return Ok(false),
            Departure::Retire { .. } if !l.hold_over(now) => return Ok(false),
            Departure::Retire { reason } => {
                let moved = move_to_dead_letters(steps, l, reason).await?;
                tracing::info!(queue = %queue.name, moved, %reason, "moved the messages of a removed queue to the dead-letter queue");
                match counts(steps, &queue.name).await? {
                    Some(c) => (ready, consumers) = c,
                    None => return Ok(true),
                }
            }
        }
    }
    // Quorum queues take neither `if-empty` nor `if-unused` (the broker closes the
    // connection), so both are checked just before: nothing is bound to the queue any more,
    // and a node still attached keeps it for the next pass.
    if ready > 0 || consumers > 0 {
        return Ok(false);
    }
    match steps
        .channel()
        .await?
        .queue_delete(queue.name.as_str().into(), QueueDeleteOptions::default())
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if is_not_found(&e) => Ok(true),
        Err(e) => Err(e),
    }
}

fn text(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s))
}

/// Moves up to [`MOVE_PER_PASS`] messages to the dead-letter queue, each acknowledged only
/// after the broker confirmed its copy. Returns how many moved.
async fn move_to_dead_letters(
    steps: &mut Steps<'_>,
    l: &LeavingSince,
    reason: &str,
) -> Result<usize, lapin::Error> {
    let (launch_setting, data_queue) = match &l.leaving.queue.role {
        QueueRole::Subscription {
            launch_setting,
            data_queue,
            ..
        }
        | QueueRole::Delay {
            launch_setting,
            data_queue,
        } => (Some(launch_setting.as_str()), Some(data_queue.as_str())),
        QueueRole::Shared { data_queue, .. } | QueueRole::Unrouted { data_queue } => {
            (None, Some(data_queue.as_str()))
        }
        QueueRole::Wait | QueueRole::System => (None, None),
    };
    let dead_letters = steps.topology.names().dead_letter_queue();
    let conn_channel = steps.channel().await?.clone();
    conn_channel
        .confirm_select(lapin::options::ConfirmSelectOptions::default())
        .await?;
    let now = Utc::now().to_rfc3339();
    let mut moved = 0;
    while moved < MOVE_PER_PASS {
        let Some(m) = conn_channel
            .basic_get(
                l.leaving.queue.name.as_str().into(),
                BasicGetOptions::default(),
            )
            .await?
        else {
            break;
        };
        let delivery = m.delivery;
        let mut headers = delivery.properties.headers().clone().unwrap_or_default();
        let mut set = |k: &str, v: &str| {
            headers.insert(k.into(), text(v));
        };
        set(wire::REMOVED_REASON_HEADER, reason);
        set(wire::DL_ERROR_TYPE_HEADER, wire::QUEUE_REMOVED_ERROR);
        set(wire::DL_ERROR_MESSAGE_HEADER, reason);
        set(wire::DL_LAST_FAILURE_HEADER, &now);
        set(wire::DL_HOST_HEADER, wire::MANAGER_HOST);
        if let Some(ls) = launch_setting {
            set(wire::DL_LAUNCH_SETTING_HEADER, ls);
        }
        if let Some(dq) = data_queue {
            set(wire::DL_DATA_QUEUE_HEADER, dq);
        }
        let properties: BasicProperties = delivery
            .properties
            .clone()
            .with_headers(headers)
            .with_delivery_mode(2);
        let confirm = conn_channel
            .basic_publish(
                "".into(),
                dead_letters.as_str().into(),
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                &delivery.data,
                properties,
            )
            .await?
            .await?;
        if !confirm.is_ack() || confirm.take_message().is_some() {
            // The copy was not taken: leave the original where it is (closing the channel
            // returns it) and try again next pass.
            let _ = conn_channel
                .close(200, "dead-letter queue refused".into())
                .await;
            return Ok(moved);
        }
        delivery.acker.ack(BasicAckOptions::default()).await?;
        moved += 1;
    }
    Ok(moved)
}
