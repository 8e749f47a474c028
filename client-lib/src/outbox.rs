//! Reports waiting for the broker: bounded, published with confirms, kept until confirmed.
//!
//! The node never blocks on the broker to report: reports are queued here and one task
//! publishes them with publisher confirms. A report the broker did not confirm goes back to the
//! front and is sent again after the reconnect, so reports survive a broker restart. When the
//! buffer is full the oldest report is dropped and counted (heartbeats carry the count).

use crate::broker::Link;
use am_domain::wire::{self, ToManager};
use lapin::{
    BasicProperties,
    options::{BasicPublishOptions, ConfirmSelectOptions},
};
use std::{
    collections::VecDeque,
    sync::{
        Mutex,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Reports published per round of confirms.
const BATCH: usize = 64;

#[derive(Debug)]
pub(crate) struct Outbox {
    queue: Mutex<VecDeque<Vec<u8>>>,
    capacity: usize,
    notify: Notify,
    dropped: AtomicU64,
    in_flight: AtomicUsize,
}

impl Outbox {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
            notify: Notify::new(),
            dropped: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
        }
    }

    pub(crate) fn push(&self, report: &ToManager) {
        let bytes = wire::encode(report);
        {
            let mut q = self.lock();
            if q.len() >= self.capacity {
                q.pop_front();
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            q.push_back(bytes);
        }
        self.notify.notify_one();
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Reports not yet confirmed by the broker.
    pub(crate) fn pending(&self) -> usize {
        self.lock().len() + self.in_flight.load(Ordering::Acquire)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Vec<u8>>> {
        // A panic while holding this lock cannot leave the deque inconsistent.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take_batch(&self) -> Vec<Vec<u8>> {
        let mut q = self.lock();
        let n = q.len().min(BATCH);
        let batch: Vec<_> = q.drain(..n).collect();
        self.in_flight.store(batch.len(), Ordering::Release);
        batch
    }

    /// Puts unconfirmed reports back in front, oldest first, dropping the oldest on overflow.
    fn give_back(&self, batch: Vec<Vec<u8>>) {
        let mut q = self.lock();
        for bytes in batch.into_iter().rev() {
            q.push_front(bytes);
        }
        while q.len() > self.capacity {
            q.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        self.in_flight.store(0, Ordering::Release);
    }

    /// Waits until every queued report is confirmed, or the timeout.
    pub(crate) async fn flush(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.pending() > 0 {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        true
    }

    /// Publishes reports to `queue` until `stop`.
    pub(crate) async fn run(&self, link: Link, queue: String, stop: CancellationToken) {
        loop {
            let Some(conn) = link.connected(&stop).await else {
                return;
            };
            let channel = match conn.create_channel().await {
                Ok(ch) => ch,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot open the reports channel");
                    pause(&stop).await;
                    continue;
                }
            };
            if let Err(e) = channel
                .confirm_select(ConfirmSelectOptions::default())
                .await
            {
                tracing::warn!(error = %e, "cannot enable publisher confirms");
                pause(&stop).await;
                continue;
            }
            loop {
                let notified = self.notify.notified();
                let batch = self.take_batch();
                if batch.is_empty() {
                    self.in_flight.store(0, Ordering::Release);
                    tokio::select! {
                        () = notified => continue,
                        () = stop.cancelled() => return,
                    }
                }
                match publish_batch(&channel, &queue, &batch).await {
                    Ok(()) => self.in_flight.store(0, Ordering::Release),
                    Err(reason) => {
                        tracing::warn!(%reason, reports = batch.len(), "reports not confirmed; will resend");
                        self.give_back(batch);
                        break;
                    }
                }
            }
            let _ = channel.close(200, "reconnecting".into()).await;
            pause(&stop).await;
        }
    }
}

async fn pause(stop: &CancellationToken) {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(200)) => {}
        () = stop.cancelled() => {}
    }
}

async fn publish_batch(
    channel: &lapin::Channel,
    queue: &str,
    batch: &[Vec<u8>],
) -> Result<(), String> {
    let mut confirms = Vec::with_capacity(batch.len());
    for bytes in batch {
        let confirm = channel
            .basic_publish(
                "".into(),
                queue.into(),
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                bytes,
                BasicProperties::default()
                    .with_delivery_mode(2)
                    .with_content_type("application/json".into()),
            )
            .await
            .map_err(|e| e.to_string())?;
        confirms.push(confirm);
    }
    for confirm in confirms {
        let confirmation = confirm.await.map_err(|e| e.to_string())?;
        if !confirmation.is_ack() {
            return Err("the broker refused a report".into());
        }
        if confirmation.take_message().is_some() {
            return Err("the reports queue does not exist".into());
        }
    }
    Ok(())
}
