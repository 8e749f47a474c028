//! The broker side of the replays: the port the server implements (publishing dead letters back
//! to their subscriptions, moving unrouted messages to their exchange).

use std::future::Future;

/// The broker side of the replays, implemented by the server.
pub trait ReplayBroker: Send + Sync {
    /// Publishes dead letters back to their launch settings' subscriptions; one result per
    /// row, in order.
    fn publish(
        &self,
        rows: &[crate::entity::dead_letters::Model],
        replayed_by: &str,
    ) -> impl Future<Output = Vec<Result<(), String>>> + Send;

    /// Moves up to `max` messages, oldest first, from the unrouted queue of data queue
    /// `data_queue` to its exchange `address`, each acknowledged only once the broker
    /// confirmed its copy.
    fn replay_unrouted(
        &self,
        data_queue: &str,
        address: &str,
        max: u64,
        replayed_by: &str,
    ) -> impl Future<Output = UnroutedBatch> + Send;
}

/// What one batch of an unrouted replay did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnroutedBatch {
    /// Messages moved to the exchange (confirmed, then acknowledged): fewer than asked when
    /// the unrouted queue ran empty or `error` stopped the batch.
    pub moved: u64,
    /// What stopped the batch early; the messages not moved stay in the unrouted queue.
    pub error: Option<String>,
}
