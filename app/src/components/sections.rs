//! The admin UI's sections: the menu lists them, page titles are named after them.

/// Sections of the admin UI, in the order operators use them.
pub const SECTIONS: &[(&str, &str)] = &[
    ("/", "Dashboard"),
    ("/applications", "Applications"),
    ("/nodes", "Nodes"),
    ("/pools", "Pools"),
    ("/data-queues", "Data queues"),
    ("/broker", "Broker"),
    ("/agents", "Agents"),
    ("/launch-settings", "Launch settings"),
    ("/schema-drift", "Schema drift"),
    ("/schedule-groups", "Schedule groups"),
    ("/activations", "Activations"),
    ("/failures", "Failure logs"),
    ("/dead-letters", "Dead letters"),
    ("/operations", "Operations"),
    ("/notifications", "Notifications"),
    ("/audit", "Audit log"),
    ("/users", "Users"),
];
