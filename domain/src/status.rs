//! The runtime's vocabularies: the status of an activation and of each of its dispatches to a
//! host, what a launch setting or schedule group is doing, what started an activation, the
//! state of a node, the kinds of recovery, the state of a bulk operation and of a dead letter. Each word is written once, here; the database
//! stores it, the API and the pages show it.

use crate::words::words;

words! {
    /// Status of an activation (one run of a launch setting or of a group).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum ActivationStatus {
        /// No live node could take it yet.
        Waiting = "waiting",
        Dispatched = "dispatched",
        Running = "running",
        Succeeded = "succeeded",
        Failed = "failed",
        Interrupted = "interrupted",
        /// Refused by every node (overlap policy `skip`), or a group member after a failure.
        Skipped = "skipped",
    }
}

impl ActivationStatus {
    /// The statuses from which an activation can still change.
    pub const ACTIVE: [ActivationStatus; 3] = [
        ActivationStatus::Waiting,
        ActivationStatus::Dispatched,
        ActivationStatus::Running,
    ];

    pub fn is_active(self) -> bool {
        Self::ACTIVE.contains(&self)
    }
}

words! {
    /// Status of one dispatch of an activation to one host.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum HostStatus {
        Dispatched = "dispatched",
        Accepted = "accepted",
        Running = "running",
        Succeeded = "succeeded",
        Failed = "failed",
        Interrupted = "interrupted",
        Skipped = "skipped",
        /// No heartbeat within the work timeout.
        Lost = "lost",
        /// Not accepted in time; the activation went to another node with a new token.
        Superseded = "superseded",
    }
}

impl HostStatus {
    /// The statuses from which a dispatch can still change.
    pub const ACTIVE: [HostStatus; 3] = [
        HostStatus::Dispatched,
        HostStatus::Accepted,
        HostStatus::Running,
    ];
}

words! {
    /// What an entry of an activation's timeline says happened (`activation_events.kind`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum EventKind {
        /// No live node could take it: it waits for one.
        Waiting = "waiting",
        Dispatched = "dispatched",
        /// A waiting activation got a node.
        DispatchedAfterWaiting = "dispatched after waiting",
        /// Moved to another node, with why.
        Redispatched = "re-dispatched",
        /// A stream run reached a node of its pool that came up, with why.
        Joined = "joined",
        Accepted = "accepted",
        Started = "started",
        Progress = "progress",
        Skipped = "skipped",
        Succeeded = "succeeded",
        Failed = "failed",
        Interrupted = "interrupted",
        /// The activation ended (its result in the detail).
        Finished = "finished",
        /// No heartbeat within the work timeout.
        Lost = "lost",
        /// Its launch command, missing from the outbox, was written again.
        Relaunched = "relaunched",
        StopRequested = "stop-requested",
        InterruptRequested = "interrupt-requested",
        BreakerTripped = "breaker-tripped",
        /// A report with an outdated fencing token, ignored.
        StaleReport = "stale-report",
        /// On the original: it was re-run.
        Rerun = "rerun",
        /// On the re-run: what it re-runs.
        RerunOf = "rerun-of",
        /// On a group's re-run: the member it starts from.
        RerunFrom = "rerun-from",
    }
}

/// A timeline entry's kind as stored: its word, and for some kinds why, as `word: reason`
/// (`re-dispatched: h1 did not accept the launch in time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventLabel<'a> {
    pub kind: EventKind,
    pub reason: Option<&'a str>,
}

impl EventKind {
    /// This kind with why it happened.
    pub fn because(self, reason: &str) -> EventLabel<'_> {
        EventLabel {
            kind: self,
            reason: Some(reason),
        }
    }
}

impl From<EventKind> for EventLabel<'_> {
    fn from(kind: EventKind) -> Self {
        EventLabel { kind, reason: None }
    }
}

impl EventLabel<'_> {
    /// Between the word and why, as stored.
    const SEPARATOR: &'static str = ": ";

    /// A stored label read back: its word, and why for a kind that carries a reason (the word
    /// as stored, so an entry of a word this version does not know still reads).
    pub fn split(stored: &str) -> (&str, Option<&str>) {
        match stored.split_once(Self::SEPARATOR) {
            Some((word, reason)) => (word, Some(reason)),
            None => (stored, None),
        }
    }
}

impl std::fmt::Display for EventLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.reason {
            Some(r) => write!(f, "{}{}{r}", self.kind, Self::SEPARATOR),
            None => f.write_str(self.kind.as_str()),
        }
    }
}

words! {
    /// What a launch setting or a schedule group is doing (their `current_status`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum CurrentStatus {
        Waiting = "waiting",
        /// A run of it (for a group: a fire) is still active.
        Running = "running",
        Disabled = "disabled",
    }
}

words! {
    /// What started an activation.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum Trigger {
        /// A schedule group's cron fire.
        Schedule = "schedule",
        /// A fire missed while no manager ran, fired late per the group's misfire policy.
        Misfire = "misfire",
        /// An operator pressed *Run now*.
        Manual = "manual",
        /// A stream launch setting kept running.
        Stream = "stream",
        /// A member of a group activation.
        Group = "group",
        /// An operator re-ran a failed activation from where it broke.
        Rerun = "rerun",
    }
}

words! {
    /// State of a node (`nodes.status`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum NodeStatus {
        /// Heard from recently.
        Live = "live",
        /// The watchdog gave up on it.
        Lost = "lost",
    }
}

words! {
    /// The kinds of recovery, as stored and as `/metrics` labels them.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum RecoveryKind {
        /// A launch not accepted within the start timeout.
        StartTimeout = "start_timeout",
        /// A run without heartbeat within the work timeout.
        Lost = "lost",
        /// A run moved to another node (after a start timeout, or restarted after it was lost).
        Redispatch = "redispatch",
        /// A report with an outdated fencing token, ignored.
        StaleReport = "stale_report",
        /// A host its `MANY` breaker quarantined.
        Quarantine = "quarantine",
    }
}

words! {
    /// State of a bulk operation.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum OperationStatus {
        Queued = "queued",
        Running = "running",
        /// Every selected item was processed without error.
        Succeeded = "succeeded",
        /// Finished, but some items failed.
        Failed = "failed",
        Cancelled = "cancelled",
    }
}

impl OperationStatus {
    /// Not finished yet.
    pub const ACTIVE: [OperationStatus; 2] = [OperationStatus::Queued, OperationStatus::Running];

    pub fn is_active(self) -> bool {
        Self::ACTIVE.contains(&self)
    }
}

words! {
    /// What became of a dead letter (`dead_letters.status`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum DeadLetterStatus {
        /// Waiting to be replayed or deleted.
        Dead = "dead",
        /// Sent back to its launch setting's subscription.
        Replayed = "replayed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_stored_as_its_word_and_why_after_a_colon() {
        assert_eq!(EventLabel::from(EventKind::Lost).to_string(), "lost");
        assert_eq!(
            EventKind::Redispatched
                .because("h1 did not accept the launch in time")
                .to_string(),
            "re-dispatched: h1 did not accept the launch in time"
        );
        let stored = EventKind::Redispatched.because("node lost").to_string();
        assert_eq!(
            EventLabel::split(&stored),
            ("re-dispatched", Some("node lost"))
        );
        assert_eq!(EventLabel::split("accepted"), ("accepted", None));
        // The host results are the host statuses' words: one vocabulary.
        for (kind, status) in [
            (EventKind::Succeeded, HostStatus::Succeeded),
            (EventKind::Failed, HostStatus::Failed),
            (EventKind::Interrupted, HostStatus::Interrupted),
            (EventKind::Skipped, HostStatus::Skipped),
        ] {
            assert_eq!(kind.as_str(), status.as_str());
        }
    }

    #[test]
    fn the_active_statuses_are_the_ones_not_ended() {
        let active: Vec<_> = ActivationStatus::ALL
            .iter()
            .filter(|s| s.is_active())
            .map(|s| s.as_str())
            .collect();
        assert_eq!(active, ["waiting", "dispatched", "running"]);
        assert_eq!(
            HostStatus::parse("superseded"),
            Some(HostStatus::Superseded)
        );
        assert_eq!(RecoveryKind::StartTimeout.as_str(), "start_timeout");
    }
}
