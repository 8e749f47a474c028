//! Status names of activations and of their per-host dispatches, as stored.

/// Status of an activation (one run of a launch setting or of a group).
pub mod activation {
    /// No live node could take it yet.
    pub const WAITING: &str = "waiting";
    pub const DISPATCHED: &str = "dispatched";
    pub const RUNNING: &str = "running";
    pub const SUCCEEDED: &str = "succeeded";
    pub const FAILED: &str = "failed";
    pub const INTERRUPTED: &str = "interrupted";
    /// Refused by every node (overlap policy `skip`), or a group member after a failure.
    pub const SKIPPED: &str = "skipped";
    /// States from which an activation can still change.
    pub const ACTIVE: [&str; 3] = [WAITING, DISPATCHED, RUNNING];
}

/// Status of one dispatch of an activation to one host.
pub mod host {
    pub const DISPATCHED: &str = "dispatched";
    pub const ACCEPTED: &str = "accepted";
    pub const RUNNING: &str = "running";
    pub const SUCCEEDED: &str = "succeeded";
    pub const FAILED: &str = "failed";
    pub const INTERRUPTED: &str = "interrupted";
    pub const SKIPPED: &str = "skipped";
    /// No heartbeat within the work timeout.
    pub const LOST: &str = "lost";
    /// Not accepted in time; the activation went to another node with a new token.
    pub const SUPERSEDED: &str = "superseded";
    pub const ACTIVE: [&str; 3] = [DISPATCHED, ACCEPTED, RUNNING];
}

/// What a schedule group is doing (`schedule_groups.current_status`).
pub mod group {
    pub const WAITING: &str = "waiting";
    /// A fire of it is still running.
    pub const RUNNING: &str = "running";
    pub const DISABLED: &str = "disabled";
}

/// What a launch setting is doing (`launch_settings.current_status`).
pub mod launch_setting {
    pub const WAITING: &str = "waiting";
    /// An activation of it is still active.
    pub const RUNNING: &str = "running";
    pub const DISABLED: &str = "disabled";
}

/// What started an activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// A schedule group's cron fire.
    Schedule,
    /// A fire missed while no manager ran, fired late per the group's misfire policy.
    Misfire,
    /// An operator pressed *Run now*.
    Manual,
    /// A stream launch setting kept running.
    Stream,
    /// A member of a group activation.
    Group,
    /// An operator re-ran a failed activation from where it broke.
    Rerun,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Schedule => "schedule",
            Trigger::Misfire => "misfire",
            Trigger::Manual => "manual",
            Trigger::Stream => "stream",
            Trigger::Group => "group",
            Trigger::Rerun => "rerun",
        }
    }
}
