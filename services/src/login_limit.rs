//! Slows down password guessing without handing anyone a way to lock another person out.
//!
//! Failures are counted per (user name, client address) and per client address. A user name
//! alone is never a key that refuses a client that has not failed: if it were, anyone could
//! keep any account (the admin's included) locked by guessing wrong on purpose. Guessing one
//! account from many addresses is slowed by a third count, per user name, which refuses only
//! the addresses that have themselves failed for that user. The right password from an
//! address that did not fail is always checked.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

/// Failures of one user name from one address before that pair is refused.
const FREE_PER_PAIR: u32 = 5;
/// Failures from one address, whatever the names, before it is refused. Higher than the
/// pair's: many people may share one address (an office behind NAT).
const FREE_PER_ADDRESS: u32 = 20;
/// Failures for one user name from all addresses together before the addresses that failed
/// for it are refused (a guess spread over many addresses).
const FREE_PER_USER: u32 = 50;
/// First lock-out; doubles with every further failure, up to [`MAX_LOCKOUT`].
const BASE_LOCKOUT: Duration = Duration::from_secs(30);
const MAX_LOCKOUT: Duration = Duration::from_secs(15 * 60);
/// Failures older than this are forgotten.
const WINDOW: Duration = Duration::from_secs(15 * 60);
/// Bounds memory under a flood of distinct keys.
const MAX_KEYS: usize = 100_000;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Pair { user: String, address: String },
    Address(String),
    User(String),
}

impl Key {
    fn free_attempts(&self) -> u32 {
        match self {
            Key::Pair { .. } => FREE_PER_PAIR,
            Key::Address(_) => FREE_PER_ADDRESS,
            Key::User(_) => FREE_PER_USER,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    last_failure: Instant,
}

impl Entry {
    fn lockout(&self, free: u32) -> Duration {
        if self.failures < free {
            return Duration::ZERO;
        }
        let doublings = (self.failures - free).min(16);
        (BASE_LOCKOUT * 2u32.saturating_pow(doublings)).min(MAX_LOCKOUT)
    }
}

/// One login attempt's keys: who it claims to be and where it comes from.
#[derive(Debug, Clone, Copy)]
pub struct Attempt<'a> {
    pub user: &'a str,
    pub address: &'a str,
}

impl Attempt<'_> {
    fn pair(&self) -> Key {
        Key::Pair {
            user: self.user.to_owned(),
            address: self.address.to_owned(),
        }
    }

    fn keys(&self) -> [Key; 3] {
        [
            self.pair(),
            Key::Address(self.address.to_owned()),
            Key::User(self.user.to_owned()),
        ]
    }
}

#[derive(Debug, Default)]
pub struct LoginLimiter {
    entries: Mutex<HashMap<Key, Entry>>,
}

impl LoginLimiter {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        match self.entries.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// How long `attempt` must wait. The user-wide count applies only to an address that has
    /// failed for this user itself (within the window).
    fn wait(entries: &HashMap<Key, Entry>, attempt: &Attempt<'_>, now: Instant) -> Duration {
        let live = |key: &Key| {
            entries
                .get(key)
                .filter(|e| now.saturating_duration_since(e.last_failure) < WINDOW)
        };
        let failed_here = live(&attempt.pair()).is_some();
        attempt
            .keys()
            .iter()
            .filter(|key| failed_here || !matches!(key, Key::User(_)))
            .filter_map(|key| {
                live(key).map(|e| {
                    (e.last_failure + e.lockout(key.free_attempts())).saturating_duration_since(now)
                })
            })
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// `Err(seconds to wait)` while `attempt` is refused.
    pub fn check(&self, attempt: Attempt<'_>, now: Instant) -> Result<(), u64> {
        let wait = Self::wait(&self.lock(), &attempt, now);
        if wait.is_zero() {
            Ok(())
        } else {
            Err(seconds(wait))
        }
    }

    /// Checks `attempt` and, when allowed, counts it as a failure at once, in the same critical
    /// section: a burst of parallel guesses cannot all pass the check while the slow password
    /// hash of the first ones is still running. [`LoginLimiter::succeeded`] takes the attempt
    /// back. `Err(seconds to wait)` while it is refused.
    pub fn reserve(&self, attempt: Attempt<'_>, now: Instant) -> Result<(), u64> {
        let mut entries = self.lock();
        let wait = Self::wait(&entries, &attempt, now);
        if !wait.is_zero() {
            return Err(seconds(wait));
        }
        if entries.len() >= MAX_KEYS {
            entries.retain(|_, e| now.saturating_duration_since(e.last_failure) < WINDOW);
        }
        for key in attempt.keys() {
            let e = entries.entry(key).or_insert(Entry {
                failures: 0,
                last_failure: now,
            });
            if now.saturating_duration_since(e.last_failure) >= WINDOW {
                e.failures = 0;
            }
            e.failures += 1;
            e.last_failure = now;
        }
        Ok(())
    }

    /// A reserved attempt turned out right: the pair's record is cleared and the reservation
    /// taken back from the address and the user name, so good logins never add up to a lock.
    pub fn succeeded(&self, attempt: Attempt<'_>) {
        let mut entries = self.lock();
        let [pair, address, user] = attempt.keys();
        entries.remove(&pair);
        for key in [address, user] {
            if let Some(e) = entries.get_mut(&key) {
                e.failures = e.failures.saturating_sub(1);
                if e.failures == 0 {
                    entries.remove(&key);
                }
            }
        }
    }
}

/// Whole seconds to wait, at least one (a `Retry-After` of 0 would invite a retry at once).
fn seconds(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'a>(user: &'a str, address: &'a str) -> Attempt<'a> {
        Attempt { user, address }
    }

    #[test]
    fn locks_the_pair_after_its_free_attempts_and_forgives_success() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for _ in 0..FREE_PER_PAIR {
            assert_eq!(l.reserve(at("bob", "10.0.0.1"), t0), Ok(()));
        }
        let wait = l.check(at("bob", "10.0.0.1"), t0).expect_err("locked");
        assert_eq!(wait, BASE_LOCKOUT.as_secs());
        assert_eq!(l.check(at("bob", "10.0.0.1"), t0 + BASE_LOCKOUT), Ok(()));
        // Neither another user from that address nor the user from another address waits.
        assert_eq!(l.check(at("alice", "10.0.0.1"), t0), Ok(()));
        assert_eq!(l.check(at("bob", "10.0.0.2"), t0), Ok(()));
        l.succeeded(at("bob", "10.0.0.1"));
        assert_eq!(l.check(at("bob", "10.0.0.1"), t0), Ok(()));
    }

    #[test]
    fn reserved_attempts_count_before_their_verdict() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        // A parallel burst: every attempt reserves before any verdict is known.
        let admitted = (0..30)
            .filter(|_| l.reserve(at("bob", "1.2.3.4"), t0).is_ok())
            .count();
        assert_eq!(admitted, FREE_PER_PAIR as usize);
        assert!(l.check(at("bob", "1.2.3.4"), t0).is_err());
        assert_eq!(l.check(at("bob", "5.6.7.8"), t0), Ok(()));
    }

    #[test]
    fn an_address_guessing_many_names_is_refused_for_all_of_them() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for i in 0..FREE_PER_ADDRESS {
            l.reserve(at(&format!("user{i}"), "6.6.6.6"), t0)
                .expect("free attempt");
        }
        assert!(l.check(at("someone-new", "6.6.6.6"), t0).is_err());
        assert_eq!(l.check(at("someone-new", "7.7.7.7"), t0), Ok(()));
    }

    #[test]
    fn a_guess_spread_over_addresses_refuses_only_the_addresses_that_failed() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for i in 0..FREE_PER_USER {
            l.reserve(at("admin", &format!("10.9.{}.{}", i / 256, i % 256)), t0)
                .expect("a first attempt from each address");
        }
        assert!(l.check(at("admin", "10.9.0.1"), t0).is_err());
        // The owner, from an address that never failed, is never refused.
        assert_eq!(l.check(at("admin", "192.168.1.10"), t0), Ok(()));
    }

    #[test]
    fn a_success_takes_its_reservation_back() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for _ in 0..FREE_PER_ADDRESS * 3 {
            l.reserve(at("bob", "c"), t0).expect("allowed");
            l.succeeded(at("bob", "c"));
        }
        assert_eq!(l.check(at("bob", "c"), t0), Ok(()));
        assert!(l.lock().is_empty());
    }

    #[test]
    fn failures_are_forgotten_after_the_window() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for _ in 0..FREE_PER_PAIR {
            l.reserve(at("bob", "c"), t0).expect("allowed");
        }
        assert_eq!(l.check(at("bob", "c"), t0 + WINDOW), Ok(()));
        assert_eq!(l.reserve(at("bob", "c"), t0 + WINDOW), Ok(()));
    }

    #[test]
    fn lockout_grows_and_is_capped() {
        let t0 = Instant::now();
        let e = |failures| Entry {
            failures,
            last_failure: t0,
        };
        assert!(
            e(FREE_PER_PAIR + 1).lockout(FREE_PER_PAIR) > e(FREE_PER_PAIR).lockout(FREE_PER_PAIR)
        );
        assert_eq!(e(1000).lockout(FREE_PER_PAIR), MAX_LOCKOUT);
        assert_eq!(seconds(Duration::from_millis(1500)), 2);
        assert_eq!(seconds(Duration::from_millis(1)), 1);
    }
}
