//! The per-launch-setting breaker (docs/concepts.md, Breaker): consecutive failures since the
//! last success, *temporarily unavailable* ignored; trips at `N` in a row of one error type or
//! `M` of any. A run counts distinct messages: a retry of a message that already failed in the
//! run does not lengthen it, so one poison message ends in the dead-letter queue instead of
//! disabling the launch setting; the breaker is about the agent being broken.

use am_domain::{policy::same_type_threshold, wire::ErrorSummary};
use std::collections::{HashSet, VecDeque};

/// How many recent errors a trip report carries.
const LAST_ERRORS: usize = 5;

#[derive(Debug, Clone)]
pub(crate) struct Breaker {
    m: u32,
    n: u32,
    consecutive: u32,
    same_type: u32,
    last: VecDeque<ErrorSummary>,
    /// The messages that failed in the current run (at most `M`: the run trips by then).
    failed_messages: HashSet<u64>,
}

/// What the breaker says after a trip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trip {
    pub(crate) consecutive: u32,
    pub(crate) same_type: u32,
    pub(crate) last_errors: Vec<ErrorSummary>,
}

impl Breaker {
    pub(crate) fn new(m: u32) -> Self {
        let m = m.max(1);
        Self {
            m,
            n: same_type_threshold(m),
            consecutive: 0,
            same_type: 0,
            last: VecDeque::new(),
            failed_messages: HashSet::new(),
        }
    }

    /// Thresholds changed with a new launch; the streak so far still counts.
    pub(crate) fn set_threshold(&mut self, m: u32) {
        self.m = m.max(1);
        self.n = same_type_threshold(self.m);
    }

    pub(crate) fn success(&mut self) {
        self.consecutive = 0;
        self.same_type = 0;
        self.last.clear();
        self.failed_messages.clear();
    }

    /// Counts one failure of the data message `data_message` (its identity; `None` for a
    /// standalone run, which always counts); returns the trip (and resets, so a relaunch starts
    /// afresh) when a threshold is reached. A message that already failed in this run does not
    /// count again.
    pub(crate) fn failure(
        &mut self,
        error_type: &str,
        message: &str,
        data_message: Option<u64>,
    ) -> Option<Trip> {
        if let Some(key) = data_message
            && !self.failed_messages.insert(key)
        {
            return None;
        }
        let same = self
            .last
            .back()
            .is_some_and(|last| last.error_type == error_type);
        self.same_type = if same { self.same_type + 1 } else { 1 };
        self.consecutive += 1;
        if self.last.len() == LAST_ERRORS {
            self.last.pop_front();
        }
        self.last.push_back(ErrorSummary {
            error_type: error_type.to_owned(),
            message: message.to_owned(),
        });
        if self.same_type >= self.n || self.consecutive >= self.m {
            let trip = Trip {
                consecutive: self.consecutive,
                same_type: self.same_type,
                last_errors: self.last.iter().cloned().collect(),
            };
            self.success();
            return Some(trip);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_type_trips_at_n() {
        let mut b = Breaker::new(10); // N = 3
        assert!(b.failure("Io", "a", None).is_none());
        assert!(b.failure("Io", "b", None).is_none());
        let trip = b.failure("Io", "c", None).expect("third Io trips");
        assert_eq!((trip.consecutive, trip.same_type), (3, 3));
        assert_eq!(trip.last_errors.len(), 3);
        assert!(
            b.failure("Io", "d", None).is_none(),
            "a trip resets the streak"
        );
    }

    #[test]
    fn mixed_types_trip_at_m() {
        let mut b = Breaker::new(6); // N = 2
        for (i, ty) in ["A", "B", "A", "B", "A"].iter().enumerate() {
            assert!(b.failure(ty, "x", None).is_none(), "failure {i}");
        }
        let trip = b.failure("B", "x", None).expect("sixth failure trips");
        assert_eq!(trip.consecutive, 6);
        assert_eq!(trip.same_type, 1);
        assert_eq!(trip.last_errors.len(), LAST_ERRORS);
    }

    #[test]
    fn a_message_failing_again_does_not_lengthen_the_run() {
        let mut b = Breaker::new(10); // N = 3
        // One poison message, delivered ten times: one failure of the run.
        for _ in 0..10 {
            assert!(b.failure("Poison", "x", Some(7)).is_none());
        }
        assert_eq!(b.consecutive, 1);
        // Two more messages failing the same way: three distinct ones trip it.
        assert!(b.failure("Poison", "x", Some(8)).is_none());
        let trip = b
            .failure("Poison", "x", Some(9))
            .expect("third message trips");
        assert_eq!((trip.consecutive, trip.same_type), (3, 3));
        // A success starts a new run, in which message 7 counts again.
        b.success();
        assert!(b.failure("Poison", "x", Some(7)).is_none());
        assert_eq!(b.consecutive, 1);
    }

    #[test]
    fn success_resets() {
        let mut b = Breaker::new(3); // N = 1: any failure trips
        assert!(b.failure("A", "x", None).is_some());
        let mut b = Breaker::new(10);
        b.failure("A", "x", None);
        b.failure("A", "x", None);
        b.success();
        assert!(b.failure("A", "x", None).is_none());
        assert!(b.failure("A", "x", None).is_none());
        assert!(b.failure("A", "x", None).is_some());
    }
}
