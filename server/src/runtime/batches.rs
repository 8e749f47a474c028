//! Reading one of the manager's queues in batches: (re)subscribing whenever the broker
//! connection comes back, collecting up to `size` deliveries or whatever arrived within
//! `linger` of the first, and handing each batch to its handler, which stores it and then
//! acknowledges it. The prefetch is twice the batch, so the next batch is on its way while one
//! is stored.

use super::hearing::Hearing;
use crate::broker::Link;
use futures_util::StreamExt;
use lapin::{
    message::Delivery,
    options::{BasicConsumeOptions, BasicQosOptions},
    types::FieldTable,
};
use std::{future::Future, time::Duration};
use tokio_util::sync::CancellationToken;

/// A queue read in batches.
pub struct Batches<'a> {
    pub queue: &'a str,
    /// Consumer tag, naming the reader in the broker's management tools.
    pub tag: &'a str,
    pub size: usize,
    pub linger: Duration,
    /// Told while the queue is consumed, and when it stops.
    pub hearing: Option<&'a Hearing>,
}

impl Batches<'_> {
    fn heard(&self, consuming: bool) {
        match (self.hearing, consuming) {
            (Some(h), true) => h.on(),
            (Some(h), false) => h.off(),
            (None, _) => {}
        }
    }

    /// Runs until `stop` fires. `handle` gets each batch and returns `false` when it stopped
    /// before finishing (it gave the batch back to the broker).
    pub async fn run<F, Fut>(&self, link: &Link, stop: &CancellationToken, mut handle: F)
    where
        F: FnMut(Vec<Delivery>) -> Fut,
        Fut: Future<Output = bool>,
    {
        loop {
            let Some(conn) = link.connected(stop).await else {
                return;
            };
            let consumer = async {
                let channel = conn.create_channel().await?;
                channel
                    .basic_qos(
                        u16::try_from(self.size * 2).unwrap_or(u16::MAX),
                        BasicQosOptions::default(),
                    )
                    .await?;
                let consumer = channel
                    .basic_consume(
                        self.queue.into(),
                        self.tag.into(),
                        BasicConsumeOptions::default(),
                        FieldTable::default(),
                    )
                    .await?;
                Ok::<_, lapin::Error>((channel, consumer))
            };
            let (channel, mut consumer) = match consumer.await {
                Ok(c) => c,
                Err(e) => {
                    self.heard(false);
                    tracing::warn!(queue = self.queue, error = %e, "cannot consume the queue");
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                        () = stop.cancelled() => return,
                    }
                }
            };
            tracing::info!(queue = self.queue, "consuming");
            self.heard(true);
            loop {
                let first = tokio::select! {
                    d = consumer.next() => d,
                    () = stop.cancelled() => {
                        let _ = channel.close(200, "manager stopping".into()).await;
                        return;
                    }
                };
                let Some(Ok(first)) = first else {
                    self.heard(false);
                    tracing::warn!(queue = self.queue, "the consumer ended; resubscribing");
                    break;
                };
                let mut batch = vec![first];
                let linger = tokio::time::sleep(self.linger);
                tokio::pin!(linger);
                while batch.len() < self.size {
                    tokio::select! {
                        d = consumer.next() => match d {
                            Some(Ok(d)) => batch.push(d),
                            _ => break,
                        },
                        () = &mut linger => break,
                    }
                }
                if !handle(batch).await {
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
}
