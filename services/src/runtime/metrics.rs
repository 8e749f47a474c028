//! Counters of the runtime, for `/metrics` and the dashboard. Per manager process.

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// Monotonic counters (and a few gauges) of one manager process.
        #[derive(Debug, Default)]
        pub struct Metrics {
            $($(#[$doc])* pub $name: AtomicU64,)*
        }

        impl Metrics {
            /// Every counter with its name, for exposition.
            pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name.load(Ordering::Relaxed)),)*]
            }
        }
    };
}

counters! {
    /// Schedule fires recorded.
    fires,
    /// Fires another replica had already recorded (unique fire key).
    duplicate_fires,
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
    /// Reports applied.
    reports,
    /// Reports ignored because they carried an outdated fencing token.
    stale_reports,
    /// Reports that could not be read.
    malformed_reports,
    /// Failure reports stored.
    failures,
    /// Breaker trips received.
    breaker_trips,
    /// Launch settings or groups disabled by the breaker policy.
    breaker_disables,
    /// Outbox rows published and confirmed by the broker.
    outbox_published,
    /// Outbox publications that failed and will be retried.
    outbox_failures,
    /// Lag of the latest fire behind its fire time, in milliseconds (gauge).
    scheduler_lag_ms,
}

impl Metrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
