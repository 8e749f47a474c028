//! The outbox relay: publishes broker commands written by runtime transactions, with publisher
//! confirms, and marks them sent. Rows are claimed first, so several replicas relay without
//! sending a row twice; a claim that outlives its replica expires and another one takes over.
//! A broker outage only delays: unsent rows stay in the table.

use crate::broker::Link;
use agent_client::telemetry::TraceHeaders;
use am_services::runtime::{Metrics, RuntimeConfig, outbox};
use chrono::Utc;
use lapin::types::FieldTable;
use lapin::{
    BasicProperties,
    options::{BasicPublishOptions, ConfirmSelectOptions},
};
use sea_orm::DatabaseConnection;
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Rows per round.
const BATCH: u64 = 1000;
const IDLE: Duration = Duration::from_millis(100);

pub async fn run(
    db: DatabaseConnection,
    cfg: Arc<RuntimeConfig>,
    link: Link,
    stop: CancellationToken,
) {
    let me = format!("relay-{}", Uuid::new_v4().simple());
    loop {
        let Some(conn) = link.connected(&stop).await else {
            return;
        };
        let channel = match conn.create_channel().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "relay cannot open a channel");
                if pause(&stop, Duration::from_millis(500)).await {
                    return;
                }
                continue;
            }
        };
        if let Err(e) = channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
        {
            tracing::warn!(error = %e, "relay cannot enable publisher confirms");
            continue;
        }
        loop {
            match round(&db, &cfg, &channel, &me).await {
                Ok(0) => {
                    if pause(&stop, IDLE).await {
                        return;
                    }
                }
                Ok(_) => {
                    if stop.is_cancelled() {
                        return;
                    }
                }
                Err(RoundError::Broker(e)) => {
                    tracing::warn!(error = %e, "relay lost the broker; unsent commands wait in the outbox");
                    break;
                }
                Err(RoundError::Db(e)) => {
                    tracing::warn!(error = %e, "relay cannot read the outbox");
                    if pause(&stop, Duration::from_secs(1)).await {
                        return;
                    }
                }
            }
        }
        if pause(&stop, Duration::from_millis(200)).await {
            return;
        }
    }
}

/// `true` when stopping.
async fn pause(stop: &CancellationToken, d: Duration) -> bool {
    tokio::select! {
        () = tokio::time::sleep(d) => false,
        () = stop.cancelled() => true,
    }
}

#[derive(Debug, thiserror::Error)]
enum RoundError {
    #[error("{0}")]
    Broker(String),
    #[error("{0}")]
    Db(#[from] am_services::ServiceError),
}

/// Claims, publishes and marks one batch; returns how many rows it published.
#[tracing::instrument(skip_all)]
async fn round(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    channel: &lapin::Channel,
    me: &str,
) -> Result<usize, RoundError> {
    let rows = outbox::claim(db, me, Utc::now(), BATCH).await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let mut pending = Vec::with_capacity(rows.len());
    let mut broken = None;
    for row in &rows {
        let published = channel
            .basic_publish(
                row.exchange.as_str().into(),
                row.routing_key.as_str().into(),
                BasicPublishOptions::default(),
                &row.payload,
                BasicProperties::default()
                    .with_delivery_mode(2)
                    .with_content_type("application/json".into())
                    .with_message_id(row.message_id.as_str().into())
                    .with_headers(traced(row)),
            )
            .await;
        match published {
            Ok(confirm) => pending.push((row.id, confirm)),
            Err(e) => {
                broken = Some(e.to_string());
                break;
            }
        }
    }
    let mut sent = Vec::with_capacity(pending.len());
    for (id, confirm) in pending {
        match confirm.await {
            Ok(c) if c.is_ack() => sent.push(id),
            Ok(_) => {}
            Err(e) => {
                broken.get_or_insert(e.to_string());
            }
        }
    }
    let done = Utc::now();
    outbox::mark_sent(db, &sent, done).await?;
    Metrics::add(&cfg.metrics.outbox_published, sent.len() as u64);
    // What the broker refused or what the connection lost goes back, a little later.
    let unsent: Vec<i64> = rows
        .iter()
        .map(|r| r.id)
        .filter(|id| !sent.contains(id))
        .collect();
    if !unsent.is_empty() {
        let reason = broken
            .clone()
            .unwrap_or_else(|| "the broker did not confirm the publication".to_owned());
        Metrics::add(&cfg.metrics.outbox_failures, unsent.len() as u64);
        outbox::release(db, &unsent, &reason, done).await?;
    }
    match broken {
        Some(e) => Err(RoundError::Broker(e)),
        None => Ok(sent.len()),
    }
}

/// The headers of a command: the trace context of a `publish` span, a child of the span that
/// wrote the command (stored with its row), so the node's run continues that trace whichever
/// replica publishes it.
fn traced(row: &am_services::entity::outbox::Model) -> FieldTable {
    let mut headers = FieldTable::default();
    let Some(written) = row.headers.as_ref().and_then(|h| h.as_object()) else {
        return headers;
    };
    let parent = TraceHeaders::from_pairs(
        written
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?.to_owned()))),
    );
    let span = tracing::info_span!("publish", message_id = %row.message_id, exchange = %row.exchange,
        routing_key = %row.routing_key);
    parent.parent_of(&span);
    TraceHeaders::of(&span).add_to(&mut headers);
    headers
}
