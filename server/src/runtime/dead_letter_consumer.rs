//! The dead-letter consumer: moves messages from the broker's dead-letter queue into the
//! database in batches, one transaction each, and acknowledges a batch only after it
//! committed. A batch delivered again (committed, but the acknowledgement was lost with the
//! connection) stores nothing twice: every row is keyed by the message's identity.

use super::batches::Batches;
use crate::{broker::Link, dead_letter_messages::incoming};
use am_services::{
    dead_letters::{self, IncomingDeadLetter},
    runtime::RuntimeConfig,
};
use lapin::{
    message::Delivery,
    options::{BasicAckOptions, BasicNackOptions},
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
    let batches = Batches {
        queue: &queue,
        tag: "agent-manager-dead-letters",
        size: BATCH,
        linger: LINGER,
        hearing: None,
    };
    batches
        .run(&link, &stop, |batch| {
            let (db, cfg, stop) = (&db, &cfg, &stop);
            async move { handle(db, cfg, &batch, stop).await }
        })
        .await;
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
