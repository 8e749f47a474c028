//! The catalog rules (docs/concepts.md, Catalog rules), checked on the whole catalog at once.
//!
//! The server applies a single change to a copy of the catalog and validates the result, so
//! there is one place for every rule, including the ones that span entities. Every broken rule
//! is reported, in document order, with a path such as `launch_settings[3].parameters.org_id`.

mod entities;
mod launch;
pub mod limits;

use crate::{
    ValidationErrors,
    catalog::{CATALOG_FORMAT_VERSION, Catalog, Concurrency},
    usage::EntityRef,
};
use std::collections::BTreeMap;

pub use crate::ids::{
    validate_exchange_name, validate_host_name, validate_id, validate_webhook_url,
};

/// Checks every rule and reports every broken one.
pub fn validate_catalog(catalog: &Catalog) -> Result<(), ValidationErrors> {
    let mut errors = ValidationErrors::new();
    if catalog.version != CATALOG_FORMAT_VERSION {
        errors.push(
            "version",
            format!(
                "catalog format version {} is not supported (expected {CATALOG_FORMAT_VERSION})",
                catalog.version
            ),
        );
    }
    if !limits::check(catalog, &mut errors) {
        return errors.into_result();
    }
    entities::applications(catalog, &mut errors);
    entities::pools(catalog, &mut errors);
    entities::data_queues(catalog, &mut errors);
    entities::classifiers(catalog, &mut errors);
    entities::agents(catalog, &mut errors);
    launch::launch_settings(catalog, &mut errors);
    launch::schedule_groups(catalog, &mut errors);
    errors.into_result()
}

/// Where `entity` sits in the catalog document, e.g. `launch_settings[3]`; lets the server turn
/// catalog paths into paths relative to the entity being edited.
pub fn entity_path(catalog: &Catalog, entity: &EntityRef) -> Option<String> {
    let (list, index) = match entity {
        EntityRef::Application(id) => (
            "applications",
            catalog.applications.iter().position(|a| a.id == *id),
        ),
        EntityRef::Pool(id) => ("pools", catalog.pools.iter().position(|p| p.id == *id)),
        EntityRef::DataQueue(id) => (
            "data_queues",
            catalog.data_queues.iter().position(|q| q.id == *id),
        ),
        EntityRef::Agent { application, id } => (
            "agents",
            catalog
                .agents
                .iter()
                .position(|a| a.application == *application && a.id == *id),
        ),
        EntityRef::Classifier { application, name } => (
            "classifiers",
            catalog
                .classifiers
                .iter()
                .position(|c| c.application == *application && c.name == *name),
        ),
        EntityRef::LaunchSetting(id) => (
            "launch_settings",
            catalog.launch_settings.iter().position(|l| l.id == *id),
        ),
        EntityRef::ScheduleGroup(id) => (
            "schedule_groups",
            catalog.schedule_groups.iter().position(|g| g.id == *id),
        ),
    };
    index.map(|i| format!("{list}[{i}]"))
}

/// Remembers the first index of each key so duplicates can name it.
struct FirstSeen<K>(BTreeMap<K, usize>);

impl<K: Ord> FirstSeen<K> {
    fn new() -> Self {
        Self(BTreeMap::new())
    }

    /// `Some(first index)` when `key` was seen before; otherwise records it at `index`.
    fn check(&mut self, key: K, index: usize) -> Option<usize> {
        match self.0.get(&key) {
            Some(first) => Some(*first),
            None => {
                self.0.insert(key, index);
                None
            }
        }
    }
}

fn check_id(errors: &mut ValidationErrors, path: String, id: &str) {
    if let Err(e) = validate_id(id) {
        errors.push(path, e);
    }
}

/// A channel's chosen events: each once, and not `test` (a *Send test* always goes).
/// The rules of an entity's notification channels at `at` (`applications[0]`).
fn check_channels(errors: &mut ValidationErrors, at: &str, c: &crate::catalog::Channels) {
    if let Some(Err(e)) = c.webhook_url.as_deref().map(validate_webhook_url) {
        errors.push(format!("{at}.webhook_url"), e);
    }
    if let Some(Err(e)) = c
        .notify_email
        .as_deref()
        .map(crate::notify::email_recipients)
    {
        errors.push(format!("{at}.notify_email"), e);
    }
    check_events(errors, &format!("{at}.webhook_events"), &c.webhook_events);
    check_events(errors, &format!("{at}.email_events"), &c.email_events);
}

fn check_events(errors: &mut ValidationErrors, path: &str, events: &[crate::notify::Event]) {
    let mut seen = FirstSeen::new();
    for (i, e) in events.iter().enumerate() {
        if *e == crate::notify::Event::Test {
            errors.push(
                format!("{path}[{i}]"),
                "test is not an event to choose: a Send test always reaches the channel",
            );
        } else if let Some(first) = seen.check(e.as_str(), i) {
            errors.push(
                format!("{path}[{i}]"),
                format!("{} is already chosen at {path}[{first}]", e.as_str()),
            );
        }
    }
}

fn concurrency_name(c: Concurrency) -> &'static str {
    match c {
        Concurrency::Any => "ANY",
        Concurrency::Many => "MANY",
    }
}

fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("'{i}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
