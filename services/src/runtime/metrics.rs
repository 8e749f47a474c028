//! Counters of the runtime, for `/metrics` and the dashboard. Per manager process.

use am_domain::notify::Channel;
use std::{
    collections::VecDeque,
    sync::{
        Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// Monotonic counters (and a few gauges) of one manager process.
        #[derive(Debug, Default)]
        pub struct Metrics {
            $($(#[$doc])* pub $name: AtomicU64,)*
            /// Reports applied per second recently (the report consumer records each batch).
            pub report_rate: RateWindow,
            /// Notification tries per channel kind and outcome.
            pub deliveries: ChannelCounts,
        }

        impl Metrics {
            /// Every counter with its name, for exposition.
            pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name.load(Ordering::Relaxed)),)*]
            }

            /// Adds the counts of `other`, which counted work that has since been committed.
            pub fn absorb(&self, other: &Metrics) {
                $(self.$name.fetch_add(other.$name.load(Ordering::Relaxed), Ordering::Relaxed);)*
            }
        }
    };
}

counters! {
    /// Schedule fires recorded.
    fires,
    /// Fires another replica had already recorded (unique fire key).
    duplicate_fires,
    /// Fires recorded as planned before their time (docs/benchmarks.md, P2).
    fires_planned_ahead,
    /// Fires planned ahead whose plan was out of date when due, planned again.
    fires_planned_again,
    /// Missed fires fired late (`fire-once-now`).
    misfires_fired,
    /// Missed fires dropped (`skip`).
    misfires_skipped,
    /// Launch commands written to the outbox.
    launches,
    /// Activations that found no live node and wait.
    waiting,
    /// Waiting activations that failed because no node appeared in time.
    wait_timeouts,
    /// Re-dispatches after a start timeout.
    redispatch_start_timeout,
    /// Host runs declared lost (no heartbeat within the work timeout).
    lost,
    /// Lost runs restarted (policy `restart`).
    restarted_after_lost,
    /// Lost runs failed (policy `fail`).
    failed_after_lost,
    /// Runs interrupted for exceeding their maximum run time.
    interrupted_max_run_time,
    /// Stop commands sent for disabled launch settings.
    stops,
    /// Reports applied (the report ingestion counter; `report_rate` is its recent rate).
    reports,
    /// Reports ignored because they carried an outdated fencing token.
    stale_reports,
    /// Reports dropped because they could not be read, or not stored.
    malformed_reports,
    /// Failure reports stored.
    failures,
    /// Breaker trips received.
    breaker_trips,
    /// Launch settings or groups disabled by the breaker policy.
    breaker_disables,
    /// Hosts a `MANY` launch setting's breaker quarantined.
    quarantines,
    /// Outbox rows published and confirmed by the broker.
    outbox_published,
    /// Outbox publications that failed and will be retried.
    outbox_failures,
    /// Notifications an endpoint accepted.
    notifications_delivered,
    /// Notification deliveries that failed and are tried again later.
    notification_failures,
    /// Notifications given up on after their retry budget.
    notifications_given_up,
    /// Lag of the latest fire behind its fire time, in milliseconds (gauge).
    scheduler_lag_ms,
}

/// Notification tries per channel kind ([`Channel::index`]): accepted, and failed (to be
/// tried again or given up).
#[derive(Debug, Default)]
pub struct ChannelCounts {
    delivered: [AtomicU64; Channel::ALL.len()],
    failed: [AtomicU64; Channel::ALL.len()],
}

impl ChannelCounts {
    pub fn delivered(&self, channel: Channel) {
        Metrics::inc(&self.delivered[channel.index()]);
    }

    pub fn failed(&self, channel: Channel) {
        Metrics::inc(&self.failed[channel.index()]);
    }

    /// `(channel, delivered, failed)` for every channel kind.
    pub fn snapshot(&self) -> Vec<(Channel, u64, u64)> {
        Channel::ALL
            .iter()
            .map(|c| {
                let i = c.index();
                (
                    *c,
                    self.delivered[i].load(Ordering::Relaxed),
                    self.failed[i].load(Ordering::Relaxed),
                )
            })
            .collect()
    }
}

impl Metrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Events per second over a sliding window of whole seconds, e.g. reports applied.
///
/// `/metrics` is scraped every 15–60 s and the dashboard refreshes every 2 s; a counter alone
/// gives Prometheus its `rate()`, but a person reading `/metrics` or a dashboard wants the rate
/// now. Counts are kept per second of the process's life; the rate is the sum over the last
/// [`RateWindow::DEFAULT_WINDOW`] *complete* seconds divided by their number, so the partial
/// current second does not drag it down and a burst fades out within the window.
#[derive(Debug)]
pub struct RateWindow {
    origin: Instant,
    window: u64,
    /// `(second since origin, events)`, oldest first; at most `window + 1` entries.
    seconds: Mutex<VecDeque<(u64, u64)>>,
}

impl Default for RateWindow {
    fn default() -> Self {
        Self::new(Self::DEFAULT_WINDOW)
    }
}

impl RateWindow {
    /// Seconds the rate is averaged over.
    pub const DEFAULT_WINDOW: u64 = 30;

    pub fn new(window_secs: u64) -> Self {
        Self {
            origin: Instant::now(),
            window: window_secs.max(1),
            seconds: Mutex::new(VecDeque::new()),
        }
    }

    /// The window's length.
    pub fn window(&self) -> Duration {
        Duration::from_secs(self.window)
    }

    fn second(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.origin).as_secs()
    }

    /// Counts `n` events now.
    pub fn record(&self, n: u64) {
        self.record_at(Instant::now(), n);
    }

    /// Counts `n` events at `at`.
    pub fn record_at(&self, at: Instant, n: u64) {
        if n == 0 {
            return;
        }
        let second = self.second(at);
        let mut seconds = self.seconds.lock().unwrap_or_else(PoisonError::into_inner);
        match seconds.back_mut() {
            Some((s, count)) if *s == second => *count += n,
            _ => seconds.push_back((second, n)),
        }
        while seconds
            .front()
            .is_some_and(|(s, _)| *s + self.window < second)
        {
            seconds.pop_front();
        }
    }

    /// Events per second over the window's complete seconds before now.
    pub fn per_second(&self) -> f64 {
        self.per_second_at(Instant::now())
    }

    /// Events per second over the window's complete seconds before `at`.
    pub fn per_second_at(&self, at: Instant) -> f64 {
        let now = self.second(at);
        let from = now.saturating_sub(self.window);
        let seconds = self.seconds.lock().unwrap_or_else(PoisonError::into_inner);
        let events: u64 = seconds
            .iter()
            .filter(|(s, _)| *s >= from && *s < now)
            .map(|(_, n)| n)
            .sum();
        events as f64 / self.window as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_averages_the_complete_seconds_of_the_window() {
        let w = RateWindow::new(10);
        let t0 = w.origin;
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        // 50 in second 0, 30 in second 1, 20 in second 5.
        w.record_at(at(100), 20);
        w.record_at(at(900), 30);
        w.record_at(at(1500), 30);
        w.record_at(at(5200), 20);
        // During second 5 the window is seconds 0–4: 80 events.
        assert!((w.per_second_at(at(5500)) - 8.0).abs() < 1e-9);
        // During second 11 it is seconds 1–10: 50 events.
        assert!((w.per_second_at(at(11_000)) - 5.0).abs() < 1e-9);
        // Long after, nothing.
        assert!(w.per_second_at(at(60_000)).abs() < 1e-9);
    }

    #[test]
    fn old_seconds_are_dropped_as_new_ones_come() {
        let w = RateWindow::new(3);
        let t0 = w.origin;
        for s in 0..100 {
            w.record_at(t0 + Duration::from_secs(s), 1);
        }
        let kept = w.seconds.lock().map(|s| s.len()).unwrap_or(0);
        assert!(kept <= 4, "{kept} seconds kept");
        assert!((w.per_second_at(t0 + Duration::from_secs(100)) - 1.0).abs() < 1e-9);
        w.record_at(t0, 0);
        assert_eq!(w.window(), Duration::from_secs(3));
    }
}
