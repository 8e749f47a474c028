//! Samples what the broker holds, read-only (passive declares): ready messages and consumers
//! of every queue nodes consume and of every unrouted queue, and which applied exchanges and
//! queues the broker no longer has (and dead-letter forward targets it does not have), and
//! from the database how many messages each launch setting's running activations processed
//! (for its rate), into the replica's [`DepthsHandle`] for the API, the
//! Broker page and `/metrics`.

use super::apply::is_not_found;
use am_domain::{
    read::depths::{self as sample, Depths, MissingObject},
    topology::ObjectKind,
};
use am_services::topology::{self as rules, DepthsHandle};
use chrono::Utc;
use lapin::{
    Channel, Connection, ExchangeKind,
    options::{ExchangeDeclareOptions, QueueDeclareOptions},
    types::FieldTable,
};
use sea_orm::DatabaseConnection;
use std::collections::HashSet;

/// A channel that is opened again after a passive declare of a missing object closed it.
struct Probe<'a> {
    conn: &'a Connection,
    channel: Option<Channel>,
}

impl Probe<'_> {
    async fn channel(&mut self) -> Result<Channel, lapin::Error> {
        if let Some(c) = self.channel.as_ref().filter(|c| c.status().connected()) {
            return Ok(c.clone());
        }
        let c = self.conn.create_channel().await?;
        self.channel = Some(c.clone());
        Ok(c)
    }

    /// Ready messages and consumers of `queue`; `None` when the broker has no such queue.
    async fn queue(&mut self, queue: &str) -> Result<Option<(u32, u32)>, lapin::Error> {
        let declared = self
            .channel()
            .await?
            .queue_declare(
                queue.into(),
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await;
        match declared {
            Ok(d) => Ok(Some((d.message_count(), d.consumer_count()))),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether the broker has `exchange` (a passive declare ignores the kind).
    async fn exchange(&mut self, exchange: &str) -> Result<bool, lapin::Error> {
        let declared = self
            .channel()
            .await?
            .exchange_declare(
                exchange.into(),
                ExchangeKind::Headers,
                ExchangeDeclareOptions {
                    passive: true,
                    ..ExchangeDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await;
        match declared {
            Ok(()) => Ok(true),
            Err(e) if is_not_found(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn close(self) {
        if let Some(c) = self.channel.filter(|c| c.status().connected()) {
            let _ = c.close(200, "sampled".into()).await;
        }
    }
}

/// One sample of every queue and exchange the reconciler applied.
pub(super) async fn sample(
    db: &DatabaseConnection,
    conn: &Connection,
    into: &DepthsHandle,
) -> anyhow::Result<()> {
    let started = Utc::now();
    let (applied, _) = rules::applied(db).await?;
    let mut queues = sample::sampled_queues(&applied.objects);
    let mut probe = Probe {
        conn,
        channel: None,
    };
    let mut missing = Vec::new();
    let mut seen = HashSet::new();
    for q in &mut queues {
        seen.insert(q.queue.clone());
        match probe.queue(&q.queue).await? {
            Some((ready, consumers)) => (q.ready, q.consumers) = (ready, consumers),
            // Shown as empty, and as missing.
            None => missing.push(MissingObject {
                object: ObjectKind::Queue,
                name: q.queue.clone(),
                forwarded_by: None,
            }),
        }
    }
    for name in applied.objects.queues.keys() {
        if !seen.contains(name) && probe.queue(name).await?.is_none() {
            missing.push(MissingObject {
                object: ObjectKind::Queue,
                name: name.clone(),
                forwarded_by: None,
            });
        }
    }
    for name in applied.objects.exchanges.keys() {
        if !probe.exchange(name).await? {
            missing.push(MissingObject {
                object: ObjectKind::Exchange,
                name: name.clone(),
                forwarded_by: None,
            });
        }
    }
    for (exchange, launch_setting) in rules::forward_exchanges(db).await? {
        if !probe.exchange(&exchange).await? {
            missing.push(MissingObject {
                object: ObjectKind::Exchange,
                name: exchange,
                forwarded_by: Some(launch_setting),
            });
        }
    }
    probe.close().await;
    let processed = rules::processed_by_launch_setting(db).await?;
    let mut sample = Depths {
        sampled_at: Some(started),
        queues,
        missing,
        processed,
        processed_per_minute: Default::default(),
        rate_window_seconds: None,
    };
    // The chart of the last hour keeps what the sample found; a database that refuses it costs
    // the chart a point, not the sample.
    if let Err(e) = am_services::throughput::record_backlogs(db, &sample, started).await {
        tracing::warn!(error = %e, "the backlog of this sample was not recorded for the charts");
    }
    if let Ok(mut d) = into.write() {
        if let Some(before) = d.sampled_at {
            sample.processed_per_minute =
                sample::rates(&d.processed, &sample.processed, started - before);
            sample.rate_window_seconds = u64::try_from((started - before).num_seconds()).ok();
        }
        *d = sample;
    }
    Ok(())
}
