//! Roles (docs/concepts.md, Roles), ordered so that a higher role can do everything a lower
//! one can.

use serde::{Deserialize, Serialize};
use std::{fmt, str::FromStr};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads everything.
    Viewer,
    /// Enables, disables, runs, replays and starts bulk operations.
    Operator,
    /// Edits the catalog and manages users.
    Admin,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Viewer, Role::Operator, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }

    /// Whether this role may do what `required` allows.
    pub fn allows(self, required: Role) -> bool {
        self >= required
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "viewer" => Ok(Role::Viewer),
            "operator" => Ok(Role::Operator),
            "admin" => Ok(Role::Admin),
            other => Err(format!(
                "unknown role '{other}' (expected viewer, operator or admin)"
            )),
        }
    }
}

/// What a caller asks to do. Each operation's least role is written once, here
/// ([`Operation::least_role`]): the API's and the UI's doors check it before they read a
/// request's arguments, and the services check it again where the rule lives.
///
/// ```
/// use am_domain::roles::{Operation, Role};
/// assert!(Role::Operator.may(Operation::Run));
/// assert!(!Role::Operator.may(Operation::EditCatalog));
/// assert!(Role::Viewer.may(Operation::OwnAccess));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// Read the catalog (webhook URLs masked past their host), the runtime, the logs and the
    /// audit.
    Read,
    /// Change one's own password, API tokens and sessions.
    OwnAccess,
    /// Enable or disable an entity; clear a node's quarantine of a message.
    Toggle,
    /// Run a launch setting or a group now; rerun activations.
    Run,
    /// Interrupt active activations.
    Interrupt,
    /// Replay or delete dead letters; replay unrouted messages.
    HandleDeadLetters,
    /// Start a bulk operation (which also needs its own kind's operation: a bulk replay,
    /// [`Operation::HandleDeadLetters`]) or cancel one; act on a selection of entities at once.
    Bulk,
    /// Apply the broker topology now; sweep the activations in progress for consistency.
    Repair,
    /// Resend a notification; send a test one.
    Notify,
    /// Create, change and delete catalog entities; import a catalog; set a webhook secret.
    EditCatalog,
    /// Read what others see hidden: webhook URLs whole (they often hold credentials), the
    /// names typed at failed logins in the audit.
    ReadHidden,
    /// Create and change users, reset their passwords, see and revoke anyone's tokens.
    ManageUsers,
}

impl Operation {
    pub const ALL: [Operation; 12] = [
        Operation::Read,
        Operation::OwnAccess,
        Operation::Toggle,
        Operation::Run,
        Operation::Interrupt,
        Operation::HandleDeadLetters,
        Operation::Bulk,
        Operation::Repair,
        Operation::Notify,
        Operation::EditCatalog,
        Operation::ReadHidden,
        Operation::ManageUsers,
    ];

    /// The least role that may do it (docs/concepts.md, Roles).
    pub const fn least_role(self) -> Role {
        match self {
            Operation::Read | Operation::OwnAccess => Role::Viewer,
            Operation::Toggle
            | Operation::Run
            | Operation::Interrupt
            | Operation::HandleDeadLetters
            | Operation::Bulk
            | Operation::Repair
            | Operation::Notify => Role::Operator,
            Operation::EditCatalog | Operation::ReadHidden | Operation::ManageUsers => Role::Admin,
        }
    }
}

impl Role {
    /// Whether this role may do `operation`.
    pub const fn may(self, operation: Operation) -> bool {
        self as u8 >= operation.least_role() as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered() {
        assert!(Role::Admin.allows(Role::Operator));
        assert!(Role::Operator.allows(Role::Viewer));
        assert!(!Role::Viewer.allows(Role::Operator));
        assert_eq!("operator".parse::<Role>(), Ok(Role::Operator));
        assert!("root".parse::<Role>().is_err());
    }

    #[test]
    fn each_role_may_do_what_the_roles_below_it_may() {
        for op in Operation::ALL {
            let least = op.least_role();
            for role in Role::ALL {
                assert_eq!(role.may(op), role >= least, "{role} {op:?}");
            }
        }
        assert!(Role::Viewer.may(Operation::Read));
        assert!(!Role::Viewer.may(Operation::Toggle));
        assert!(!Role::Operator.may(Operation::ReadHidden));
        assert!(Role::Admin.may(Operation::ManageUsers));
    }
}
