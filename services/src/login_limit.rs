//! Slows down password guessing: after a few failures for one user name (or from one client)
//! further attempts are refused for a while, growing with each new failure.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

/// Failures allowed before attempts are refused.
const FREE_ATTEMPTS: u32 = 5;
/// First lock-out; doubles with every further failure, up to [`MAX_LOCKOUT`].
const BASE_LOCKOUT: Duration = Duration::from_secs(30);
const MAX_LOCKOUT: Duration = Duration::from_secs(15 * 60);
/// Failures older than this are forgotten.
const WINDOW: Duration = Duration::from_secs(15 * 60);
/// Bounds memory under a flood of distinct keys.
const MAX_KEYS: usize = 100_000;

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    last_failure: Instant,
}

#[derive(Debug, Default)]
pub struct LoginLimiter {
    entries: Mutex<HashMap<String, Entry>>,
}

impl LoginLimiter {
    fn lockout(failures: u32) -> Duration {
        if failures < FREE_ATTEMPTS {
            return Duration::ZERO;
        }
        let doublings = (failures - FREE_ATTEMPTS).min(16);
        (BASE_LOCKOUT * 2u32.saturating_pow(doublings)).min(MAX_LOCKOUT)
    }

    /// `Err(seconds to wait)` while any of `keys` is locked out.
    pub fn check(&self, keys: &[&str], now: Instant) -> Result<(), u64> {
        let entries = match self.entries.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let mut wait = Duration::ZERO;
        for key in keys {
            if let Some(e) = entries.get(*key) {
                let until = e.last_failure + Self::lockout(e.failures);
                if until > now {
                    wait = wait.max(until - now);
                }
            }
        }
        if wait.is_zero() {
            Ok(())
        } else {
            Err(wait.as_secs().max(1))
        }
    }

    pub fn record_failure(&self, keys: &[&str], now: Instant) {
        let mut entries = match self.entries.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if entries.len() >= MAX_KEYS {
            entries.retain(|_, e| now.duration_since(e.last_failure) < WINDOW);
        }
        for key in keys {
            let e = entries.entry((*key).to_owned()).or_insert(Entry {
                failures: 0,
                last_failure: now,
            });
            if now.duration_since(e.last_failure) >= WINDOW {
                e.failures = 0;
            }
            e.failures += 1;
            e.last_failure = now;
        }
    }

    pub fn record_success(&self, keys: &[&str]) {
        let mut entries = match self.entries.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        for key in keys {
            entries.remove(*key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_out_after_free_attempts_and_forgives_success() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for _ in 0..FREE_ATTEMPTS - 1 {
            l.record_failure(&["user:bob"], t0);
            assert_eq!(l.check(&["user:bob"], t0), Ok(()));
        }
        l.record_failure(&["user:bob"], t0);
        let wait = l.check(&["user:bob"], t0).expect_err("locked");
        assert_eq!(wait, BASE_LOCKOUT.as_secs());
        assert_eq!(l.check(&["user:bob"], t0 + BASE_LOCKOUT), Ok(()));
        assert_eq!(l.check(&["user:alice"], t0), Ok(()));
        l.record_success(&["user:bob"]);
        assert_eq!(l.check(&["user:bob"], t0), Ok(()));
    }

    #[test]
    fn lockout_grows_and_is_capped() {
        assert!(LoginLimiter::lockout(FREE_ATTEMPTS + 1) > LoginLimiter::lockout(FREE_ATTEMPTS));
        assert_eq!(LoginLimiter::lockout(1000), MAX_LOCKOUT);
    }
}
