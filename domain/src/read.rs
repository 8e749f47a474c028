//! Read models: what the manager answers about runs, failures, dead letters, bulk operations,
//! nodes, the broker and accounts, declared once and sent as they are by the JSON API (with
//! their OpenAPI schemas, feature `openapi`) and by the admin UI's server functions, whose pages
//! format them in the browser and on the server alike ([`crate::display`]).

pub mod accounts;
pub mod activations;
pub mod audit;
pub mod broker;
pub mod dead_letters;
pub mod depths;
pub mod failures;
pub mod nodes;
pub mod notifications;
pub mod operations;
pub mod overview;
pub mod run_status;
pub mod search;

/// Whether none of `fields` filters: each is missing or blank (filters' blank means none).
fn all_blank(fields: &[&Option<String>]) -> bool {
    fields
        .iter()
        .all(|f| f.as_deref().is_none_or(|v| v.trim().is_empty()))
}
