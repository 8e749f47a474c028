//! What each server function does, as the operation whose least role it needs
//! (`am_domain::roles::Operation`), checked at the server functions' door before a byte of its
//! arguments is read (server/src/ui_door.rs): a viewer calling an operator's or an admin's
//! function is refused 403, never told which of its arguments were malformed. The function
//! checks the same operation again where it acts. A test reads every server function's first
//! `require(Operation::…)` and keeps this table equal to them, and every registered function
//! in it.

use am_domain::roles::Operation;

/// Who may call a server function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// Anyone, signed in or not (the login form, logging out).
    Anyone,
    /// A signed-in user whose role may do this operation.
    May(Operation),
}

/// Every server function by endpoint (its path after `/ui/`), with who may call it.
pub const OPERATIONS: &[(&str, Caller)] = {
    use Caller::{Anyone, May};
    use Operation::{
        Bulk, EditCatalog, HandleDeadLetters, Interrupt, ManageUsers, Notify, OwnAccess, Read,
        Repair, Run, Toggle,
    };
    &[
        ("activation_detail", May(Read)),
        ("activation_summary", May(Read)),
        ("application_publication", May(Read)),
        ("audit", May(Read)),
        ("broker_status", May(Read)),
        ("bulk_act", May(Bulk)),
        ("cancel_operation", May(Bulk)),
        ("catalog_list", May(Read)),
        ("change_password", May(OwnAccess)),
        ("classifier_labels", May(Read)),
        ("clear_quarantine", May(Toggle)),
        ("create_token", May(OwnAccess)),
        ("create_user", May(ManageUsers)),
        ("dashboard", May(Read)),
        ("data_queue_unrouted", May(Read)),
        ("dead_letter", May(Read)),
        ("dead_letters", May(Read)),
        ("dead_letters_bulk", May(HandleDeadLetters)),
        ("delete_entity", May(EditCatalog)),
        ("disabled_entities", May(Read)),
        ("failure_logs", May(Read)),
        ("health", May(Read)),
        ("interrupt_activation", May(Interrupt)),
        ("interrupt_count", May(Interrupt)),
        ("interrupt_matching", May(Interrupt)),
        ("launch_setting_overview", May(Read)),
        ("list_activations", May(Read)),
        ("list_nodes", May(Read)),
        ("list_operations", May(Read)),
        ("list_sessions", May(OwnAccess)),
        ("load_catalog_view", May(Read)),
        ("login", Anyone),
        ("logout", Anyone),
        ("notification", May(Read)),
        ("notifications", May(Read)),
        ("operation", May(Read)),
        ("reconcile_now", May(Repair)),
        ("reenable", May(Toggle)),
        ("replay_preview", May(HandleDeadLetters)),
        ("replay_unrouted", May(HandleDeadLetters)),
        ("rerun_activation", May(Run)),
        ("rerun_activations", May(Run)),
        ("rerun_count", May(Run)),
        ("resend_notification", May(Notify)),
        ("reset_password", May(ManageUsers)),
        ("revoke_session", May(OwnAccess)),
        ("revoke_token", May(OwnAccess)),
        ("run_now", May(Run)),
        ("run_status", May(Read)),
        ("save_entity", May(EditCatalog)),
        ("save_launch_setting", May(EditCatalog)),
        ("schema_drift", May(Read)),
        ("search", May(Read)),
        ("search_classifier", May(Read)),
        ("send_test_notification", May(Notify)),
        ("server_now", May(Read)),
        ("set_enabled", May(Toggle)),
        ("set_webhook_secret", May(EditCatalog)),
        ("start_sweep", May(Repair)),
        ("tokens", May(OwnAccess)),
        ("update_user", May(ManageUsers)),
        ("users", May(Read)),
        ("whoami", May(Read)),
    ]
};

/// Who may call the server function at `path` (`/ui/run_now`); `None` for a path that names
/// no server function.
///
/// ```
/// use am_domain::roles::Operation;
/// use app::api::server_fn_operations::{Caller, caller_of};
/// assert_eq!(caller_of("/ui/run_now"), Some(Caller::May(Operation::Run)));
/// assert_eq!(caller_of("/ui/login"), Some(Caller::Anyone));
/// assert_eq!(caller_of("/ui/nope"), None);
/// ```
pub fn caller_of(path: &str) -> Option<Caller> {
    let endpoint = path.strip_prefix("/ui/")?;
    OPERATIONS
        .iter()
        .find(|(e, _)| *e == endpoint)
        .map(|(_, c)| *c)
}
