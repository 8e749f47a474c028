//! A recent rate of events, for figures a person reads now rather than a scraper's `rate()`.

use std::{
    collections::VecDeque,
    sync::{Mutex, PoisonError},
    time::{Duration, Instant},
};

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
