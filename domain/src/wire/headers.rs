//! The AMQP header names nodes and the manager read and write on data messages, dead letters
//! and quarantined commands (docs/protocol.md, Data messages), and the error type and host the
//! manager's own dead letters name.

/// Header with our own attempt counter on data messages (1 = first delivery). We keep our own
/// because `x-death` is not chronological and no longer updated for republished messages.
pub const ATTEMPT_HEADER: &str = "x-am-attempt";
/// Header with the time of the first failure of a data message (RFC 3339).
pub const FIRST_FAILURE_HEADER: &str = "x-am-first-failure";
/// Header counting a data message's answers "temporarily unavailable": such answers are not
/// delivery attempts, so [`ATTEMPT_HEADER`] does not count them.
pub const UNAVAILABLE_HEADER: &str = "x-am-unavailable";
/// Header with the time of a data message's first answer "temporarily unavailable" (RFC
/// 3339): its launch setting's `unavailable_for` budget counts from then.
pub const UNAVAILABLE_SINCE_HEADER: &str = "x-am-unavailable-since";
/// Header on messages that went through the sump once (dead-letter policy `park`): the next
/// give-up sends them to the dead-letter queue.
pub const PARKED_HEADER: &str = "x-am-parked";
/// Dead-letter headers (docs/concepts.md, Dead letters): the data queue the message came from.
pub const DL_DATA_QUEUE_HEADER: &str = "x-am-data-queue";
/// Dead-letter header: the launch setting (subscription) that gave up on the message.
pub const DL_LAUNCH_SETTING_HEADER: &str = "x-am-launch-setting";
/// Dead-letter header: how many times the message was delivered.
pub const DL_ATTEMPTS_HEADER: &str = "x-am-attempts";
/// Dead-letter header: error type of the last failure.
pub const DL_ERROR_TYPE_HEADER: &str = "x-am-last-error-type";
/// Dead-letter header: message of the last failure.
pub const DL_ERROR_MESSAGE_HEADER: &str = "x-am-last-error-message";
/// Dead-letter header: time of the last failure (RFC 3339).
pub const DL_LAST_FAILURE_HEADER: &str = "x-am-last-failure";
/// Dead-letter header: host of the node that gave up.
pub const DL_HOST_HEADER: &str = "x-am-host";
/// Dead-letter header: the queue the message was consumed from (a launch setting's
/// subscription, or the shared queue of a `queue` data queue); a replay sends it back there.
pub const DL_QUEUE_HEADER: &str = "x-am-queue";
/// Header on a dead letter the manager sent back to its subscription: who replayed it. A
/// replay is a fresh start (attempt 1, no dead-letter or parked headers); this header and the
/// next one say where the message has been.
pub const REPLAYED_BY_HEADER: &str = "x-am-replayed-by";
/// Header on a replayed dead letter: when it was replayed (RFC 3339).
pub const REPLAYED_AT_HEADER: &str = "x-am-replayed-at";
/// Header on quarantined control messages: why they were rejected.
pub const QUARANTINE_REASON_HEADER: &str = "x-am-quarantine-reason";
/// Header on a message the manager moved to the dead-letter queue from a queue the catalog no
/// longer wants (a deleted launch setting or data queue): why.
pub const REMOVED_REASON_HEADER: &str = "x-am-removed-reason";
/// The error type of such a dead letter, as the dead-letter pages show it.
pub const QUEUE_REMOVED_ERROR: &str = "QueueRemoved";
/// The host such a dead letter names: the manager, not a node, gave up on it.
pub const MANAGER_HOST: &str = "agent-manager";
