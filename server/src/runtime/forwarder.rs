//! The dead-letter forwarder (policy `forward`): sends the copy each such dead letter owes to
//! the exchange its launch setting names, from the database where the dead letter was stored
//! with the copy marked as owed (`am_services::dead_letters::forward`). Each copy is published
//! mandatory with publisher confirms and recorded as sent only once confirmed; a copy the
//! broker cannot take (no such exchange, routed nowhere, an outage) keeps its error on the dead
//! letter and is tried again later.

use crate::{broker::Link, dead_letter_messages::forward_properties};
use am_services::{
    dead_letters::forward::{self, ForwardError},
    entity::dead_letters,
};
use chrono::Utc;
use lapin::{
    Channel, Connection,
    options::{BasicPublishOptions, ConfirmSelectOptions},
};
use sea_orm::DatabaseConnection;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// Copies per round.
const BATCH: u64 = 100;
/// How often owed copies are looked for when there were none.
const IDLE: Duration = Duration::from_secs(1);
/// How long one copy may wait for the broker's confirm.
const CONFIRM_WAIT: Duration = Duration::from_secs(30);

pub async fn run(db: DatabaseConnection, link: Link, stop: CancellationToken) {
    loop {
        let Some(conn) = link.connected(&stop).await else {
            return;
        };
        let mut channel = None;
        while conn.status().connected() {
            let span = tracing::debug_span!("forward dead letters");
            let sent = round(&db, &conn, &mut channel).instrument(span).await;
            let idle = match sent {
                Ok(n) => n == 0,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot forward dead letters; retrying");
                    true
                }
            };
            if stop.is_cancelled() {
                return;
            }
            if idle {
                tokio::select! {
                    () = tokio::time::sleep(IDLE) => {}
                    () = stop.cancelled() => return,
                }
            }
        }
    }
}

/// One claimed batch, tried and settled; how many rows it tried.
async fn round(
    db: &DatabaseConnection,
    conn: &Connection,
    channel: &mut Option<Channel>,
) -> anyhow::Result<usize> {
    let rows = forward::claim(db, Utc::now(), BATCH).await?;
    let mut tried = Vec::with_capacity(rows.len());
    for row in rows {
        let result = copy(conn, channel, &row).await;
        if let Err(e) = &result {
            tracing::info!(dead_letter = row.id, error = %e, "dead letter not forwarded; it is tried again later");
        }
        tried.push((row, result));
    }
    forward::settle(db, &tried, Utc::now()).await?;
    Ok(tried.len())
}

/// Publishes one copy and waits for its confirm. A missing exchange closes the channel (AMQP's
/// way); the next copy opens another.
async fn copy(
    conn: &Connection,
    channel: &mut Option<Channel>,
    row: &dead_letters::Model,
) -> Result<(), ForwardError> {
    let Some(exchange) = row.forward_to.as_deref() else {
        return Ok(());
    };
    let ch = match channel.as_ref().filter(|c| c.status().connected()) {
        Some(c) => c.clone(),
        None => {
            let c = conn
                .create_channel()
                .await
                .map_err(|e| ForwardError::NoChannel(e.to_string()))?;
            c.confirm_select(ConfirmSelectOptions::default())
                .await
                .map_err(|e| ForwardError::NoConfirms(e.to_string()))?;
            *channel = Some(c.clone());
            c
        }
    };
    // Bound by launch setting: the routing key is its id.
    let routing_key = row.launch_setting_id.as_deref().unwrap_or_default();
    let confirm = ch
        .basic_publish(
            exchange.into(),
            routing_key.into(),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            &row.body,
            forward_properties(row),
        )
        .await
        .map_err(|e| ForwardError::Publish {
            exchange: exchange.to_owned(),
            detail: e.to_string(),
        })?;
    match tokio::time::timeout(CONFIRM_WAIT, confirm).await {
        Err(_) => Err(ForwardError::Unconfirmed(CONFIRM_WAIT.as_secs())),
        Ok(Err(e)) if e.to_string().contains("NOT_FOUND") => {
            Err(ForwardError::NoExchange(exchange.to_owned()))
        }
        Ok(Err(e)) => Err(ForwardError::Lost(e.to_string())),
        Ok(Ok(c)) if !c.is_ack() => Err(ForwardError::Refused(exchange.to_owned())),
        // Mandatory and routed nowhere: acknowledged *and* returned.
        Ok(Ok(c)) => match c.take_message() {
            Some(_) => Err(ForwardError::Unrouted {
                exchange: exchange.to_owned(),
                routing_key: routing_key.to_owned(),
            }),
            None => Ok(()),
        },
    }
}
