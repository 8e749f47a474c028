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
    ) -> impl Future<Output = Vec<Result<(), ReplayError>>> + Send;

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
    pub error: Option<ReplayError>,
}

/// What the broker answered when a replayed message could not be handed over. The text is what
/// an operation's errors show the operator, so each says where the message was going. `detail`
/// is the broker client's own words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("the broker is not reachable")]
    Unreachable,
    #[error("the manager is stopping")]
    Stopping,
    #[error("cannot open a broker channel: {0}")]
    NoChannel(String),
    #[error("cannot enable publisher confirms: {0}")]
    NoConfirms(String),
    /// The dead letter was recorded without a launch setting (its consumer did not say).
    #[error(
        "dead letter {0} names no launch setting, so there is no subscription to send it back to"
    )]
    NoLaunchSetting(i64),
    /// The message was published mandatory and came back: nothing is bound under that name.
    #[error(
        "subscription `{0}` does not exist (no node has run the launch setting on this broker yet, or it was deleted)"
    )]
    NoSubscription(String),
    #[error("cannot publish to the broker: {0}")]
    Publish(String),
    #[error("cannot publish to exchange `{exchange}`: {detail}")]
    PublishToExchange { exchange: String, detail: String },
    /// The broker stopped taking messages for the whole batch's time limit (a resource alarm
    /// blocks publishers).
    #[error("the broker took no message for {0} s (is it blocking publishers?)")]
    Blocked(u64),
    #[error("the broker refused the message for subscription `{0}`")]
    Refused(String),
    #[error("the broker refused a message for exchange `{0}`")]
    RefusedByExchange(String),
    #[error("the broker did not confirm the message for `{queue}` within {secs} s")]
    Unconfirmed { queue: String, secs: u64 },
    #[error("the broker did not confirm within {0} s")]
    BatchUnconfirmed(u64),
    #[error("the broker did not confirm the message for `{queue}`: {detail}")]
    ConfirmLost { queue: String, detail: String },
    #[error("the broker lost a message: {0}")]
    Lost(String),
    #[error("cannot take from the unrouted queue `{queue}`: {detail}")]
    CannotTake { queue: String, detail: String },
    #[error("the broker gave no message of `{0}` in time")]
    NothingInTime(String),
    /// The channel closed before the message was acknowledged or put back.
    #[error("cannot settle a message of `{queue}`: {detail}")]
    CannotSettle { queue: String, detail: String },
}
