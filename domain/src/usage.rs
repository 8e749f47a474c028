//! Who uses a catalog entity: a delete is refused while anything does, with a message naming it.

use crate::{catalog::Catalog, params::ParamType};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A catalog entity, by its key. In JSON: `{"kind": "launch_setting", "key": "billing.x.1"}` or
/// `{"kind": "agent", "key": {"application": "billing", "id": "x"}}` (adjacently tagged: an
/// internally tagged enum cannot carry the plain string keys).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", content = "key", rename_all = "snake_case")]
pub enum EntityRef {
    Application(String),
    Pool(String),
    DataQueue(String),
    Agent { application: String, id: String },
    Classifier { application: String, name: String },
    LaunchSetting(String),
    ScheduleGroup(String),
}

impl EntityRef {
    pub fn agent(application: impl Into<String>, id: impl Into<String>) -> Self {
        EntityRef::Agent {
            application: application.into(),
            id: id.into(),
        }
    }

    pub fn classifier(application: impl Into<String>, name: impl Into<String>) -> Self {
        EntityRef::Classifier {
            application: application.into(),
            name: name.into(),
        }
    }
}

impl EntityRef {
    /// What it is, in words: `data queue`, `launch setting`, …
    pub fn noun(&self) -> &'static str {
        match self {
            EntityRef::Application(_) => "application",
            EntityRef::Pool(_) => "pool",
            EntityRef::DataQueue(_) => "data queue",
            EntityRef::Agent { .. } => "agent",
            EntityRef::Classifier { .. } => "classifier",
            EntityRef::LaunchSetting(_) => "launch setting",
            EntityRef::ScheduleGroup(_) => "schedule group",
        }
    }

    /// Its key as pages and messages write it: the id, `application/id` for an agent and
    /// `application/name` for a classifier.
    pub fn key(&self) -> String {
        match self {
            EntityRef::Application(id)
            | EntityRef::Pool(id)
            | EntityRef::DataQueue(id)
            | EntityRef::LaunchSetting(id)
            | EntityRef::ScheduleGroup(id) => id.clone(),
            EntityRef::Agent { application, id } => format!("{application}/{id}"),
            EntityRef::Classifier { application, name } => format!("{application}/{name}"),
        }
    }
}

impl fmt::Display for EntityRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} '{}'", self.noun(), self.key())
    }
}

/// Every use of `target` in `catalog`, one sentence each, e.g.
/// "launch setting 'billing.x.1' uses agent 'billing/x'". Empty when nothing uses it.
pub fn usages(catalog: &Catalog, target: &EntityRef) -> Vec<String> {
    let mut out = Vec::new();
    match target {
        EntityRef::Application(app) => {
            let owned = |application: &str| application == app;
            for a in catalog.agents.iter().filter(|a| owned(&a.application)) {
                out.push(format!(
                    "{} belongs to {target}",
                    EntityRef::agent(&a.application, &a.id)
                ));
            }
            for c in catalog.classifiers.iter().filter(|c| owned(&c.application)) {
                out.push(format!(
                    "{} belongs to {target}",
                    EntityRef::classifier(&c.application, &c.name)
                ));
            }
            for l in catalog
                .launch_settings
                .iter()
                .filter(|l| owned(&l.application))
            {
                out.push(format!(
                    "{} belongs to {target}",
                    EntityRef::LaunchSetting(l.id.clone())
                ));
            }
            for g in catalog
                .schedule_groups
                .iter()
                .filter(|g| owned(&g.application))
            {
                out.push(format!(
                    "{} belongs to {target}",
                    EntityRef::ScheduleGroup(g.id.clone())
                ));
            }
        }
        EntityRef::Pool(pool) => {
            for a in catalog
                .applications
                .iter()
                .filter(|a| a.default_pool == *pool)
            {
                out.push(format!(
                    "{} uses {target} as its default pool",
                    EntityRef::Application(a.id.clone())
                ));
            }
            for l in catalog
                .launch_settings
                .iter()
                .filter(|l| l.pool.as_deref() == Some(pool))
            {
                out.push(format!(
                    "{} uses {target}",
                    EntityRef::LaunchSetting(l.id.clone())
                ));
            }
        }
        EntityRef::DataQueue(queue) => {
            for a in catalog
                .agents
                .iter()
                .filter(|a| a.data_queue.as_deref() == Some(queue))
            {
                out.push(format!(
                    "{} uses {target}",
                    EntityRef::agent(&a.application, &a.id)
                ));
            }
        }
        EntityRef::Agent { application, id } => {
            for l in catalog
                .launch_settings
                .iter()
                .filter(|l| l.application == *application && l.agent == *id)
            {
                out.push(format!(
                    "{} uses {target}",
                    EntityRef::LaunchSetting(l.id.clone())
                ));
            }
        }
        EntityRef::Classifier { application, name } => {
            for a in catalog
                .agents
                .iter()
                .filter(|a| a.application == *application)
            {
                for p in &a.parameters {
                    if matches!(&p.ty, ParamType::Classifier(n) if n == name) {
                        out.push(format!(
                            "{} parameter '{}' uses {target}",
                            EntityRef::agent(&a.application, &a.id),
                            p.name
                        ));
                    }
                }
            }
        }
        EntityRef::LaunchSetting(ls) => {
            for g in catalog
                .schedule_groups
                .iter()
                .filter(|g| g.members.contains(ls))
            {
                out.push(format!(
                    "{} has {target} as a member",
                    EntityRef::ScheduleGroup(g.id.clone())
                ));
            }
        }
        // Nothing refers to a schedule group.
        EntityRef::ScheduleGroup(_) => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_key_round_trips_through_json() {
        let keys = [
            EntityRef::Application("billing".into()),
            EntityRef::Pool("p".into()),
            EntityRef::DataQueue("q".into()),
            EntityRef::agent("billing", "x"),
            EntityRef::classifier("billing", "orgs"),
            EntityRef::LaunchSetting("billing.x.1".into()),
            EntityRef::ScheduleGroup("nightly".into()),
        ];
        for key in keys {
            let json = serde_json::to_value(&key).expect("serializes");
            assert_eq!(
                serde_json::from_value::<EntityRef>(json).expect("parses"),
                key
            );
        }
        let json =
            serde_json::to_value(EntityRef::LaunchSetting("a.b".into())).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({"kind": "launch_setting", "key": "a.b"})
        );
    }
}
