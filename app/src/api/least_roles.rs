//! The least role each server function needs, checked at the server functions' door before a
//! byte of its arguments is read (server/src/ui_door.rs): a viewer calling an operator's or
//! an admin's function is refused 403, never told which of its arguments were malformed. The
//! function checks the role again where it acts. A test reads every server function's first
//! `require(Role::…)` and keeps this table equal to them, and every registered function in it.

use am_domain::roles::Role;

/// Who may call a server function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// Anyone, signed in or not (the login form, logging out).
    Anyone,
    /// A signed-in user with at least this role.
    AtLeast(Role),
}

/// Every server function by endpoint (its path after `/ui/`), with who may call it.
pub const LEAST_ROLES: &[(&str, Caller)] = {
    use Caller::{Anyone, AtLeast};
    use Role::{Admin, Operator, Viewer};
    &[
        ("activation_detail", AtLeast(Viewer)),
        ("activation_summary", AtLeast(Viewer)),
        ("application_publication", AtLeast(Viewer)),
        ("audit", AtLeast(Viewer)),
        ("broker_status", AtLeast(Viewer)),
        ("bulk_act", AtLeast(Operator)),
        ("cancel_operation", AtLeast(Operator)),
        ("catalog_list", AtLeast(Viewer)),
        ("change_password", AtLeast(Viewer)),
        ("classifier_labels", AtLeast(Viewer)),
        ("clear_quarantine", AtLeast(Operator)),
        ("create_token", AtLeast(Viewer)),
        ("create_user", AtLeast(Admin)),
        ("dashboard", AtLeast(Viewer)),
        ("data_queue_unrouted", AtLeast(Viewer)),
        ("dead_letter", AtLeast(Viewer)),
        ("dead_letters", AtLeast(Viewer)),
        ("dead_letters_bulk", AtLeast(Operator)),
        ("delete_entity", AtLeast(Admin)),
        ("disabled_entities", AtLeast(Viewer)),
        ("failure_logs", AtLeast(Viewer)),
        ("health", AtLeast(Viewer)),
        ("interrupt_activation", AtLeast(Operator)),
        ("interrupt_count", AtLeast(Operator)),
        ("interrupt_matching", AtLeast(Operator)),
        ("launch_setting_overview", AtLeast(Viewer)),
        ("list_activations", AtLeast(Viewer)),
        ("list_nodes", AtLeast(Viewer)),
        ("list_operations", AtLeast(Viewer)),
        ("list_sessions", AtLeast(Viewer)),
        ("load_catalog_view", AtLeast(Viewer)),
        ("login", Anyone),
        ("logout", Anyone),
        ("notification", AtLeast(Viewer)),
        ("notifications", AtLeast(Viewer)),
        ("operation", AtLeast(Viewer)),
        ("reconcile_now", AtLeast(Operator)),
        ("reenable", AtLeast(Operator)),
        ("replay_preview", AtLeast(Operator)),
        ("replay_unrouted", AtLeast(Operator)),
        ("rerun_activation", AtLeast(Operator)),
        ("rerun_activations", AtLeast(Operator)),
        ("rerun_count", AtLeast(Operator)),
        ("resend_notification", AtLeast(Operator)),
        ("reset_password", AtLeast(Admin)),
        ("revoke_session", AtLeast(Viewer)),
        ("revoke_token", AtLeast(Viewer)),
        ("run_now", AtLeast(Operator)),
        ("run_status", AtLeast(Viewer)),
        ("save_entity", AtLeast(Admin)),
        ("save_launch_setting", AtLeast(Admin)),
        ("schema_drift", AtLeast(Viewer)),
        ("search", AtLeast(Viewer)),
        ("search_classifier", AtLeast(Viewer)),
        ("send_test_notification", AtLeast(Operator)),
        ("server_now", AtLeast(Viewer)),
        ("set_enabled", AtLeast(Operator)),
        ("set_webhook_secret", AtLeast(Admin)),
        ("start_sweep", AtLeast(Operator)),
        ("tokens", AtLeast(Viewer)),
        ("update_user", AtLeast(Admin)),
        ("users", AtLeast(Viewer)),
        ("whoami", AtLeast(Viewer)),
    ]
};

/// Who may call the server function at `path` (`/ui/run_now`); `None` for a path that names
/// no server function.
///
/// ```
/// use am_domain::roles::Role;
/// use app::api::least_roles::{Caller, caller_of};
/// assert_eq!(caller_of("/ui/run_now"), Some(Caller::AtLeast(Role::Operator)));
/// assert_eq!(caller_of("/ui/login"), Some(Caller::Anyone));
/// assert_eq!(caller_of("/ui/nope"), None);
/// ```
pub fn caller_of(path: &str) -> Option<Caller> {
    let endpoint = path.strip_prefix("/ui/")?;
    LEAST_ROLES
        .iter()
        .find(|(e, _)| *e == endpoint)
        .map(|(_, c)| *c)
}
