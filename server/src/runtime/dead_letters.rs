//! The dead-letter consumer: moves messages from the broker's dead-letter queue into the
//! database in batches, one transaction each, and acknowledges a batch only after it
//! committed. A batch delivered again (committed, but the acknowledgement was lost with the
//! connection) stores nothing twice: every row is keyed by the message's identity.

use crate::{broker::Link, dead_letters::incoming};
use am_services::{
    dead_letters::{self, IncomingDeadLetter},
    runtime::RuntimeConfig,
};
use futures_util::StreamExt;
use lapin::{
    message::Delivery,
    options::{BasicAckOptions, BasicConsumeOptions, BasicNackOptions, BasicQosOptions},
    types::FieldTable,
};
use sea_orm::DatabaseConnection;
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// Dead letters per transaction (bodies can be large), and how long a batch may wait to fill.
const BATCH: usize = 500;
const LINGER: Duration = Duration::from_millis(20);
/// Longest wait between two attempts to store a batch while the database is down.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

pub async fn run(
    db: DatabaseConnection,
    cfg: Arc<RuntimeConfig>,
    link: Link,
    stop: CancellationToken,
) {
    let queue = cfg.names.dead_letter_queue();
    loop {
        let Some(conn) = link.connected(&stop).await else {
            return;
        };
        let consumer = async {
            let channel = conn.create_channel().await?;
            channel
                .basic_qos(
                    u16::try_from(BATCH * 2).unwrap_or(u16::MAX),
                    BasicQosOptions::default(),
                )
                .await?;
            let consumer = channel
                .basic_consume(
                    queue.as_str().into(),
                    "agent-manager-dead-letters".into(),
                    BasicConsumeOptions::default(),
                    FieldTable::default(),
                )
                .await?;
            Ok::<_, lapin::Error>((channel, consumer))
        };
        let (channel, mut consumer) = match consumer.await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "cannot consume the dead-letter queue");
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                    () = stop.cancelled() => return,
                }
            }
        };
        tracing::info!(%queue, "moving dead letters into the database");
        loop {
            let first = tokio::select! {
                d = consumer.next() => d,
                () = stop.cancelled() => {
                    let _ = channel.close(200, "manager stopping".into()).await;
                    return;
                }
            };
            let Some(Ok(first)) = first else {
                tracing::warn!("the dead-letter consumer ended; resubscribing");
                break;
            };
            let mut batch = vec![first];
            let linger = tokio::time::sleep(LINGER);
            tokio::pin!(linger);
            while batch.len() < BATCH {
                tokio::select! {
                    d = consumer.next() => match d {
                        Some(Ok(d)) => batch.push(d),
                        _ => break,
                    },
                    () = &mut linger => break,
                }
            }
            if !handle(&db, &cfg, &batch, &stop).await {
                let _ = channel.close(200, "manager stopping".into()).await;
                return;
            }
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
            () = stop.cancelled() => return,
        }
    }
}

/// Stores one batch until it commits, then acknowledges it. `false` when stopping.
#[tracing::instrument(skip_all, fields(dead_letters = batch.len()))]
async fn handle(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    batch: &[Delivery],
    stop: &CancellationToken,
) -> bool {
    let messages: Vec<IncomingDeadLetter> = batch.iter().map(incoming).collect();
    let mut backoff = Duration::from_millis(200);
    let mut failures = 0;
    loop {
        match dead_letters::store(db, &cfg.names, &messages, chrono::Utc::now()).await {
            Ok(o) => {
                if o.duplicates > 0 {
                    tracing::info!(
                        stored = o.stored,
                        duplicates = o.duplicates,
                        "dead letters delivered again were already stored"
                    );
                } else {
                    tracing::debug!(stored = o.stored, "dead letters stored");
                }
                break;
            }
            Err(e) if failures >= 2 && messages.len() > 1 && db.ping().await.is_ok() => {
                // The database is up, yet the batch keeps failing: one message in it is the
                // cause. Store them one by one so only that one is left out (and logged).
                tracing::warn!(error = %e, "a dead-letter batch keeps failing; storing its messages one by one");
                one_by_one(db, cfg, &messages).await;
                break;
            }
            Err(e) => {
                // Parsing never fails (a bad header leaves its column empty), so this is the
                // database: keep the batch unacknowledged and try again.
                failures += 1;
                tracing::warn!(error = %e, retry_in = ?backoff, "cannot store dead letters; retrying");
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = stop.cancelled() => {
                        // Not acknowledged: the broker gives them to the next consumer.
                        if let Some(last) = batch.last() {
                            let _ = last.nack(BasicNackOptions { multiple: true, requeue: true }).await;
                        }
                        return false;
                    }
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
    if let Some(last) = batch.last()
        && let Err(e) = last.ack(BasicAckOptions { multiple: true }).await
    {
        // Stored but not acknowledged: they come again and are recognised as stored.
        tracing::warn!(error = %e, "dead letters stored but not acknowledged");
    }
    true
}

/// Stores messages one at a time; one that still cannot be stored is logged with what
/// identifies it and left out, so that it does not hold up every dead letter behind it.
async fn one_by_one(db: &DatabaseConnection, cfg: &RuntimeConfig, messages: &[IncomingDeadLetter]) {
    for m in messages {
        if let Err(e) =
            dead_letters::store(db, &cfg.names, std::slice::from_ref(m), chrono::Utc::now()).await
        {
            tracing::error!(
                error = %e,
                message_id = m.message_id.as_deref(),
                headers = %serde_json::Value::Object(m.headers.clone()),
                bytes = m.body.len(),
                "a dead letter cannot be stored; dropped"
            );
        }
    }
}
