//! The seven kinds of catalog entity, seen uniformly so the service handles them with one code
//! path (find, add, replace, remove, path in the document).

use am_domain::{
    catalog::{
        Agent, Application, Catalog, Classifier, DataQueue, LaunchSetting, Pool, ScheduleGroup,
    },
    usage::EntityRef,
};
use serde::{Serialize, de::DeserializeOwned};

pub trait CatalogEntity:
    Serialize + DeserializeOwned + Clone + PartialEq + Send + Sync + 'static
{
    /// Singular, for messages and the audit log: `launch setting`.
    const NOUN: &'static str;
    /// The list's field in the catalog document: `launch_settings`.
    const LIST: &'static str;
    /// Whether reading one needs the classifiers' values (only classifiers do: reading an
    /// agent must not read a 100,000-value classifier its parameters name).
    const WITH_VALUES: bool = false;

    fn key(&self) -> EntityRef;
    fn list(catalog: &Catalog) -> &Vec<Self>;
    fn list_mut(catalog: &mut Catalog) -> &mut Vec<Self>;

    fn position(catalog: &Catalog, key: &EntityRef) -> Option<usize> {
        Self::list(catalog).iter().position(|e| &e.key() == key)
    }

    fn find<'c>(catalog: &'c Catalog, key: &EntityRef) -> Option<&'c Self> {
        Self::list(catalog).iter().find(|e| &e.key() == key)
    }
}

macro_rules! simple_kind {
    ($ty:ty, $noun:literal, $list:ident, $variant:ident) => {
        impl CatalogEntity for $ty {
            const NOUN: &'static str = $noun;
            const LIST: &'static str = stringify!($list);

            fn key(&self) -> EntityRef {
                EntityRef::$variant(self.id.clone())
            }
            fn list(catalog: &Catalog) -> &Vec<Self> {
                &catalog.$list
            }
            fn list_mut(catalog: &mut Catalog) -> &mut Vec<Self> {
                &mut catalog.$list
            }
        }
    };
}

simple_kind!(Application, "application", applications, Application);
simple_kind!(Pool, "pool", pools, Pool);
simple_kind!(DataQueue, "data queue", data_queues, DataQueue);
simple_kind!(
    LaunchSetting,
    "launch setting",
    launch_settings,
    LaunchSetting
);
simple_kind!(
    ScheduleGroup,
    "schedule group",
    schedule_groups,
    ScheduleGroup
);

impl CatalogEntity for Agent {
    const NOUN: &'static str = "agent";
    const LIST: &'static str = "agents";

    fn key(&self) -> EntityRef {
        EntityRef::Agent {
            application: self.application.clone(),
            id: self.id.clone(),
        }
    }
    fn list(catalog: &Catalog) -> &Vec<Self> {
        &catalog.agents
    }
    fn list_mut(catalog: &mut Catalog) -> &mut Vec<Self> {
        &mut catalog.agents
    }
}

impl CatalogEntity for Classifier {
    const NOUN: &'static str = "classifier";
    const LIST: &'static str = "classifiers";
    const WITH_VALUES: bool = true;

    fn key(&self) -> EntityRef {
        EntityRef::Classifier {
            application: self.application.clone(),
            name: self.name.clone(),
        }
    }
    fn list(catalog: &Catalog) -> &Vec<Self> {
        &catalog.classifiers
    }
    fn list_mut(catalog: &mut Catalog) -> &mut Vec<Self> {
        &mut catalog.classifiers
    }
}

/// The id as shown in messages and audit entries: `billing/invoice-export` for scoped ones.
pub fn display_id(key: &EntityRef) -> String {
    match key {
        EntityRef::Application(id)
        | EntityRef::Pool(id)
        | EntityRef::DataQueue(id)
        | EntityRef::LaunchSetting(id)
        | EntityRef::ScheduleGroup(id) => id.clone(),
        EntityRef::Agent { application, id } => format!("{application}/{id}"),
        EntityRef::Classifier { application, name } => format!("{application}/{name}"),
    }
}
