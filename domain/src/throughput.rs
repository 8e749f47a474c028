//! Per-minute figures of the data path over the last hour: messages processed, real failures
//! and retried attempts, and the backlog waiting in the broker. The dashboard shows them for
//! every launch setting together, a launch setting's page for that one.
//!
//! Each figure has one source, so the chart never disagrees with a list: *processed* is what
//! the nodes' counters grew by in the minute their heartbeat (or final report) arrived;
//! *failed* and *retried* are the failure reports of those kinds
//! ([`crate::failure_kind`]) that occurred in the minute, as the failure logs list
//! them; *backlog* is the most messages waiting that a broker sample found in the minute (none
//! when no sample was).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

/// Minutes the charts cover, the current one included.
pub const WINDOW_MINUTES: i64 = 60;

/// The scope of the broker's total backlog (what waits for nodes across every queue nodes
/// consume, each queue counted once). Not a launch setting id: ids start with a letter or digit.
pub const BROKER_SCOPE: &str = "*";

/// The figures of one minute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Minute {
    /// The minute's first second (UTC).
    pub start: DateTime<Utc>,
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub processed: u64,
    /// Real failures (kind `failed`).
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub failed: u64,
    /// Failed attempts sent to be tried again (kind `retried`).
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub retried: u64,
    /// The most messages waiting in the broker at a sample of the minute; `None` when none was
    /// taken.
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub backlog: Option<u64>,
}

/// The last [`WINDOW_MINUTES`] minutes, oldest first, every minute present.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Throughput {
    pub minutes: Vec<Minute>,
}

/// The first second of `t`'s minute.
pub fn minute_start(t: DateTime<Utc>) -> DateTime<Utc> {
    let secs = t.timestamp();
    DateTime::from_timestamp(secs - secs.rem_euclid(60), 0).unwrap_or(t)
}

/// The charts' window at `now`: from the start of the minute [`WINDOW_MINUTES`]` - 1` minutes
/// before `now`'s to the end of `now`'s minute.
pub fn window(now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    let current = minute_start(now);
    (
        current - Duration::minutes(WINDOW_MINUTES - 1),
        current + Duration::minutes(1),
    )
}

impl Throughput {
    /// The window at `now` with the stored figures in their minutes: `samples` are
    /// `(minute, processed, backlog)`, `failures` `(minute, kind, count)` (kinds other than
    /// failed and retried are not shown). Figures outside the window are left out.
    pub fn assemble<'a>(
        now: DateTime<Utc>,
        samples: impl IntoIterator<Item = (DateTime<Utc>, u64, Option<u64>)>,
        failures: impl IntoIterator<Item = (DateTime<Utc>, &'a str, u64)>,
    ) -> Self {
        use crate::failure_kind;
        let (from, _) = window(now);
        let mut minutes: Vec<Minute> = (0..WINDOW_MINUTES)
            .map(|i| Minute {
                start: from + Duration::minutes(i),
                ..Minute::default()
            })
            .collect();
        let len = minutes.len();
        let slot = move |t: DateTime<Utc>| {
            usize::try_from((minute_start(t) - from).num_minutes())
                .ok()
                .filter(|i| *i < len)
        };
        for (t, processed, backlog) in samples {
            if let Some(m) = slot(t).and_then(|i| minutes.get_mut(i)) {
                m.processed += processed;
                m.backlog = backlog.or(m.backlog);
            }
        }
        for (t, kind, n) in failures {
            let Some(m) = slot(t).and_then(|i| minutes.get_mut(i)) else {
                continue;
            };
            match kind {
                failure_kind::FAILED => m.failed += n,
                failure_kind::RETRIED => m.retried += n,
                _ => {}
            }
        }
        Throughput { minutes }
    }

    /// Messages processed over the window.
    pub fn processed(&self) -> u64 {
        self.minutes.iter().map(|m| m.processed).sum()
    }

    /// Real failures over the window.
    pub fn failed(&self) -> u64 {
        self.minutes.iter().map(|m| m.failed).sum()
    }

    /// Retried attempts over the window.
    pub fn retried(&self) -> u64 {
        self.minutes.iter().map(|m| m.retried).sum()
    }

    /// The largest count of one minute (processed, failed and retried stacked): the scale of
    /// the chart's bars.
    pub fn peak(&self) -> u64 {
        self.minutes
            .iter()
            .map(|m| m.processed + m.failed + m.retried)
            .max()
            .unwrap_or(0)
    }

    /// The largest backlog sampled in the window: the scale of the chart's backlog line.
    pub fn peak_backlog(&self) -> u64 {
        self.minutes
            .iter()
            .filter_map(|m| m.backlog)
            .max()
            .unwrap_or(0)
    }

    /// The backlog of the newest minute that has a sample.
    pub fn latest_backlog(&self) -> Option<u64> {
        self.minutes.iter().rev().find_map(|m| m.backlog)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 27, h, m, s)
            .single()
            .expect("valid time")
    }

    #[test]
    fn the_window_is_sixty_whole_minutes_ending_with_the_current_one() {
        let (from, to) = window(at(10, 30, 15));
        assert_eq!(from, at(9, 31, 0));
        assert_eq!(to, at(10, 31, 0));
        assert_eq!(minute_start(at(10, 30, 59)), at(10, 30, 0));
    }

    #[test]
    fn figures_land_in_their_minute_and_empty_minutes_are_zero() {
        let now = at(10, 30, 15);
        let t = Throughput::assemble(
            now,
            [
                (at(10, 30, 0), 7, Some(3)),
                (at(10, 29, 0), 5, None),
                (at(10, 29, 0), 2, Some(9)),
                // Before the window: left out.
                (at(9, 30, 0), 100, Some(100)),
            ],
            [
                (at(10, 30, 5), "failed", 2),
                (at(10, 30, 40), "retried", 4),
                (at(10, 29, 59), "unavailable", 8),
                (at(11, 0, 0), "failed", 50),
            ],
        );
        assert_eq!(t.minutes.len(), 60);
        let last = t.minutes.last().expect("a minute");
        assert_eq!(
            (
                last.start,
                last.processed,
                last.failed,
                last.retried,
                last.backlog
            ),
            (at(10, 30, 0), 7, 2, 4, Some(3))
        );
        let before = &t.minutes[58];
        assert_eq!(
            (before.processed, before.failed, before.backlog),
            (7, 0, Some(9))
        );
        assert_eq!(t.minutes[0].start, at(9, 31, 0));
        assert_eq!(t.minutes[0].backlog, None);
        assert_eq!((t.processed(), t.failed(), t.retried()), (14, 2, 4));
        assert_eq!(t.peak(), 13);
        assert_eq!(t.peak_backlog(), 9);
        assert_eq!(t.latest_backlog(), Some(3));
    }

    #[test]
    fn an_empty_window_has_no_peak_and_no_backlog() {
        let t = Throughput::assemble(at(0, 0, 0), [], []);
        assert_eq!(
            (t.peak(), t.peak_backlog(), t.latest_backlog()),
            (0, 0, None)
        );
    }
}
