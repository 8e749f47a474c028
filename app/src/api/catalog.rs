//! Server functions of the catalog pages. Each checks the caller's role (inside the service),
//! calls one service function and maps its error; the forms send JSON so nested entities
//! (parameters, retry policies, group members) travel whole.

use crate::error::UiError;
use am_domain::{
    catalog::{
        Agent, Application, Catalog, ClassifierValue, DataQueue, LaunchSetting, Pool, ScheduleGroup,
    },
    roles::Role,
    usage::EntityRef,
};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// Rows per list page unless the URL asks otherwise.
pub const PAGE_SIZE: u64 = 25;

/// The kinds of entity list pages show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Applications,
    Pools,
    DataQueues,
    Agents,
    LaunchSettings,
    ScheduleGroups,
}

impl Kind {
    /// Path of the list page, also the URL segment of detail pages.
    pub fn path(self) -> &'static str {
        match self {
            Kind::Applications => "/applications",
            Kind::Pools => "/pools",
            Kind::DataQueues => "/data-queues",
            Kind::Agents => "/agents",
            Kind::LaunchSettings => "/launch-settings",
            Kind::ScheduleGroups => "/schedule-groups",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Kind::Applications => "Applications",
            Kind::Pools => "Pools",
            Kind::DataQueues => "Data queues",
            Kind::Agents => "Agents",
            Kind::LaunchSettings => "Launch settings",
            Kind::ScheduleGroups => "Schedule groups",
        }
    }

    /// The key of the entity of this kind with `id`, when its rows have actions (enable,
    /// disable, run now).
    pub fn switch_key(self, id: &str) -> Option<Key> {
        match self {
            Kind::LaunchSettings => Some(Key::LaunchSetting(id.to_owned())),
            Kind::ScheduleGroups => Some(Key::ScheduleGroup(id.to_owned())),
            _ => None,
        }
    }

    /// Whether entities of this kind belong to an application (the list filters by it).
    pub fn scoped(self) -> bool {
        !matches!(self, Kind::Pools | Kind::DataQueues)
    }

    /// Column headings of the list, after the id.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Kind::Applications => &["Title", "Default pool", "Agents"],
            Kind::Pools => &["Title", "Hosts"],
            Kind::DataQueues => &["Title", "Kind", "Address", "Delay"],
            Kind::Agents => &["Application", "Title", "Input", "Concurrency", "Overlap"],
            Kind::LaunchSettings => &["Application", "Status", "Last run", "Next fire", "Backlog"],
            Kind::ScheduleGroups => &["Application", "Schedule", "Status", "Last run", "Next fire"],
        }
    }
}

/// What a list page asks for; carried in the URL (`?q=&application=&page=`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListQuery {
    pub q: String,
    pub application: String,
    /// One-based.
    pub page: u64,
}

/// One row of a list: the id (and title, where there is one), the link to the entity and the
/// other cells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListRow {
    pub id: String,
    pub title: Option<String>,
    pub href: String,
    pub cells: Vec<Cell>,
    /// Launch settings and schedule groups: whether it is enabled (its row's actions follow).
    pub enabled: Option<bool>,
}

/// One cell of a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cell {
    Text(String),
    /// A main line and a muted second line.
    Two(String, String),
    /// A status as a badge (its CSS class is its value), and when it came: `failed 3 min ago`;
    /// `None` shows "—".
    Badge {
        value: Option<String>,
        at: Option<chrono::DateTime<chrono::Utc>>,
        /// A muted line beneath.
        note: Option<String>,
    },
    /// A time as "in 3 min" or "3 min ago", the absolute time as its title; `None` shows the
    /// text.
    Time(Option<chrono::DateTime<chrono::Utc>>, String),
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Cell::Text(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Cell::Text(text.to_owned())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListView {
    pub rows: Vec<ListRow>,
    pub total: u64,
    pub page: u64,
    pub page_size: u64,
    /// Applications, for the filter's choices.
    pub applications: Vec<String>,
    pub role: Role,
    /// When the server read the page: the base of its relative times.
    pub now: chrono::DateTime<chrono::Utc>,
}

/// The catalog as forms need it (classifier values left out) and who is looking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogView {
    pub catalog: Catalog,
    pub role: Role,
}

/// An entity a form saves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "entity", rename_all = "snake_case")]
pub enum AnyEntity {
    Application(Application),
    Pool(Pool),
    DataQueue(DataQueue),
    Agent(Agent),
    ScheduleGroup(ScheduleGroup),
}

/// An entity's key as server functions receive it (externally tagged, unlike `EntityRef`,
/// whose internally tagged newtype variants JSON cannot carry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Key {
    Application(String),
    Pool(String),
    DataQueue(String),
    Agent { application: String, id: String },
    Classifier { application: String, name: String },
    LaunchSetting(String),
    ScheduleGroup(String),
}

impl From<EntityRef> for Key {
    fn from(r: EntityRef) -> Self {
        match r {
            EntityRef::Application(id) => Key::Application(id),
            EntityRef::Pool(id) => Key::Pool(id),
            EntityRef::DataQueue(id) => Key::DataQueue(id),
            EntityRef::Agent { application, id } => Key::Agent { application, id },
            EntityRef::Classifier { application, name } => Key::Classifier { application, name },
            EntityRef::LaunchSetting(id) => Key::LaunchSetting(id),
            EntityRef::ScheduleGroup(id) => Key::ScheduleGroup(id),
        }
    }
}

impl From<Key> for EntityRef {
    fn from(k: Key) -> Self {
        match k {
            Key::Application(id) => EntityRef::Application(id),
            Key::Pool(id) => EntityRef::Pool(id),
            Key::DataQueue(id) => EntityRef::DataQueue(id),
            Key::Agent { application, id } => EntityRef::Agent { application, id },
            Key::Classifier { application, name } => EntityRef::Classifier { application, name },
            Key::LaunchSetting(id) => EntityRef::LaunchSetting(id),
            Key::ScheduleGroup(id) => EntityRef::ScheduleGroup(id),
        }
    }
}

/// Current status of a launch setting or group as the catalog knows it (runtime status arrives
/// with the scheduler): `disabled` or `waiting`.
pub fn catalog_status(enabled: bool) -> &'static str {
    use am_domain::status::CurrentStatus;
    if enabled {
        CurrentStatus::Waiting
    } else {
        CurrentStatus::Disabled
    }
    .as_str()
}

#[cfg(feature = "ssr")]
mod rows;

/// One page of a list, filtered on the server.
#[server(prefix = "/ui", endpoint = "catalog_list", input = Json)]
pub async fn catalog_list(kind: Kind, query: ListQuery) -> Result<ListView, UiError> {
    use super::ssr::*;
    use am_services::catalog::{ListFilter, overview, page_of};
    let who = require(Operation::Read)?;
    let s = services()?;
    let page = query.page.max(1);
    let filter = ListFilter {
        text: query.q,
        application: if kind.scoped() {
            query.application
        } else {
            String::new()
        },
        offset: (page - 1) * PAGE_SIZE,
        limit: PAGE_SIZE,
    };
    let db = &s.db;
    // One read of the catalog serves both the page of rows and the application filter's choices.
    let catalog = overview(db, &who).await?;
    let (rows, total) = match kind {
        Kind::Applications => {
            let p = page_of::<Application>(&catalog, &filter);
            let rows = p
                .items
                .into_iter()
                .map(|a| rows::application(a, &catalog))
                .collect();
            (rows, p.total)
        }
        Kind::Pools => {
            let p = page_of::<Pool>(&catalog, &filter);
            (p.items.into_iter().map(rows::pool).collect(), p.total)
        }
        Kind::DataQueues => {
            let p = page_of::<DataQueue>(&catalog, &filter);
            (p.items.into_iter().map(rows::data_queue).collect(), p.total)
        }
        Kind::Agents => {
            let p = page_of::<Agent>(&catalog, &filter);
            (p.items.into_iter().map(rows::agent).collect(), p.total)
        }
        Kind::LaunchSettings => {
            let p = page_of::<LaunchSetting>(&catalog, &filter);
            let settings: Vec<&LaunchSetting> = p.items.iter().collect();
            let st = am_services::run_status::of_launch_settings_with_backlog(
                db,
                &who,
                &s.broker_depths,
                &catalog,
                &settings,
            )
            .await?;
            // A scheduled launch setting fires with its groups: the earliest of theirs.
            let groups: Vec<String> = catalog
                .schedule_groups
                .iter()
                .filter(|g| {
                    g.members
                        .iter()
                        .any(|m| settings.iter().any(|l| &l.id == m))
                })
                .map(|g| g.id.clone())
                .collect();
            let group_status =
                am_services::run_status::of_schedule_groups(db, &who, &groups).await?;
            let next_fire = |ls: &str| {
                catalog
                    .schedule_groups
                    .iter()
                    .filter(|g| g.members.iter().any(|m| m == ls))
                    .filter_map(|g| group_status.get(&g.id).and_then(|s| s.next_fire_at))
                    .min()
            };
            let rows = p
                .items
                .into_iter()
                .map(|l| {
                    let next = next_fire(&l.id);
                    let s = st.get(&l.id);
                    rows::launch_setting(l, s, next)
                })
                .collect();
            (rows, p.total)
        }
        Kind::ScheduleGroups => {
            let p = page_of::<ScheduleGroup>(&catalog, &filter);
            let ids: Vec<String> = p.items.iter().map(|g| g.id.clone()).collect();
            let st = am_services::run_status::of_schedule_groups(db, &who, &ids).await?;
            let rows = p
                .items
                .into_iter()
                .map(|g| {
                    let s = st.get(&g.id);
                    rows::schedule_group(g, s)
                })
                .collect();
            (rows, p.total)
        }
    };
    Ok(ListView {
        rows,
        total,
        page,
        page_size: PAGE_SIZE,
        applications: catalog.applications.into_iter().map(|a| a.id).collect(),
        role: who.role,
        now: chrono::Utc::now(),
    })
}

/// The catalog for forms (without classifier values) and the caller's role.
#[server(prefix = "/ui", endpoint = "load_catalog_view", input = Json)]
pub async fn load_catalog_view() -> Result<CatalogView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let catalog = am_services::catalog::overview(&services()?.db, &who).await?;
    Ok(CatalogView {
        catalog,
        role: who.role,
    })
}

/// Creates (`create`) or replaces an entity.
#[server(prefix = "/ui", endpoint = "save_entity", input = Json)]
pub async fn save_entity(entity: AnyEntity, create: bool) -> Result<String, UiError> {
    use super::ssr::*;
    use am_services::catalog::{self, CatalogEntity};
    let who = require(Operation::EditCatalog)?;
    let db = &services()?.db;
    macro_rules! save {
        ($e:expr) => {{
            let e = $e;
            let key = e.key();
            if create {
                catalog::create(db, &who, e).await?;
            } else {
                catalog::update(db, &who, &key, e).await?;
            }
            Ok(am_domain::links::entity_page(&key))
        }};
    }
    match entity {
        AnyEntity::Application(e) => save!(e),
        AnyEntity::Pool(e) => save!(e),
        AnyEntity::DataQueue(e) => save!(e),
        AnyEntity::Agent(e) => save!(e),
        AnyEntity::ScheduleGroup(e) => save!(e),
    }
}

/// Creates or replaces a launch setting; a scheduled one is saved with its groups.
#[server(prefix = "/ui", endpoint = "save_launch_setting", input = Json)]
pub async fn save_launch_setting(
    setting: LaunchSetting,
    groups: Option<Vec<String>>,
    create: bool,
) -> Result<String, UiError> {
    use super::ssr::*;
    let who = require(Operation::EditCatalog)?;
    let key = EntityRef::LaunchSetting(setting.id.clone());
    am_services::catalog::save_launch_setting(&services()?.db, &who, setting, groups, create)
        .await?;
    Ok(am_domain::links::entity_page(&key))
}

/// Deletes an entity; refused while anything uses it.
#[server(prefix = "/ui", endpoint = "delete_entity", input = Json)]
pub async fn delete_entity(key: Key) -> Result<(), UiError> {
    use super::ssr::*;
    use am_services::catalog::delete;
    let key = EntityRef::from(key);
    let who = require(Operation::EditCatalog)?;
    let db = &services()?.db;
    match &key {
        EntityRef::Application(_) => delete::<Application>(db, &who, &key).await?,
        EntityRef::Pool(_) => delete::<Pool>(db, &who, &key).await?,
        EntityRef::DataQueue(_) => delete::<DataQueue>(db, &who, &key).await?,
        EntityRef::Agent { .. } => delete::<Agent>(db, &who, &key).await?,
        EntityRef::LaunchSetting(_) => delete::<LaunchSetting>(db, &who, &key).await?,
        EntityRef::ScheduleGroup(_) => delete::<ScheduleGroup>(db, &who, &key).await?,
        EntityRef::Classifier { .. } => {
            return Err(UiError::Forbidden(
                "classifiers are published by the application's nodes".into(),
            ));
        }
    }
    Ok(())
}

/// Enables or disables a launch setting or a schedule group (operators and admins).
#[server(prefix = "/ui", endpoint = "set_enabled", input = Json)]
pub async fn set_enabled(key: Key, enabled: bool) -> Result<(), UiError> {
    use super::ssr::*;
    let key = EntityRef::from(key);
    let who = require(Operation::Toggle)?;
    let cause = format!(
        "{} by {} in the UI",
        if enabled { "enabled" } else { "disabled" },
        who.name
    );
    am_services::catalog::set_enabled(&services()?.db, &who, &key, enabled, &cause).await?;
    Ok(())
}

/// Puts a host the launch setting's breaker quarantined back into its rotation (operators and
/// admins).
#[server(prefix = "/ui", endpoint = "clear_quarantine", input = Json)]
pub async fn clear_quarantine(launch_setting: String, host: String) -> Result<(), UiError> {
    use super::ssr::*;
    let who = require(Operation::Toggle)?;
    am_services::quarantine::clear(&services()?.db, &who, &launch_setting, &host).await?;
    Ok(())
}

/// *Run now* of a launch setting or schedule group (operators and admins); returns the new
/// activation's id.
#[server(prefix = "/ui", endpoint = "run_now", input = Json)]
pub async fn run_now(key: Key) -> Result<String, UiError> {
    use super::ssr::*;
    let key = EntityRef::from(key);
    let who = require(Operation::Run)?;
    let s = services()?;
    let id = am_services::runtime::run::run_now(&s.db, &s.runtime, &who, &key).await?;
    Ok(id.to_string())
}

/// Current status and last result of a launch setting or schedule group.
#[server(prefix = "/ui", endpoint = "run_status", input = Json)]
pub async fn run_status(key: Key) -> Result<am_domain::read::run_status::RunStatus, UiError> {
    use super::ssr::*;
    use am_services::run_status::{of_launch_setting_with_backlog, of_schedule_groups};
    let who = require(Operation::Read)?;
    let s = services()?;
    let found = match &key {
        Key::LaunchSetting(id) => {
            of_launch_setting_with_backlog(&s.db, &who, &s.broker_depths, id).await?
        }
        Key::ScheduleGroup(id) => of_schedule_groups(&s.db, &who, std::slice::from_ref(id))
            .await?
            .into_values()
            .next(),
        _ => None,
    };
    found.ok_or_else(|| UiError::NotFound(format!("{} not found", EntityRef::from(key))))
}

/// Values of a classifier matching `text`, searched in the database.
#[server(prefix = "/ui", endpoint = "search_classifier", input = Json)]
pub async fn search_classifier(
    application: String,
    classifier: String,
    text: String,
) -> Result<am_domain::classifier::ClassifierPage, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    Ok(am_services::classifiers::search(
        &services()?.db,
        &who,
        &application,
        &classifier,
        &text,
        20,
    )
    .await?)
}

/// Labels of saved classifier codes.
#[server(prefix = "/ui", endpoint = "classifier_labels", input = Json)]
pub async fn classifier_labels(
    application: String,
    classifier: String,
    codes: Vec<String>,
) -> Result<Vec<ClassifierValue>, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    Ok(
        am_services::classifiers::lookup(&services()?.db, &who, &application, &classifier, &codes)
            .await?,
    )
}

/// The server's clock (milliseconds since the epoch), for previews computed in the browser.
#[server(prefix = "/ui", endpoint = "server_now", input = Json)]
pub async fn server_now() -> Result<i64, UiError> {
    use super::ssr::{Operation, require};
    require(Operation::Read)?;
    Ok(chrono::Utc::now().timestamp_millis())
}
