//! The dashboard's live feed: one snapshot producer shared by every open dashboard.
//!
//! A dashboard left open in ten browser tabs must not query the database ten times every two
//! seconds. So one task takes the snapshot every [`EVERY`] and publishes it, already serialized,
//! on a `tokio::sync::watch` channel; each open event stream only reads the latest value. The
//! task runs only while someone watches: the first subscriber starts it, and it ends after the
//! tick that finds no subscriber left. The failure chart's complete hours are kept for a minute
//! between snapshots (`am_services::dashboard::ChartCache`), the one expensive read. Both decisions are taken under one lock, so a subscriber
//! arriving just as the task decides to end is never left without a producer.

use am_services::{Principal, Services, dashboard};
use std::{
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How often the figures are refreshed while someone watches.
pub const EVERY: Duration = Duration::from_secs(2);

/// The latest snapshot as JSON; `None` until the producer's first one after it started.
pub type Latest = Option<Arc<str>>;

/// Cheap to clone; every clone shares the one producer.
#[derive(Clone)]
pub struct DashboardFeed {
    inner: Arc<Inner>,
}

struct Inner {
    services: Services,
    every: Duration,
    tx: watch::Sender<Latest>,
    /// Whether a producer task runs; changed only with the lock held.
    producing: Mutex<bool>,
    stop: CancellationToken,
    /// Snapshots taken since start-up (for tests and the log).
    taken: AtomicU64,
    /// The failure chart's complete hours, read once a minute rather than every snapshot.
    chart: dashboard::ChartCache,
}

impl DashboardFeed {
    /// A feed that stops producing, and ends its subscribers' streams, once `stop` is cancelled
    /// (so open dashboards do not hold a graceful shutdown up).
    pub fn new(services: Services, stop: CancellationToken) -> Self {
        Self::with_interval(services, stop, EVERY)
    }

    pub fn with_interval(services: Services, stop: CancellationToken, every: Duration) -> Self {
        let (tx, _) = watch::channel(None);
        Self {
            inner: Arc::new(Inner {
                services,
                every,
                tx,
                producing: Mutex::new(false),
                stop,
                taken: AtomicU64::new(0),
                chart: dashboard::ChartCache::default(),
            }),
        }
    }

    /// A receiver of the snapshots, starting the producer if none runs. The receiver holds the
    /// latest snapshot at once when another subscriber kept the producer running, else `None`
    /// until the first one is taken (a snapshot from an earlier session would be stale).
    pub fn subscribe(&self) -> watch::Receiver<Latest> {
        let mut producing = self
            .inner
            .producing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let rx = self.inner.tx.subscribe();
        if !*producing && !self.inner.stop.is_cancelled() {
            *producing = true;
            self.inner.tx.send_replace(None);
            tokio::spawn(produce(Arc::clone(&self.inner)));
        }
        rx
    }

    /// Resolves when the manager is stopping.
    pub async fn stopping(&self) {
        self.inner.stop.cancelled().await;
    }

    /// Snapshots taken since start-up.
    pub fn snapshots_taken(&self) -> u64 {
        self.inner.taken.load(Ordering::Relaxed)
    }

    /// Whether the producer task runs now.
    pub fn is_producing(&self) -> bool {
        *self
            .inner
            .producing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

async fn produce(inner: Arc<Inner>) {
    // The feed reads on behalf of its subscribers, whose role was checked when they subscribed.
    let reader = Principal::system("dashboard");
    tracing::debug!("dashboard feed started");
    loop {
        let s = &inner.services;
        let now = chrono::Utc::now();
        let taken =
            match dashboard::snapshot_cached(&s.db, &reader, &s.runtime, now, &inner.chart).await {
                Ok(d) => dashboard::with_broker(d, s).await,
                Err(e) => Err(e),
            };
        inner.taken.fetch_add(1, Ordering::Relaxed);
        match taken.map(|d| serde_json::to_string(&d)) {
            Ok(Ok(json)) => {
                inner.tx.send_replace(Some(Arc::from(json)));
            }
            // The open dashboards keep the previous figures; their time stamp shows the age.
            Ok(Err(e)) => tracing::error!(error = %e, "dashboard snapshot not serializable"),
            Err(e) => tracing::warn!(error = %e, "dashboard snapshot failed; retrying"),
        }
        tokio::select! {
            () = tokio::time::sleep(inner.every) => {}
            () = inner.tx.closed() => {}
            () = inner.stop.cancelled() => {}
        }
        let mut producing = inner
            .producing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if inner.tx.receiver_count() == 0 || inner.stop.is_cancelled() {
            *producing = false;
            tracing::debug!("dashboard feed stopped: nobody watches");
            return;
        }
    }
}
