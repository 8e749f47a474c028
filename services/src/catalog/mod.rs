//! The catalog service: every change to applications, pools, data queues, classifiers, agents,
//! launch settings and schedule groups.
//!
//! Each write runs the same way, whatever its size (one field or a whole import):
//! 1. load the catalog with its revision, apply the change in memory, validate the **whole**
//!    result with the pure rules of `am-domain` (so a change can never break a rule elsewhere);
//! 2. begin a transaction and bump the catalog revision if it is still the one read, which
//!    serializes catalog writers across threads and manager replicas (row lock on PostgreSQL,
//!    write lock on SQLite); if another write came first, start again (`write.rs`);
//! 3. write only the difference, with one audit entry per changed entity, and commit.

mod browse;
mod kinds;
pub(crate) mod rows;
mod store;
mod sync;
mod write;

pub use browse::{Browse, ListFilter, ListPage, MAX_PAGE_SIZE, browse, overview, page_of};
pub use kinds::{CatalogEntity, display_id};
pub use store::{ChangeSummary, load, load_with};
pub(crate) use write::apply_in;

use crate::{
    Principal, ServiceError,
    entity::{agents, catalog_meta},
    error::ServiceResult,
};
use am_domain::{
    ValidationErrors,
    catalog::{Catalog, Concurrency, LaunchSetting, ScheduleGroup},
    roles::Operation,
    usage::{EntityRef, usages},
    validate::validate_catalog,
};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect,
};

/// How agent `agent` of `application` runs across its pool, as its row says: `ANY` (one node)
/// when the agent was deleted meanwhile. The one reading of it for the runtime's decisions (the
/// watchdog moving or restarting a run, the breaker disabling or quarantining).
pub(crate) async fn agent_concurrency(
    db: &impl ConnectionTrait,
    application: &str,
    agent: &str,
) -> ServiceResult<Concurrency> {
    let stored: Option<String> =
        agents::Entity::find_by_id((application.to_owned(), agent.to_owned()))
            .select_only()
            .column(agents::Column::Concurrency)
            .into_tuple()
            .one(db)
            .await?;
    Ok(stored
        .as_deref()
        .and_then(Concurrency::parse)
        .unwrap_or(Concurrency::Any))
}

/// The catalog's revision, bumped by every catalog write of any replica: what the scheduler
/// and the broker reconciler poll to notice a change.
pub async fn revision(db: &impl ConnectionTrait) -> ServiceResult<i64> {
    Ok(catalog_meta::Entity::find_by_id(1)
        .one(db)
        .await?
        .map_or(0, |m| m.revision))
}

/// The applications whose agents read `data_queue`: its messages are theirs, and so is what
/// goes wrong with it (an unrouted replay's end, its exchange held by someone else).
pub async fn applications_reading(
    db: &impl ConnectionTrait,
    data_queue: &str,
) -> ServiceResult<Vec<String>> {
    use crate::entity::agents;
    Ok(agents::Entity::find()
        .select_only()
        .column(agents::Column::ApplicationId)
        .distinct()
        .filter(agents::Column::DataQueueId.eq(data_queue))
        .into_tuple()
        .all(db)
        .await?)
}

/// Runs `change` against the current catalog and commits the result if it is valid.
/// `focus` names the entity the caller is editing, for relative error paths.
async fn apply<F>(
    db: &DatabaseConnection,
    actor: &Principal,
    need: Operation,
    focus: Option<&EntityRef>,
    cause: Option<&str>,
    change: F,
) -> ServiceResult<(Catalog, ChangeSummary)>
where
    F: Fn(&mut Catalog) -> ServiceResult<()>,
{
    actor.require(need)?;
    let (txn, new, summary) = write::write(db, actor, focus, cause, change).await?;
    txn.commit().await?;
    log_change(actor, &summary);
    Ok((new, summary))
}

pub(crate) fn log_change(actor: &Principal, summary: &ChangeSummary) {
    if !summary.is_empty() {
        tracing::info!(actor = %actor.name, created = summary.created.len(), updated = summary.updated.len(),
            deleted = summary.deleted.len(), "catalog changed");
    }
}

/// The whole catalog, for export and for pages that show it.
pub async fn export(db: &impl ConnectionTrait, actor: &Principal) -> ServiceResult<Catalog> {
    actor.require(Operation::Read)?;
    Ok(readable(store::load(db).await?, actor))
}

/// The catalog as `actor` may read it: for anyone but admins, webhook URLs past their host
/// (they are often credentials: am_domain::masked::mask_webhook_url). Secrets are never read.
pub(crate) fn readable(mut catalog: Catalog, actor: &Principal) -> Catalog {
    if !actor.role.may(Operation::ReadHidden) {
        am_domain::catalog::mask_webhook_urls(&mut catalog);
    }
    catalog
}

/// Replaces the whole catalog with `catalog`: validated in full first, written all or nothing.
pub async fn import(
    db: &DatabaseConnection,
    actor: &Principal,
    catalog: Catalog,
) -> ServiceResult<ChangeSummary> {
    // Check before taking the lock (a broken document should not even queue behind writers),
    // and before sorting, so that error paths point into the document as the caller wrote it.
    let mut candidate = catalog;
    validate_catalog(&candidate).map_err(ServiceError::Invalid)?;
    candidate.normalize();
    let (_, summary) = apply(
        db,
        actor,
        Operation::EditCatalog,
        None,
        Some("catalog import"),
        move |c| {
            c.clone_from(&candidate);
            Ok(())
        },
    )
    .await?;
    Ok(summary)
}

pub async fn list<E: CatalogEntity>(
    db: &impl ConnectionTrait,
    actor: &Principal,
) -> ServiceResult<Vec<E>> {
    actor.require(Operation::Read)?;
    let catalog = readable(store::load_with(db, E::WITH_VALUES).await?, actor);
    Ok(E::list(&catalog).clone())
}

pub async fn get<E: CatalogEntity>(
    db: &impl ConnectionTrait,
    actor: &Principal,
    key: &EntityRef,
) -> ServiceResult<E> {
    actor.require(Operation::Read)?;
    let catalog = readable(store::load_with(db, E::WITH_VALUES).await?, actor);
    E::find(&catalog, key)
        .cloned()
        .ok_or_else(|| ServiceError::NotFound(key.to_string()))
}

pub async fn create<E: CatalogEntity>(
    db: &DatabaseConnection,
    actor: &Principal,
    entity: E,
) -> ServiceResult<E> {
    let key = entity.key();
    let created = entity.clone();
    apply(db, actor, Operation::EditCatalog, Some(&key), None, |c| {
        if E::position(c, &key).is_some() {
            return Err(ServiceError::Conflict(format!("{key} already exists")));
        }
        E::list_mut(c).push(entity.clone());
        Ok(())
    })
    .await?;
    Ok(created)
}

/// Replaces the entity named `key`. Its id is its identity: renaming is refused.
pub async fn update<E: CatalogEntity>(
    db: &DatabaseConnection,
    actor: &Principal,
    key: &EntityRef,
    entity: E,
) -> ServiceResult<E> {
    if &entity.key() != key {
        return Err(ServiceError::invalid(
            "id",
            format!(
                "the id cannot be changed (this is {key}; the body names {})",
                entity.key()
            ),
        ));
    }
    let updated = entity.clone();
    apply(db, actor, Operation::EditCatalog, Some(key), None, |c| {
        let i = E::position(c, key).ok_or_else(|| ServiceError::NotFound(key.to_string()))?;
        E::list_mut(c)[i] = entity.clone();
        Ok(())
    })
    .await?;
    Ok(updated)
}

/// Deletes the entity, refused while anything uses it (the message names every user). A
/// launch setting leaves the schedule groups it is a member of; a schedule group that is the
/// only group of a member is refused, naming the ways out ([`delete_group_with_members`]).
pub async fn delete<E: CatalogEntity>(
    db: &DatabaseConnection,
    actor: &Principal,
    key: &EntityRef,
) -> ServiceResult<()> {
    apply(db, actor, Operation::EditCatalog, None, None, |c| {
        let i = E::position(c, key).ok_or_else(|| ServiceError::NotFound(key.to_string()))?;
        match key {
            EntityRef::LaunchSetting(id) => leave_groups(c, id),
            EntityRef::ScheduleGroup(id) => {
                let alone = only_group_of(c, id);
                if !alone.is_empty() {
                    return Err(ServiceError::Conflict(format!(
                        "{key} is the only group of {} (a scheduled launch setting must be in \
                         one): delete them with it (`DELETE /api/v1/schedule-groups/{id}\
                         ?with_members=true`), add them to another group first, or delete them \
                         first (a launch setting leaves its groups when deleted)",
                        quoted(&alone)
                    )));
                }
            }
            _ => {}
        }
        let users = usages(c, key);
        if !users.is_empty() {
            return Err(ServiceError::Conflict(format!(
                "{key} is in use: {}",
                users.join("; ")
            )));
        }
        E::list_mut(c).remove(i);
        Ok(())
    })
    .await?;
    Ok(())
}

/// Deletes schedule group `id` and those of its members that are in no other group, in one
/// write: the way out of a group that is the only group of its members. What was deleted, as
/// the catalog's change summary names it.
pub async fn delete_group_with_members(
    db: &DatabaseConnection,
    actor: &Principal,
    id: &str,
) -> ServiceResult<Vec<String>> {
    let key = EntityRef::ScheduleGroup(id.to_owned());
    let (_, summary) = apply(db, actor, Operation::EditCatalog, None, None, |c| {
        let i = ScheduleGroup::position(c, &key)
            .ok_or_else(|| ServiceError::NotFound(key.to_string()))?;
        let alone = only_group_of(c, id);
        c.schedule_groups.remove(i);
        c.launch_settings.retain(|l| !alone.contains(&l.id));
        Ok(())
    })
    .await?;
    Ok(summary.deleted)
}

/// `ls` leaves every schedule group it is a member of (the others keep their order).
fn leave_groups(c: &mut Catalog, ls: &str) {
    for g in &mut c.schedule_groups {
        g.members.retain(|m| m != ls);
    }
}

/// The members of group `id` that are in no other group.
fn only_group_of(c: &Catalog, id: &str) -> Vec<String> {
    let Some(group) = c.schedule_groups.iter().find(|g| g.id == id) else {
        return Vec::new();
    };
    group
        .members
        .iter()
        .filter(|m| {
            !c.schedule_groups
                .iter()
                .any(|g| g.id != id && g.members.contains(m))
        })
        .cloned()
        .collect()
}

fn quoted(ids: &[String]) -> String {
    ids.iter()
        .map(|i| format!("'{i}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Creates or replaces a launch setting and, when `groups` is given, makes it a member of
/// exactly those schedule groups (appended at the end of groups it was not in yet). A
/// scheduled launch setting must be in a group, so both are saved in one step.
pub async fn save_launch_setting(
    db: &DatabaseConnection,
    actor: &Principal,
    setting: LaunchSetting,
    groups: Option<Vec<String>>,
    create_only: bool,
) -> ServiceResult<LaunchSetting> {
    let key = EntityRef::LaunchSetting(setting.id.clone());
    let saved = setting.clone();
    apply(db, actor, Operation::EditCatalog, Some(&key), None, |c| {
        match (LaunchSetting::position(c, &key), create_only) {
            (Some(_), true) => return Err(ServiceError::Conflict(format!("{key} already exists"))),
            (Some(i), false) => c.launch_settings[i] = setting.clone(),
            (None, _) => c.launch_settings.push(setting.clone()),
        }
        if let Some(groups) = &groups {
            let mut missing = ValidationErrors::new();
            for (i, g) in groups.iter().enumerate() {
                if c.schedule_group(g).is_none() {
                    missing.push(format!("groups[{i}]"), format!("no schedule group '{g}'"));
                }
            }
            if !missing.is_empty() {
                return Err(ServiceError::Invalid(missing));
            }
            let id = saved_id(&key);
            for g in &mut c.schedule_groups {
                let wanted = groups.contains(&g.id);
                let present = g.members.iter().any(|m| m == id);
                if wanted && !present {
                    g.members.push(id.to_owned());
                } else if !wanted && present {
                    g.members.retain(|m| m != id);
                }
            }
        }
        Ok(())
    })
    .await?;
    Ok(saved)
}

fn saved_id(key: &EntityRef) -> &str {
    match key {
        EntityRef::LaunchSetting(id) => id,
        _ => "",
    }
}

/// Why a launch setting or group is disabled: the text the pages show and, when the breaker
/// disabled it, the activation whose failures tripped it and the trip itself (its notification
/// is `breaker_tripped`, with the failure).
#[derive(Debug, Clone, Copy)]
pub struct Cause<'a> {
    pub text: &'a str,
    pub activation: Option<uuid::Uuid>,
    pub trip: Option<&'a am_domain::wire::BreakerTripped>,
}

impl<'a> From<&'a str> for Cause<'a> {
    fn from(text: &'a str) -> Self {
        Cause {
            text,
            activation: None,
            trip: None,
        }
    }
}

impl<'a> From<&'a String> for Cause<'a> {
    fn from(text: &'a String) -> Self {
        Cause::from(text.as_str())
    }
}

/// Sets (or, with an empty `secret`, removes) the secret that signs the webhook of an
/// application or launch setting (admins). It is write-only: nothing reads it back but the
/// notifier (docs/notifications.md).
pub async fn set_webhook_secret(
    db: &DatabaseConnection,
    actor: &Principal,
    key: &EntityRef,
    secret: &str,
) -> ServiceResult<()> {
    let cause = if secret.is_empty() {
        "webhook secret removed"
    } else {
        "webhook secret set"
    };
    apply(
        db,
        actor,
        Operation::EditCatalog,
        Some(key),
        Some(cause),
        |c| {
            let slot = match key {
                EntityRef::Application(id) => c
                    .applications
                    .iter_mut()
                    .find(|a| &a.id == id)
                    .map(|a| &mut a.channels.webhook_secret),
                EntityRef::LaunchSetting(id) => c
                    .launch_settings
                    .iter_mut()
                    .find(|l| &l.id == id)
                    .map(|l| &mut l.channels.webhook_secret),
                EntityRef::ScheduleGroup(id) => c
                    .schedule_groups
                    .iter_mut()
                    .find(|g| &g.id == id)
                    .map(|g| &mut g.channels.webhook_secret),
                other => {
                    return Err(ServiceError::invalid("", format!("{other} has no webhook")));
                }
            };
            *slot.ok_or_else(|| ServiceError::NotFound(key.to_string()))? = Some(secret.to_owned());
            Ok(())
        },
    )
    .await?;
    Ok(())
}

/// Enables or disables a launch setting or schedule group (operators may do this; it is not a
/// catalog edit). Audited with the cause; a disabled item records who disabled it and why.
pub async fn set_enabled<'a>(
    db: &DatabaseConnection,
    actor: &Principal,
    key: &EntityRef,
    enabled: bool,
    cause: impl Into<Cause<'a>>,
) -> ServiceResult<ChangeSummary> {
    actor.require(Operation::Toggle)?;
    let cause = cause.into();
    let (txn, _, summary) = write::write(db, actor, Some(key), Some(cause.text), |c| {
        match key {
            EntityRef::LaunchSetting(id) => {
                let ls = c.launch_settings.iter_mut().find(|l| &l.id == id);
                ls.ok_or_else(|| ServiceError::NotFound(key.to_string()))?
                    .enabled = enabled;
            }
            EntityRef::ScheduleGroup(id) => {
                let g = c.schedule_groups.iter_mut().find(|g| &g.id == id);
                g.ok_or_else(|| ServiceError::NotFound(key.to_string()))?
                    .enabled = enabled;
            }
            other => {
                return Err(ServiceError::invalid(
                    "",
                    format!("{other} cannot be enabled or disabled"),
                ));
            }
        }
        Ok(())
    })
    .await?;
    if !enabled && !summary.is_empty() {
        // The cause (who disabled it, or why the breaker did) is what the pages show; written
        // in the same transaction, so no reader ever sees the generic reason.
        set_disabled_reason(&txn, key, actor, cause).await?;
        let now = chrono::Utc::now();
        let notice = crate::notifications::events::disabled(
            key,
            &actor.name,
            cause.text,
            cause.activation,
            cause.trip,
            now,
        );
        if let Some(notice) = notice {
            crate::notifications::raise(&txn, notice, now).await?;
        }
    }
    txn.commit().await?;
    log_change(actor, &summary);
    Ok(summary)
}

async fn set_disabled_reason(
    db: &impl sea_orm::ConnectionTrait,
    key: &EntityRef,
    actor: &Principal,
    cause: Cause<'_>,
) -> ServiceResult<()> {
    use crate::entity::{launch_settings as ls, schedule_groups as sg};
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
    let reason = Expr::value(Some(cause.text.to_owned()));
    let by = Expr::value(Some(actor.name.clone()));
    let activation = Expr::value(cause.activation);
    match key {
        EntityRef::LaunchSetting(id) => {
            ls::Entity::update_many()
                .col_expr(ls::Column::DisabledReason, reason)
                .col_expr(ls::Column::DisabledBy, by)
                .col_expr(ls::Column::DisabledActivation, activation)
                .filter(ls::Column::Id.eq(id.as_str()))
                .filter(ls::Column::Enabled.eq(false))
                .exec(db)
                .await?;
        }
        EntityRef::ScheduleGroup(id) => {
            sg::Entity::update_many()
                .col_expr(sg::Column::DisabledReason, reason)
                .col_expr(sg::Column::DisabledBy, by)
                .col_expr(sg::Column::DisabledActivation, activation)
                .filter(sg::Column::Id.eq(id.as_str()))
                .filter(sg::Column::Enabled.eq(false))
                .exec(db)
                .await?;
        }
        _ => {}
    }
    Ok(())
}
