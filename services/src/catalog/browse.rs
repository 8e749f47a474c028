//! Reading the catalog for pages: one kind of entity, filtered and paginated on the server, and
//! the whole catalog without classifier values for forms that pick among entities.

use super::{kinds::CatalogEntity, store};
use crate::{Principal, error::ServiceResult};
use am_domain::{
    catalog::{Agent, Application, Catalog, DataQueue, LaunchSetting, Pool, ScheduleGroup},
    roles::Operation,
};
use sea_orm::ConnectionTrait;

/// Largest page a list returns.
pub const MAX_PAGE_SIZE: u64 = 200;

/// What a list page asks for. Empty strings mean "no filter".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// Matched, case-insensitively, against the id and the title (and hosts of pools).
    pub text: String,
    /// Only entities of this application (for the kinds that belong to one).
    pub application: String,
    /// Zero-based offset of the first entity returned.
    pub offset: u64,
    pub limit: u64,
}

/// One page of a list and the number of entities that match the filter.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage<E> {
    pub items: Vec<E>,
    pub total: u64,
}

/// Entity kinds that list pages filter.
pub trait Browse: CatalogEntity {
    /// The application the entity belongs to, if its kind belongs to one.
    fn application(&self) -> Option<&str>;
    /// Text the free-text filter searches.
    fn haystack(&self) -> String;
}

impl Browse for Application {
    fn application(&self) -> Option<&str> {
        Some(&self.id)
    }
    fn haystack(&self) -> String {
        format!("{} {} {}", self.id, self.title, self.default_pool)
    }
}

impl Browse for Pool {
    fn application(&self) -> Option<&str> {
        None
    }
    fn haystack(&self) -> String {
        format!("{} {} {}", self.id, self.title, self.hosts.join(" "))
    }
}

impl Browse for DataQueue {
    fn application(&self) -> Option<&str> {
        None
    }
    fn haystack(&self) -> String {
        format!("{} {} {}", self.id, self.title, self.effective_address())
    }
}

impl Browse for Agent {
    fn application(&self) -> Option<&str> {
        Some(&self.application)
    }
    fn haystack(&self) -> String {
        format!(
            "{} {} {}",
            self.id,
            self.title,
            self.data_queue.as_deref().unwrap_or_default()
        )
    }
}

impl Browse for LaunchSetting {
    fn application(&self) -> Option<&str> {
        Some(&self.application)
    }
    fn haystack(&self) -> String {
        format!("{} {} {}", self.id, self.title, self.agent)
    }
}

impl Browse for ScheduleGroup {
    fn application(&self) -> Option<&str> {
        Some(&self.application)
    }
    fn haystack(&self) -> String {
        format!("{} {} {}", self.id, self.title, self.cron)
    }
}

fn matches<E: Browse>(e: &E, filter: &ListFilter, needle: &str) -> bool {
    let app_ok =
        filter.application.is_empty() || e.application().is_none_or(|a| a == filter.application);
    app_ok && (needle.is_empty() || e.haystack().to_lowercase().contains(needle))
}

/// The entities of kind `E` that match `filter`, in id order, one page of them.
pub async fn browse<E: Browse>(
    db: &impl ConnectionTrait,
    actor: &Principal,
    filter: &ListFilter,
) -> ServiceResult<ListPage<E>> {
    actor.require(Operation::Read)?;
    let catalog = super::readable(store::load_with(db, false).await?, actor);
    Ok(page_of(&catalog, filter))
}

/// One page of the entities of kind `E` in an already loaded catalog (e.g. from [`overview`],
/// when a page needs both and should read the catalog once).
pub fn page_of<E: Browse>(catalog: &Catalog, filter: &ListFilter) -> ListPage<E> {
    let needle = filter.text.trim().to_lowercase();
    let matching: Vec<&E> = E::list(catalog)
        .iter()
        .filter(|e| matches(*e, filter, &needle))
        .collect();
    let limit = filter.limit.clamp(1, MAX_PAGE_SIZE);
    let items = matching
        .iter()
        .skip(usize::try_from(filter.offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(|e| (*e).clone())
        .collect();
    ListPage {
        items,
        total: matching.len() as u64,
    }
}

/// The whole catalog with every classifier's values left out (their names and titles stay),
/// for forms that pick applications, pools, agents, launch settings and groups.
pub async fn overview(db: &impl ConnectionTrait, actor: &Principal) -> ServiceResult<Catalog> {
    actor.require(Operation::Read)?;
    Ok(super::readable(store::load_with(db, false).await?, actor))
}
