//! Reports waiting for the broker: bounded, published with confirms, kept until confirmed.
//!
//! The node never blocks on the broker to report: reports are queued here and one task
//! publishes them with publisher confirms. A report the broker did not confirm goes back to the
//! front and is sent again after the reconnect, so reports survive a broker restart. When the
//! buffer is full the oldest report is dropped and counted (heartbeats carry the count).

use crate::{
    broker::Link,
    confirmed::{SendError, landed},
    telemetry::TraceHeaders,
};
use am_domain::wire::{self, ToManager};
use lapin::{
    BasicProperties,
    options::{BasicPublishOptions, ConfirmSelectOptions},
    types::FieldTable,
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

/// A report and the trace context of the span that made it, sent in its headers so the
/// manager's handling links to the node's run.
#[derive(Debug)]
struct Queued {
    bytes: Vec<u8>,
    trace: TraceHeaders,
}

#[derive(Debug)]
pub(crate) struct Outbox {
    queue: Mutex<VecDeque<Queued>>,
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
        let bytes = wire::encode_report(report);
        // A report about a run carries the run's (or its message's) context; the node's own
        // heartbeats and publications belong to no trace.
        let trace = match report {
            ToManager::Heartbeat(_) | ToManager::Publication(_) => TraceHeaders::default(),
            _ => TraceHeaders::current(),
        };
        {
            let mut q = self.lock();
            if q.len() >= self.capacity {
                q.pop_front();
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            q.push_back(Queued { bytes, trace });
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

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Queued>> {
        // A panic while holding this lock cannot leave the deque inconsistent.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take_batch(&self) -> Vec<Queued> {
        let mut q = self.lock();
        let n = q.len().min(BATCH);
        let batch: Vec<_> = q.drain(..n).collect();
        self.in_flight.store(batch.len(), Ordering::Release);
        batch
    }

    /// Puts unconfirmed reports back in front, oldest first, dropping the oldest on overflow.
    fn give_back(&self, batch: Vec<Queued>) {
        let mut q = self.lock();
        for report in batch.into_iter().rev() {
            q.push_front(report);
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
    batch: &[Queued],
) -> Result<(), SendError> {
    let mut confirms = Vec::with_capacity(batch.len());
    for report in batch {
        let mut headers = FieldTable::default();
        report.trace.add_to(&mut headers);
        let confirm = channel
            .basic_publish(
                "".into(),
                queue.into(),
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                &report.bytes,
                BasicProperties::default()
                    .with_delivery_mode(2)
                    .with_content_type("application/json".into())
                    .with_headers(headers),
            )
            .await?;
        confirms.push(confirm);
    }
    for confirm in confirms {
        landed(confirm.await?, queue)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broker;
    use am_domain::wire::ToManager;
    use futures_util::StreamExt;
    use lapin::{
        Connection, ConnectionProperties,
        options::{BasicConsumeOptions, QueueDeclareOptions, QueueDeleteOptions},
        types::FieldTable,
    };
    use std::sync::Arc;

    fn url() -> String {
        std::env::var("AM_TEST_AMQP_URL")
            .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned())
    }

    fn report(i: u32) -> ToManager {
        // Any report will do; a heartbeat-sized one keeps the test readable.
        ToManager::Heartbeat(am_domain::wire::Heartbeat {
            application: "app".into(),
            host: format!("h{i}"),
            capacity: i,
            running: Vec::new(),
            load: None,
            dropped_reports: 0,
            quarantined: 0,
            at: chrono::Utc::now(),
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reports_wait_for_the_broker_and_are_resent_until_confirmed() {
        let queue = format!("t-outbox-{}", std::process::id());
        let outbox = Arc::new(Outbox::new(3));
        // No broker yet: the buffer keeps the newest three and counts the rest.
        for i in 0..5 {
            outbox.push(&report(i));
        }
        assert_eq!((outbox.pending(), outbox.dropped()), (3, 2));

        let (tx, link) = broker::link();
        let stop = CancellationToken::new();
        let runner = {
            let (outbox, link, queue, stop) = (
                Arc::clone(&outbox),
                link.clone(),
                queue.clone(),
                stop.clone(),
            );
            tokio::spawn(async move { outbox.run(link, queue, stop).await })
        };
        let conn = Arc::new(
            Connection::connect(&url(), ConnectionProperties::default())
                .await
                .expect("broker"),
        );
        // The queue does not exist yet: the broker returns the reports, which stay pending.
        tx.send_replace(Some(Arc::clone(&conn)));
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(outbox.pending(), 3, "unconfirmed reports are kept");

        let ch = conn.create_channel().await.expect("channel");
        let mut args = FieldTable::default();
        args.insert(
            "x-expires".into(),
            lapin::types::AMQPValue::LongLongInt(30_000),
        );
        ch.queue_declare(queue.as_str().into(), QueueDeclareOptions::default(), args)
            .await
            .expect("declare");
        assert!(
            outbox.flush(Duration::from_secs(5)).await,
            "sent once the queue exists"
        );
        let mut consumer = ch
            .basic_consume(
                queue.as_str().into(),
                "".into(),
                BasicConsumeOptions {
                    no_ack: true,
                    ..BasicConsumeOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .expect("consume");
        let mut hosts = Vec::new();
        while hosts.len() < 3 {
            let d = tokio::time::timeout(Duration::from_secs(5), consumer.next())
                .await
                .expect("a report")
                .expect("stream")
                .expect("delivery");
            match wire::decode::<ToManager>(&d.data).expect("valid") {
                ToManager::Heartbeat(hb) => hosts.push(hb.host),
                other => panic!("{other:?}"),
            }
        }
        // Oldest first; a resend may duplicate, never lose or reorder the first copies.
        assert_eq!(&hosts[..3], ["h2", "h3", "h4"]);
        stop.cancel();
        runner.await.expect("runner ends");
        let _ = ch
            .queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
            .await;
        let _ = conn.close(200, "done".into()).await;
    }
}
