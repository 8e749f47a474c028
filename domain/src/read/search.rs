//! The global search's answer as the API and the search page read it: what each hit points at,
//! with the words and the page that name it.

use crate::{links, usage::EntityRef};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What a hit points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Found {
    Application {
        id: String,
    },
    Pool {
        id: String,
    },
    DataQueue {
        id: String,
    },
    Agent {
        application: String,
        id: String,
    },
    LaunchSetting {
        id: String,
    },
    ScheduleGroup {
        id: String,
    },
    /// A host name of a pool.
    Host {
        name: String,
    },
    /// An error type failures reported (and that are still stored).
    ErrorType {
        name: String,
    },
    Activation {
        id: Uuid,
    },
    DeadLetter {
        id: i64,
    },
}

impl Found {
    /// The catalog entity, if it is one.
    pub fn entity(&self) -> Option<EntityRef> {
        Some(match self {
            Found::Application { id } => EntityRef::Application(id.clone()),
            Found::Pool { id } => EntityRef::Pool(id.clone()),
            Found::DataQueue { id } => EntityRef::DataQueue(id.clone()),
            Found::Agent { application, id } => EntityRef::agent(application, id),
            Found::LaunchSetting { id } => EntityRef::LaunchSetting(id.clone()),
            Found::ScheduleGroup { id } => EntityRef::ScheduleGroup(id.clone()),
            Found::Host { .. }
            | Found::ErrorType { .. }
            | Found::Activation { .. }
            | Found::DeadLetter { .. } => {
                return None;
            }
        })
    }

    /// Whether `lowered` (the searched text, lower case) names the hit as an operator would
    /// type it whole.
    pub fn is_named_by(&self, lowered: &str) -> bool {
        match self {
            Found::Application { id }
            | Found::Pool { id }
            | Found::DataQueue { id }
            | Found::LaunchSetting { id }
            | Found::ScheduleGroup { id } => id == lowered,
            Found::Agent { application, id } => {
                *id == lowered || format!("{application}/{id}") == lowered
            }
            Found::Host { name } | Found::ErrorType { name } => name.to_lowercase() == lowered,
            Found::Activation { .. } | Found::DeadLetter { .. } => false,
        }
    }

    /// What it is, in words: `launch setting`, `dead letter`, …
    pub fn noun(&self) -> &'static str {
        match self {
            Found::Host { .. } => "host",
            Found::ErrorType { .. } => "error type",
            Found::Activation { .. } => "activation",
            Found::DeadLetter { .. } => "dead letter",
            found => found.entity().map_or("", |e| e.noun()),
        }
    }

    /// Its id as pages write it: `billing/export` for an agent, `#42` for a dead letter.
    pub fn id(&self) -> String {
        match self {
            Found::Host { name } | Found::ErrorType { name } => name.clone(),
            Found::Activation { id } => id.to_string(),
            Found::DeadLetter { id } => format!("#{id}"),
            found => found.entity().map(|e| e.key()).unwrap_or_default(),
        }
    }

    /// The page it leads to: an entity's own page, what ran on a host, the failures of an
    /// error type.
    pub fn href(&self) -> String {
        match self {
            Found::Host { name } => links::href("/activations", &[("host", name)]),
            Found::ErrorType { name } => links::href("/failures", &[("error_type", name)]),
            Found::Activation { id } => links::activation(&id.to_string()),
            Found::DeadLetter { id } => links::dead_letter(*id),
            found => found
                .entity()
                .map(|e| links::entity_page(&e))
                .unwrap_or_default(),
        }
    }
}

/// One hit of the global search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Hit {
    #[serde(flatten)]
    pub found: Found,
    /// The title, or what else tells the hit apart (a dead letter's message id, an
    /// activation's launch setting).
    pub label: String,
    /// The text named this hit whole (its id, a whole activation id, a message id): a page may
    /// go straight to it when it is the only such hit.
    pub exact: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hit_says_what_it_is_and_where_it_leads() {
        let id = Uuid::nil();
        let cases = [
            (
                Found::Agent {
                    application: "billing".into(),
                    id: "export".into(),
                },
                ("agent", "billing/export", "/agents/billing/export"),
            ),
            (
                Found::LaunchSetting {
                    id: "nightly".into(),
                },
                ("launch setting", "nightly", "/launch-settings/nightly"),
            ),
            (
                Found::Host {
                    name: "app 01".into(),
                },
                ("host", "app 01", "/activations?host=app%2001"),
            ),
            (
                Found::ErrorType {
                    name: "Timeout".into(),
                },
                ("error type", "Timeout", "/failures?error_type=Timeout"),
            ),
            (
                Found::DeadLetter { id: 42 },
                ("dead letter", "#42", "/dead-letters/42"),
            ),
        ];
        for (found, (noun, shown, href)) in cases {
            assert_eq!(
                (found.noun(), found.id().as_str(), found.href().as_str()),
                (noun, shown, href)
            );
        }
        let activation = Found::Activation { id };
        assert_eq!(activation.href(), format!("/activations/{id}"));
    }

    #[test]
    fn an_agent_is_named_by_its_id_alone_or_with_its_application() {
        let agent = Found::Agent {
            application: "billing".into(),
            id: "export".into(),
        };
        assert!(agent.is_named_by("export"));
        assert!(agent.is_named_by("billing/export"));
        assert!(!agent.is_named_by("billing"));
        assert!(
            Found::Host {
                name: "App-01".into()
            }
            .is_named_by("app-01")
        );
        assert!(!Found::DeadLetter { id: 1 }.is_named_by("1"));
    }
}
