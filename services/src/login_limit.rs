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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        match self.entries.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    fn wait(entries: &HashMap<String, Entry>, keys: &[&str], now: Instant) -> Duration {
        keys.iter()
            .filter_map(|key| entries.get(*key))
            .map(|e| (e.last_failure + Self::lockout(e.failures)).saturating_duration_since(now))
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// `Err(seconds to wait)` while any of `keys` is locked out.
    pub fn check(&self, keys: &[&str], now: Instant) -> Result<(), u64> {
        let wait = Self::wait(&self.lock(), keys, now);
        if wait.is_zero() {
            Ok(())
        } else {
            Err(wait.as_secs().max(1))
        }
    }

    /// Checks `keys` and, when allowed, counts the attempt as a failure at once, in the same
    /// critical section: a burst of parallel guesses cannot all pass the check while the slow
    /// password hash of the first ones is still running. [`LoginLimiter::succeeded`] takes the
    /// attempt back. `Err(seconds to wait)` while any key is locked out.
    pub fn reserve(&self, keys: &[&str], now: Instant) -> Result<(), u64> {
        let mut entries = self.lock();
        let wait = Self::wait(&entries, keys, now);
        if !wait.is_zero() {
            return Err(wait.as_secs().max(1));
        }
        Self::count_failure(&mut entries, keys, now);
        Ok(())
    }

    /// A reserved attempt turned out right: the user's record is cleared and the
    /// client's reservation taken back, so one client's good logins do not lock it out.
    pub fn succeeded(&self, user_key: &str, client_keys: &[&str]) {
        let mut entries = self.lock();
        entries.remove(user_key);
        for key in client_keys {
            if let Some(e) = entries.get_mut(*key) {
                e.failures = e.failures.saturating_sub(1);
                if e.failures == 0 {
                    entries.remove(*key);
                }
            }
        }
    }

    fn count_failure(entries: &mut HashMap<String, Entry>, keys: &[&str], now: Instant) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_out_after_free_attempts_and_forgives_success() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for _ in 0..FREE_ATTEMPTS {
            assert_eq!(l.reserve(&["user:bob"], t0), Ok(()));
        }
        let wait = l.check(&["user:bob"], t0).expect_err("locked");
        assert_eq!(wait, BASE_LOCKOUT.as_secs());
        assert_eq!(l.check(&["user:bob"], t0 + BASE_LOCKOUT), Ok(()));
        assert_eq!(l.check(&["user:alice"], t0), Ok(()));
        l.succeeded("user:bob", &[]);
        assert_eq!(l.check(&["user:bob"], t0), Ok(()));
    }

    #[test]
    fn reserved_attempts_count_before_their_verdict() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        let keys = ["user:bob", "client:1.2.3.4"];
        // A parallel burst: every attempt reserves before any verdict is known.
        let admitted = (0..20).filter(|_| l.reserve(&keys, t0).is_ok()).count();
        assert_eq!(admitted, FREE_ATTEMPTS as usize);
        assert!(l.check(&["user:bob"], t0).is_err());
    }

    #[test]
    fn a_success_takes_its_reservation_back() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for _ in 0..FREE_ATTEMPTS * 3 {
            l.reserve(&["user:bob", "client:c"], t0).expect("allowed");
            l.succeeded("user:bob", &["client:c"]);
        }
        assert_eq!(l.check(&["user:bob", "client:c"], t0), Ok(()));
    }

    #[test]
    fn lockout_grows_and_is_capped() {
        assert!(LoginLimiter::lockout(FREE_ATTEMPTS + 1) > LoginLimiter::lockout(FREE_ATTEMPTS));
        assert_eq!(LoginLimiter::lockout(1000), MAX_LOCKOUT);
    }
}
