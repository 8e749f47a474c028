//! Breaker and retry arithmetic that the manager and the nodes must compute identically.

use crate::catalog::{DeadLetterPolicy, DeadLetterSettings, RetryPolicy};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Most distinct wait delays one launch setting may use: each is a broker queue (validation
/// refuses a retry policy with more).
pub const MAX_WAIT_LEVELS: usize = 64;

/// Most attempts looked at when building a policy's ladder: the ladder reaches its cap long
/// before unless the multiplier is barely above 1.
const MAX_ATTEMPTS_SCANNED: u32 = 10_000;

/// One rung of a retry ladder: from retry number `attempt` on, a message waits `delay_ms`
/// (whole milliseconds, the wait queue `<prefix>.wait.<delay_ms>ms`), until the next rung.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RetryStep {
    /// The first retry (1 = the first) that waits this long.
    pub attempt: u32,
    /// The wait, in milliseconds.
    pub delay_ms: u64,
}

/// The ladder of a retry policy: each distinct delay of [`retry_delay`] with the first retry
/// that waits it, in order, up to the cap (the last rung holds for every later retry). What
/// the manager declares wait queues for and sends nodes in a launch, so that both sides name
/// the same queues whatever their floating-point arithmetic.
///
/// ```
/// use am_domain::{catalog::RetryPolicy, policy::{retry_ladder, RetryStep}, HumanDuration};
/// let p = RetryPolicy { initial_delay: HumanDuration::from_secs(1), multiplier: 2.0,
///                       max_delay: HumanDuration::from_secs(5), max_deliveries: 10 };
/// let ladder: Vec<(u32, u64)> = retry_ladder(&p).iter().map(|s| (s.attempt, s.delay_ms)).collect();
/// assert_eq!(ladder, [(1, 1000), (2, 2000), (3, 4000), (4, 5000)]);
/// ```
pub fn retry_ladder(policy: &RetryPolicy) -> Vec<RetryStep> {
    let mut steps: Vec<RetryStep> = Vec::new();
    for attempt in 1..=MAX_ATTEMPTS_SCANNED {
        let delay = retry_delay(policy, attempt);
        let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        if steps.last().is_none_or(|s| s.delay_ms != delay_ms) {
            steps.push(RetryStep { attempt, delay_ms });
        }
        if delay >= policy.max_delay.0 || steps.len() > MAX_WAIT_LEVELS {
            break;
        }
    }
    steps
}

/// The wait before retry number `attempt` on a ladder (attempt 0 counts as the first), or
/// `None` for an empty ladder.
///
/// ```
/// use am_domain::policy::{step_delay, RetryStep};
/// use std::time::Duration;
/// let ladder = [RetryStep { attempt: 1, delay_ms: 100 }, RetryStep { attempt: 3, delay_ms: 400 }];
/// assert_eq!(step_delay(&ladder, 2), Some(Duration::from_millis(100)));
/// assert_eq!(step_delay(&ladder, 9), Some(Duration::from_millis(400)));
/// assert_eq!(step_delay(&[], 1), None);
/// ```
pub fn step_delay(ladder: &[RetryStep], attempt: u32) -> Option<Duration> {
    let attempt = attempt.max(1);
    ladder
        .iter()
        .take_while(|s| s.attempt <= attempt)
        .last()
        .or(ladder.first())
        .map(|s| Duration::from_millis(s.delay_ms))
}

/// The breaker's `N` for a failure threshold `M`: `max(1, M / 3)` (integer division).
///
/// ```
/// assert_eq!(am_domain::policy::same_type_threshold(10), 3);
/// assert_eq!(am_domain::policy::same_type_threshold(2), 1);
/// ```
pub fn same_type_threshold(m: u32) -> u32 {
    (m / 3).max(1)
}

/// Delay before retry number `attempt` (1 = the first retry):
/// `initial_delay × multiplier^(attempt-1)`, capped at `max_delay`.
///
/// Never panics: huge attempts or multipliers saturate at the cap. A multiplier below 1 or NaN
/// (which validation rejects) counts as 1, so delays never shrink from one attempt to the next.
///
/// ```
/// use am_domain::{catalog::RetryPolicy, policy::retry_delay, HumanDuration};
/// use std::time::Duration;
/// let p = RetryPolicy { initial_delay: HumanDuration::from_secs(1), multiplier: 2.0,
///                       max_delay: HumanDuration::from_secs(60), max_deliveries: 10 };
/// assert_eq!(retry_delay(&p, 1), Duration::from_secs(1));
/// assert_eq!(retry_delay(&p, 4), Duration::from_secs(8));
/// assert_eq!(retry_delay(&p, 100), Duration::from_secs(60));
/// ```
pub fn retry_delay(policy: &RetryPolicy, attempt: u32) -> Duration {
    let initial = policy.initial_delay.0;
    let cap = policy.max_delay.0;
    let exponent = attempt.saturating_sub(1);
    if exponent == 0 {
        return initial.min(cap);
    }
    // `f64::max` ignores NaN, so a NaN multiplier becomes 1.
    let multiplier = policy.multiplier.max(1.0);
    let secs = initial.as_secs_f64() * multiplier.powf(f64::from(exponent));
    if !secs.is_finite() || secs >= cap.as_secs_f64() {
        return cap;
    }
    // Rounding through f64 must not make a later delay shorter than the first one.
    Duration::try_from_secs_f64(secs).map_or(cap, |d| d.max(initial).min(cap))
}

/// Whether a message that has now been delivered `attempts` times leaves the retry loop
/// (to the dead-letter queue, or to the sump for `park`). `retry-forever` never gives up.
pub fn should_dead_letter(
    settings: &DeadLetterSettings,
    retry: &RetryPolicy,
    attempts: u32,
) -> bool {
    match settings.policy {
        DeadLetterPolicy::RetryForever => false,
        DeadLetterPolicy::DeadLetter | DeadLetterPolicy::Park | DeadLetterPolicy::Forward => {
            attempts >= retry.max_deliveries.max(1)
        }
    }
}

/// `MANY` breaker: a host whose node tripped is quarantined (no longer dispatched to), and the
/// launch setting is disabled once two hosts of its pool are quarantined, or once no live host
/// of its pool is left outside the quarantine (fewer than two live ones).
///
/// ```
/// use am_domain::policy::many_disables;
/// assert!(!many_disables(1, 2)); // one of three hosts tripped: the other two go on
/// assert!(many_disables(2, 1));
/// assert!(many_disables(1, 0)); // the only live host tripped
/// ```
pub fn many_disables(quarantined: usize, live_outside_quarantine: usize) -> bool {
    quarantined >= 2 || (quarantined >= 1 && live_outside_quarantine == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HumanDuration;
    use proptest::prelude::*;

    fn policy(initial_ms: u64, multiplier: f64, max_ms: u64) -> RetryPolicy {
        RetryPolicy {
            initial_delay: HumanDuration::from_millis(initial_ms),
            multiplier,
            max_delay: HumanDuration::from_millis(max_ms),
            max_deliveries: 5,
        }
    }

    #[test]
    fn threshold_is_a_third_of_m_and_at_least_one() {
        assert_eq!(same_type_threshold(0), 1);
        assert_eq!(same_type_threshold(1), 1);
        assert_eq!(same_type_threshold(5), 1);
        assert_eq!(same_type_threshold(6), 2);
        assert_eq!(same_type_threshold(10), 3);
        assert_eq!(same_type_threshold(u32::MAX), u32::MAX / 3);
    }

    #[test]
    fn delays_grow_geometrically_until_the_cap() {
        let p = policy(500, 3.0, 10_000);
        let delays: Vec<u64> = (1..=6)
            .map(|a| retry_delay(&p, a).as_millis() as u64)
            .collect();
        assert_eq!(delays, [500, 1500, 4500, 10_000, 10_000, 10_000]);
        assert_eq!(
            retry_delay(&p, 0),
            Duration::from_millis(500),
            "attempt 0 counts as the first"
        );
    }

    #[test]
    fn extreme_inputs_saturate_at_the_cap() {
        let cap = Duration::from_secs(300);
        assert_eq!(retry_delay(&policy(1000, 2.0, 300_000), u32::MAX), cap);
        assert_eq!(retry_delay(&policy(1000, f64::MAX, 300_000), 3), cap);
        assert_eq!(retry_delay(&policy(1000, f64::INFINITY, 300_000), 2), cap);
        assert_eq!(retry_delay(&policy(u64::MAX, 2.0, 300_000), 1), cap);
        let huge = RetryPolicy {
            max_delay: HumanDuration(Duration::MAX),
            ..policy(1000, 10.0, 0)
        };
        assert_eq!(retry_delay(&huge, u32::MAX), Duration::MAX);
    }

    #[test]
    fn invalid_multipliers_do_not_shrink_delays() {
        assert_eq!(
            retry_delay(&policy(1000, 0.5, 60_000), 5),
            Duration::from_secs(1)
        );
        assert_eq!(
            retry_delay(&policy(1000, f64::NAN, 60_000), 5),
            Duration::from_secs(1)
        );
        assert_eq!(
            retry_delay(&policy(1000, -3.0, 60_000), 5),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn dead_letter_after_max_deliveries_unless_retrying_forever() {
        let retry = policy(1000, 2.0, 60_000);
        let mut settings = DeadLetterSettings::default();
        assert!(!should_dead_letter(&settings, &retry, 4));
        assert!(should_dead_letter(&settings, &retry, 5));
        settings.policy = DeadLetterPolicy::Park;
        assert!(should_dead_letter(&settings, &retry, 6));
        settings.policy = DeadLetterPolicy::RetryForever;
        assert!(!should_dead_letter(&settings, &retry, u32::MAX));
        let zero = RetryPolicy {
            max_deliveries: 0,
            ..retry
        };
        assert!(!should_dead_letter(
            &DeadLetterSettings::default(),
            &zero,
            0
        ));
        assert!(should_dead_letter(&DeadLetterSettings::default(), &zero, 1));
    }

    proptest! {
        #[test]
        fn delays_are_monotone_and_capped(
            initial_ms in 0u64..10_000_000,
            multiplier in prop_oneof![1.0f64..10.0, Just(1.0), Just(f64::MAX), any::<f64>()],
            max_ms in 0u64..100_000_000,
            attempt in 1u32..u32::MAX,
        ) {
            let p = policy(initial_ms, multiplier, max_ms);
            let this = retry_delay(&p, attempt);
            let next = retry_delay(&p, attempt + 1);
            prop_assert!(this <= next, "{this:?} > {next:?}");
            prop_assert!(next <= p.max_delay.0);
        }

        #[test]
        fn first_attempts_are_monotone(
            initial_ms in 1u64..100_000,
            multiplier in 1.0f64..5.0,
            max_ms in 1u64..10_000_000,
        ) {
            let p = policy(initial_ms, multiplier, max_ms);
            let delays: Vec<Duration> = (1..=64).map(|a| retry_delay(&p, a)).collect();
            prop_assert!(delays.windows(2).all(|w| w[0] <= w[1]), "{delays:?}");
            prop_assert!(delays.iter().all(|d| *d <= p.max_delay.0));
        }
    }

    #[test]
    fn many_breaker_needs_two_hosts_or_every_live_one() {
        assert!(!many_disables(0, 0), "nothing tripped");
        assert!(!many_disables(1, 1));
        assert!(many_disables(1, 0));
        assert!(many_disables(2, 5));
    }
}
