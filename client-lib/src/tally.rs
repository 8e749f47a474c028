//! Message counters, of a launch setting on this node or of one activation: what heartbeats
//! and a run's end report.

use am_domain::wire::Counters;
use std::sync::atomic::{AtomicU64, Ordering};

/// Message counters: of a launch setting on this node, or of one activation.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) processed: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) retried: AtomicU64,
    pub(crate) dead_lettered: AtomicU64,
}

impl Tally {
    pub(crate) fn counters(&self) -> Counters {
        Counters {
            processed: self.processed.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            retried: self.retried.load(Ordering::Relaxed),
            dead_lettered: self.dead_lettered.load(Ordering::Relaxed),
        }
    }
}
