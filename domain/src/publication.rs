//! What a node's publication does to the catalog (docs/concepts.md, Agents), and where the
//! schemas nodes publish disagree with the parameters operators saved.
//!
//! A publication brings agents and classifiers as the application's code describes them. The
//! first publication of an agent creates it in the catalog with the suggested concurrency,
//! overlap policy and data queue; later ones update only what the code owns (title, input kind,
//! parameter schema) and never what operators set. Classifiers are replaced whole.
//!
//! The catalog stays valid whatever a node sends: a change that would break a rule (a schema
//! that drops a parameter a launch setting uses, a classifier that loses a code in use) is
//! [refused](Refused) and the rest is taken. A messages agent whose suggested data queue does not
//! exist is taken without one, flagged until an operator picks it ([`Agent::needs_data_queue`]).
//! The published schema is still remembered by the manager, so [`schema_drift`] can show
//! operators which launch settings no longer fit the code.
//!
//! ```
//! use am_domain::{catalog::*, publication::merge, wire::{Publication, PublishedAgent}};
//! let mut catalog = Catalog::new();
//! catalog.pools.push(Pool { id: "p".into(), title: String::new(), hosts: vec![] });
//! catalog.applications.push(Application {
//!     id: "billing".into(), title: String::new(), default_pool: "p".into(),
//!     channels: Default::default(),
//! });
//! let publication = Publication {
//!     application: "billing".into(), host: "h1".into(), version: "1.0".into(), capacity: 4,
//!     agents: vec![PublishedAgent {
//!         id: "export".into(), title: "Export".into(), input: InputKind::Standalone,
//!         parameters: vec![], suggested_data_queue: None,
//!         suggested_concurrency: Some(Concurrency::Many), suggested_overlap: None,
//!     }],
//!     classifiers: vec![],
//!     protocol: am_domain::wire::PROTOCOL_VERSION,
//! };
//! let merged = merge(&catalog, &publication);
//! assert!(merged.refused.is_empty());
//! assert_eq!(merged.catalog.agent("billing", "export").map(|a| a.concurrency), Some(Concurrency::Many));
//! // The same publication again changes nothing.
//! assert_eq!(merge(&merged.catalog, &publication).catalog, merged.catalog);
//! ```

use crate::{
    ValidationErrors,
    catalog::{Agent, Catalog, Classifier, Concurrency, InputKind, OverlapPolicy},
    params::{ParamSpec, validate_values},
    text::{Lines, clean, clean_in_place},
    usage::EntityRef,
    validate::validate_catalog,
    wire::{Publication, PublishedAgent, PublishedClassifier},
};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Concurrency of an agent first published without a suggestion: one node at a time.
pub const DEFAULT_CONCURRENCY: Concurrency = Concurrency::Any;
/// Overlap policy of an agent first published without a suggestion.
pub const DEFAULT_OVERLAP: OverlapPolicy = OverlapPolicy::Allow;

/// A change a publication asked for that the catalog could not take, with the rules it broke.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refused {
    pub entity: EntityRef,
    pub errors: ValidationErrors,
}

/// The catalog after a publication.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// Valid whenever the catalog given to [`merge`] was.
    pub catalog: Catalog,
    /// Changes left out because they would have broken a rule.
    pub refused: Vec<Refused>,
}

/// One entity as the publication wants it.
#[derive(Debug, Clone, PartialEq)]
enum Change {
    Classifier(Classifier),
    Agent(Agent),
}

impl Change {
    fn entity(&self) -> EntityRef {
        match self {
            Change::Classifier(c) => EntityRef::classifier(&c.application, &c.name),
            Change::Agent(a) => EntityRef::agent(&a.application, &a.id),
        }
    }

    fn apply(&self, catalog: &mut Catalog) {
        match self {
            Change::Classifier(new) => {
                match catalog
                    .classifiers
                    .iter_mut()
                    .find(|c| c.application == new.application && c.name == new.name)
                {
                    Some(c) => *c = new.clone(),
                    None => catalog.classifiers.push(new.clone()),
                }
            }
            Change::Agent(new) => {
                match catalog
                    .agents
                    .iter_mut()
                    .find(|a| a.application == new.application && a.id == new.id)
                {
                    Some(a) => *a = new.clone(),
                    None => catalog.agents.push(new.clone()),
                }
            }
        }
    }
}

/// The classifier as published: the code owns all of it. Control characters in its texts
/// become spaces (crate::text): a label with a stray tab is no reason to refuse the classifier.
fn published_classifier(application: &str, p: &PublishedClassifier) -> Classifier {
    let mut values = p.values.clone();
    for v in &mut values {
        clean_in_place(&mut v.code, Lines::One);
        clean_in_place(&mut v.label, Lines::One);
    }
    Classifier {
        application: application.to_owned(),
        name: p.name.clone(),
        title: clean(&p.title, Lines::One).into_owned(),
        values,
    }
}

/// The published schema with control characters in its titles and descriptions made spaces.
fn published_parameters(p: &PublishedAgent) -> Vec<ParamSpec> {
    let mut parameters = p.parameters.clone();
    for spec in &mut parameters {
        clean_in_place(&mut spec.title, Lines::One);
        clean_in_place(&mut spec.description, Lines::Many);
    }
    parameters
}

/// The agent after a publication: a new one takes the suggestions; an existing one keeps what
/// operators own (concurrency, overlap policy, data queue) and takes what the code owns.
///
/// A messages agent whose suggested data queue is not in the catalog is taken without one
/// ([`Agent::needs_data_queue`]): nothing a node publishes is dropped for it, and an operator
/// picks the data queue.
pub fn published_agent(catalog: &Catalog, application: &str, p: &PublishedAgent) -> Agent {
    let existing = catalog.agent(application, &p.id);
    let suggested = || {
        p.suggested_data_queue
            .clone()
            .filter(|q| catalog.data_queue(q).is_some())
    };
    match existing {
        None => Agent {
            application: application.to_owned(),
            id: p.id.clone(),
            title: clean(&p.title, Lines::One).into_owned(),
            input: p.input,
            data_queue: match p.input {
                InputKind::Messages => suggested(),
                InputKind::Standalone => None,
            },
            concurrency: p.suggested_concurrency.unwrap_or(DEFAULT_CONCURRENCY),
            overlap: p.suggested_overlap.unwrap_or(DEFAULT_OVERLAP),
            parameters: published_parameters(p),
        },
        Some(a) => {
            let mut a = a.clone();
            if !p.title.is_empty() {
                a.title = clean(&p.title, Lines::One).into_owned();
            }
            if a.input != p.input {
                a.input = p.input;
                // The data queue follows the input kind only as far as the rules require.
                if p.input == InputKind::Standalone {
                    a.data_queue = None;
                }
            }
            // No operator has picked a data queue yet: the code's suggestion, once it exists.
            if a.needs_data_queue() {
                a.data_queue = suggested();
            }
            a.parameters = published_parameters(p);
            a
        }
    }
}

/// What the publication changes, entity by entity, classifiers first (agents' schemas refer to
/// them). Entities already as published are left out; a repeated id counts once.
fn changes(catalog: &Catalog, p: &Publication) -> Vec<Change> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for pc in &p.classifiers {
        if !seen.insert(("classifier", pc.name.as_str())) {
            continue;
        }
        let new = published_classifier(&p.application, pc);
        if catalog.classifier(&p.application, &pc.name) != Some(&new) {
            out.push(Change::Classifier(new));
        }
    }
    for pa in &p.agents {
        if !seen.insert(("agent", pa.id.as_str())) {
            continue;
        }
        let old = catalog.agent(&p.application, &pa.id);
        let new = published_agent(catalog, &p.application, pa);
        if old != Some(&new) {
            out.push(Change::Agent(new));
        }
    }
    out
}

fn with(catalog: &Catalog, changes: &[&Change]) -> Catalog {
    let mut c = catalog.clone();
    for change in changes {
        change.apply(&mut c);
    }
    c.normalize();
    c
}

/// Applies a publication to the catalog, leaving out what would break a rule.
///
/// All changes are tried together first (the usual case: everything fits). Otherwise they are
/// taken one at a time, in rounds, as long as one more fits, so that a change that only fits
/// beside another (a classifier the new schema needs) still goes in. An agent whose new schema
/// does not fit still gets its new title and input kind when those fit.
pub fn merge(catalog: &Catalog, p: &Publication) -> Merged {
    let pending = changes(catalog, p);
    if pending.is_empty() {
        return Merged {
            catalog: catalog.clone(),
            refused: Vec::new(),
        };
    }
    let all: Vec<&Change> = pending.iter().collect();
    let candidate = with(catalog, &all);
    if validate_catalog(&candidate).is_ok() {
        return Merged {
            catalog: candidate,
            refused: Vec::new(),
        };
    }
    let mut current = catalog.clone();
    let mut pending: Vec<(Change, ValidationErrors)> = pending
        .into_iter()
        .map(|c| (c, ValidationErrors::new()))
        .collect();
    loop {
        let mut progress = false;
        let mut still = Vec::with_capacity(pending.len());
        for (change, _) in pending {
            let candidate = with(&current, &[&change]);
            match validate_catalog(&candidate) {
                Ok(()) => {
                    current = candidate;
                    progress = true;
                }
                Err(errors) => still.push((change, errors)),
            }
        }
        pending = still;
        if !progress || pending.is_empty() {
            break;
        }
    }
    // An agent whose schema cannot go in still takes the rest of what the code owns.
    for (change, _) in &pending {
        let Change::Agent(wanted) = change else {
            continue;
        };
        let Some(old) = current.agent(&wanted.application, &wanted.id) else {
            continue;
        };
        let partial = Change::Agent(Agent {
            parameters: old.parameters.clone(),
            ..wanted.clone()
        });
        if matches!(&partial, Change::Agent(a) if a != old) {
            let candidate = with(&current, &[&partial]);
            if validate_catalog(&candidate).is_ok() {
                current = candidate;
            }
        }
    }
    Merged {
        catalog: current,
        refused: pending
            .into_iter()
            .map(|(change, errors)| Refused {
                entity: change.entity(),
                errors,
            })
            .collect(),
    }
}

/// A launch setting whose saved parameters do not pass its agent's published schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    pub launch_setting: String,
    pub application: String,
    pub agent: String,
    /// Every broken rule; paths are parameter names (`org_id`, `orgs[1]`).
    pub errors: ValidationErrors,
}

/// Launch settings whose parameters the schema their agent's code last published rejects.
/// `published` gives that schema, `None` for agents no node has published. Values are checked
/// against the catalog's classifiers, as at save time.
pub fn schema_drift<'s>(
    catalog: &Catalog,
    published: &dyn Fn(&str, &str) -> Option<&'s [ParamSpec]>,
) -> Vec<Drift> {
    catalog
        .launch_settings
        .iter()
        .filter_map(|ls| {
            let schema = published(&ls.application, &ls.agent)?;
            let classifiers = |name: &str| catalog.classifier(&ls.application, name);
            let errors = validate_values(schema, &ls.parameters, &classifiers);
            (!errors.is_empty()).then(|| Drift {
                launch_setting: ls.id.clone(),
                application: ls.application.clone(),
                agent: ls.agent.clone(),
                errors,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
