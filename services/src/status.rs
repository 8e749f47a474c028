//! The runtime's status words as `&str` constants for the query builder and the stored rows,
//! each taken from its domain enum (`am_domain::status`), where the word is written once.

pub use am_domain::status::Trigger;

/// Status of an activation (one run of a launch setting or of a group).
pub mod activation {
    use am_domain::status::ActivationStatus as S;

    /// No live node could take it yet.
    pub const WAITING: &str = S::Waiting.as_str();
    pub const DISPATCHED: &str = S::Dispatched.as_str();
    pub const RUNNING: &str = S::Running.as_str();
    pub const SUCCEEDED: &str = S::Succeeded.as_str();
    pub const FAILED: &str = S::Failed.as_str();
    pub const INTERRUPTED: &str = S::Interrupted.as_str();
    /// Refused by every node (overlap policy `skip`), or a group member after a failure.
    pub const SKIPPED: &str = S::Skipped.as_str();
    /// States from which an activation can still change.
    pub const ACTIVE: [&str; 3] = [WAITING, DISPATCHED, RUNNING];
}

/// Status of one dispatch of an activation to one host.
pub mod host {
    use am_domain::status::HostStatus as S;

    pub const DISPATCHED: &str = S::Dispatched.as_str();
    pub const ACCEPTED: &str = S::Accepted.as_str();
    pub const RUNNING: &str = S::Running.as_str();
    pub const SUCCEEDED: &str = S::Succeeded.as_str();
    pub const FAILED: &str = S::Failed.as_str();
    pub const INTERRUPTED: &str = S::Interrupted.as_str();
    pub const SKIPPED: &str = S::Skipped.as_str();
    /// No heartbeat within the work timeout.
    pub const LOST: &str = S::Lost.as_str();
    /// Not accepted in time; the activation went to another node with a new token.
    pub const SUPERSEDED: &str = S::Superseded.as_str();
    pub const ACTIVE: [&str; 3] = [DISPATCHED, ACCEPTED, RUNNING];
}

/// What a schedule group or a launch setting is doing (their `current_status`).
pub mod current {
    use am_domain::status::CurrentStatus as S;

    pub const WAITING: &str = S::Waiting.as_str();
    /// A run of it (for a group: a fire) is still active.
    pub const RUNNING: &str = S::Running.as_str();
    pub const DISABLED: &str = S::Disabled.as_str();
}

/// What a schedule group is doing (`schedule_groups.current_status`).
pub mod group {
    pub use super::current::*;
}

/// What a launch setting is doing (`launch_settings.current_status`).
pub mod launch_setting {
    pub use super::current::*;
}
