//! Since when this replica has read node reports without a break: the watchdog takes a node's
//! silence for a loss only after a whole node timeout of it (`watchdog::Listening`).

use am_services::runtime::watchdog::Listening;
use std::{
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, Instant},
};

/// Shared by the report consumer, which turns it on while it reads and stores reports, and the
/// watchdog, which asks how long that has been.
#[derive(Debug, Clone, Default)]
pub struct Hearing(Arc<Mutex<Option<Instant>>>);

impl Hearing {
    /// Reports are being read and stored (again); the first call after a break starts the
    /// count.
    pub fn on(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert_with(Instant::now);
    }

    /// Reading stopped (the consumer ended, a batch cannot be stored).
    pub fn off(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Whether reports were read without a break for at least `node_timeout`.
    pub fn listening(&self, node_timeout: Duration) -> Listening {
        let since = *self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match since {
            Some(t) if t.elapsed() >= node_timeout => Listening::Long,
            _ => Listening::NotLongEnough,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_break_starts_the_count_again() {
        let h = Hearing::default();
        assert_eq!(h.listening(Duration::ZERO), Listening::NotLongEnough);
        h.on();
        assert_eq!(h.listening(Duration::ZERO), Listening::Long);
        assert_eq!(
            h.listening(Duration::from_secs(60)),
            Listening::NotLongEnough
        );
        h.off();
        assert_eq!(h.listening(Duration::ZERO), Listening::NotLongEnough);
    }
}
