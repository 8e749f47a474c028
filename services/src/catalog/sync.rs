//! Writing the difference between two catalogs back, entity by entity, with an audit entry for
//! each change: parents created and updated first, then children; deletes children first.

use super::{
    kinds::{CatalogEntity, display_id},
    rows,
    store::{ChangeSummary, INSERT_BATCH, insert_all},
};
use crate::{
    Principal,
    audit::{self, AuditEntry},
    entity::*,
    error::ServiceResult,
};
use am_domain::catalog::{
    Agent, Application, Catalog, Classifier, DataQueue, LaunchSetting, Pool, ScheduleGroup,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelBehavior, ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseTransaction,
    DbBackend, EntityTrait, IntoActiveModel, QueryFilter,
};
use std::collections::{BTreeMap, HashSet};

struct Diff<'a, E> {
    created: Vec<&'a E>,
    updated: Vec<(&'a E, &'a E)>,
    deleted: Vec<&'a E>,
}

fn diff<'a, E: CatalogEntity>(old: &'a Catalog, new: &'a Catalog) -> Diff<'a, E> {
    let old_by_key: BTreeMap<String, &E> = E::list(old)
        .iter()
        .map(|e| (display_id(&e.key()), e))
        .collect();
    let new_keys: HashSet<String> = E::list(new).iter().map(|e| display_id(&e.key())).collect();
    let mut d = Diff {
        created: vec![],
        updated: vec![],
        deleted: vec![],
    };
    for e in E::list(new) {
        match old_by_key.get(&display_id(&e.key())) {
            None => d.created.push(e),
            Some(o) if *o != e => d.updated.push((o, e)),
            Some(_) => {}
        }
    }
    for (k, e) in &old_by_key {
        if !new_keys.contains(k) {
            d.deleted.push(e);
        }
    }
    d
}

/// Classifiers can hold tens of thousands of values; the audit log keeps their size, not a copy.
/// `enabled` is written out also where it is left out of documents for being the default, so a
/// re-enable reads `false → true` (not "removed").
fn audit_view<E: CatalogEntity>(e: &E) -> serde_json::Value {
    let mut v = serde_json::to_value(e).unwrap_or(serde_json::Value::Null);
    if matches!(E::LIST, "launch_settings" | "schedule_groups")
        && let Some(obj) = v.as_object_mut()
    {
        obj.entry("enabled")
            .or_insert(serde_json::Value::Bool(true));
    }
    if E::LIST == "classifiers"
        && let Some(obj) = v.as_object_mut()
    {
        let n = obj
            .get("values")
            .and_then(|x| x.as_array())
            .map_or(0, Vec::len);
        obj.remove("values");
        obj.insert("values_count".into(), n.into());
    }
    v
}

fn entity_type<E: CatalogEntity>() -> String {
    E::NOUN.replace(' ', "_")
}

fn audit_diff<E: CatalogEntity>(
    actor: &Principal,
    d: &Diff<'_, E>,
    cause: Option<&str>,
    summary: &mut ChangeSummary,
    entries: &mut Vec<AuditEntry>,
) {
    let ty = entity_type::<E>();
    let with_cause = |e: AuditEntry| match cause {
        Some(c) => e.cause(c),
        None => e,
    };
    for e in &d.created {
        let id = display_id(&e.key());
        entries.push(with_cause(
            AuditEntry::new(actor, "create", &ty, &id).after(&audit_view(*e)),
        ));
        summary.created.push(format!("{ty}:{id}"));
    }
    for (o, n) in &d.updated {
        let id = display_id(&n.key());
        let (before, after) = (audit_view(*o), audit_view(*n));
        // The entity changed, its view did not: what changed is what the log never shows.
        let hidden = (before == after).then(|| {
            if E::LIST == "classifiers" {
                "its values changed (the log counts them)"
            } else {
                "its webhook secret changed (secrets are never shown)"
            }
        });
        let entry = AuditEntry::new(actor, "update", &ty, &id)
            .before(&before)
            .after(&after);
        entries.push(match (hidden, cause) {
            (Some(h), Some(c)) => entry.cause(format!("{c}; {h}")),
            (Some(h), None) => entry.cause(h),
            (None, _) => with_cause(entry),
        });
        summary.updated.push(format!("{ty}:{id}"));
    }
    for e in &d.deleted {
        let id = display_id(&e.key());
        entries.push(with_cause(
            AuditEntry::new(actor, "delete", &ty, &id).before(&audit_view(*e)),
        ));
        summary.deleted.push(format!("{ty}:{id}"));
    }
}

async fn ensure_hosts(
    txn: &DatabaseTransaction,
    names: &[String],
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    if names.is_empty() {
        return Ok(());
    }
    let existing: HashSet<String> = hosts::Entity::find()
        .filter(hosts::Column::Name.is_in(names.iter().cloned()))
        .all(txn)
        .await?
        .into_iter()
        .map(|h| h.name)
        .collect();
    let missing: Vec<hosts::ActiveModel> = names
        .iter()
        .filter(|n| !existing.contains(*n))
        .collect::<HashSet<_>>()
        .into_iter()
        .map(|n| hosts::ActiveModel {
            name: sea_orm::Set(n.clone()),
            created_at: sea_orm::Set(now),
        })
        .collect();
    if !missing.is_empty() {
        hosts::Entity::insert_many(missing)
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}

/// Writes the host lists of `pools`, replacing what they held.
async fn write_pool_hosts(
    txn: &DatabaseTransaction,
    pools: &[&Pool],
    replace: bool,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    if replace {
        for chunk in pools.chunks(INSERT_BATCH) {
            pool_hosts::Entity::delete_many()
                .filter(pool_hosts::Column::PoolId.is_in(chunk.iter().map(|p| p.id.clone())))
                .exec(txn)
                .await?;
        }
    }
    let names: Vec<String> = pools.iter().flat_map(|p| p.hosts.iter().cloned()).collect();
    for chunk in names.chunks(INSERT_BATCH) {
        ensure_hosts(txn, chunk, now).await?;
    }
    let rows: Vec<pool_hosts::ActiveModel> = pools
        .iter()
        .flat_map(|pool| {
            pool.hosts.iter().map(|h| pool_hosts::ActiveModel {
                pool_id: sea_orm::Set(pool.id.clone()),
                host_name: sea_orm::Set(h.clone()),
            })
        })
        .collect();
    insert_all(txn, rows).await
}

async fn write_classifier_values(
    txn: &DatabaseTransaction,
    c: &Classifier,
    replace: bool,
) -> ServiceResult<()> {
    if replace {
        classifier_values::Entity::delete_many()
            .filter(classifier_values::Column::ApplicationId.eq(&c.application))
            .filter(classifier_values::Column::ClassifierName.eq(&c.name))
            .exec(txn)
            .await?;
    }
    insert_all(txn, rows::classifier_value_rows(c)).await
}

/// Writes the member lists of `groups`, replacing what they held.
async fn write_members(
    txn: &DatabaseTransaction,
    groups: &[&ScheduleGroup],
    replace: bool,
) -> ServiceResult<()> {
    if replace {
        for chunk in groups.chunks(INSERT_BATCH) {
            schedule_group_members::Entity::delete_many()
                .filter(
                    schedule_group_members::Column::GroupId
                        .is_in(chunk.iter().map(|g| g.id.clone())),
                )
                .exec(txn)
                .await?;
        }
    }
    let rows: Vec<schedule_group_members::ActiveModel> = groups
        .iter()
        .flat_map(|g| {
            g.members
                .iter()
                .enumerate()
                .map(|(i, ls)| schedule_group_members::ActiveModel {
                    group_id: sea_orm::Set(g.id.clone()),
                    launch_setting_id: sea_orm::Set(ls.clone()),
                    position: sea_orm::Set(i32::try_from(i).unwrap_or(i32::MAX)),
                })
        })
        .collect();
    insert_all(txn, rows).await
}

/// Classifier values written by one change from which PostgreSQL's statistics of them are
/// brought up to date at once.
const ANALYZE_AFTER: usize = 10_000;

/// The seven kinds' differences between the catalog the database holds and the one to write.
struct Diffs<'a> {
    pools: Diff<'a, Pool>,
    apps: Diff<'a, Application>,
    queues: Diff<'a, DataQueue>,
    classifiers: Diff<'a, Classifier>,
    agents: Diff<'a, Agent>,
    settings: Diff<'a, LaunchSetting>,
    groups: Diff<'a, ScheduleGroup>,
}

impl<'a> Diffs<'a> {
    fn of(old: &'a Catalog, new: &'a Catalog) -> Self {
        Self {
            pools: diff(old, new),
            apps: diff(old, new),
            queues: diff(old, new),
            classifiers: diff(old, new),
            agents: diff(old, new),
            settings: diff(old, new),
            groups: diff(old, new),
        }
    }

    /// One audit entry per changed entity, and the summary of the change.
    fn audit(&self, actor: &Principal, cause: Option<&str>) -> (ChangeSummary, Vec<AuditEntry>) {
        let mut summary = ChangeSummary::default();
        let mut entries = Vec::new();
        audit_diff(actor, &self.pools, cause, &mut summary, &mut entries);
        audit_diff(actor, &self.apps, cause, &mut summary, &mut entries);
        audit_diff(actor, &self.queues, cause, &mut summary, &mut entries);
        audit_diff(actor, &self.classifiers, cause, &mut summary, &mut entries);
        audit_diff(actor, &self.agents, cause, &mut summary, &mut entries);
        audit_diff(actor, &self.settings, cause, &mut summary, &mut entries);
        audit_diff(actor, &self.groups, cause, &mut summary, &mut entries);
        (summary, entries)
    }
}

/// Writes what differs between `old` (what the database holds) and `new`, which must already
/// be valid. Creates and updates go parents first so references resolve; deletes go children
/// first, after every update has moved references away from what is deleted.
pub async fn sync(
    txn: &DatabaseTransaction,
    actor: &Principal,
    old: &Catalog,
    new: &Catalog,
    cause: Option<&str>,
) -> ServiceResult<ChangeSummary> {
    let now = Utc::now();
    let d = Diffs::of(old, new);
    write_pools(txn, &d.pools, now).await?;
    write_places(txn, &d, now).await?;
    write_classifiers(txn, &d.classifiers, now).await?;
    write_runnables(txn, &d, now).await?;
    write_groups(txn, &d.groups, now).await?;
    delete_removed(txn, &d).await?;
    let (summary, entries) = d.audit(actor, cause);
    audit::record_all(txn, entries).await?;
    Ok(summary)
}

/// Inserts the rows of the created entities of one kind and updates those of the updated ones;
/// `row` builds an entity's row, given the entity it replaces (`None` when created).
async fn write_rows<'a, T, A>(
    txn: &DatabaseTransaction,
    d: &Diff<'a, T>,
    row: impl Fn(&'a T, Option<&'a T>) -> A,
) -> ServiceResult<()>
where
    A: ActiveModelTrait + ActiveModelBehavior + Clone + Send,
    <A::Entity as EntityTrait>::Model: IntoActiveModel<A>,
{
    insert_all(txn, d.created.iter().map(|e| row(e, None)).collect()).await?;
    for (old, e) in &d.updated {
        A::Entity::update(row(e, Some(old))).exec(txn).await?;
    }
    Ok(())
}

async fn write_pools(
    txn: &DatabaseTransaction,
    pools: &Diff<'_, Pool>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    write_rows(txn, pools, |p, old| rows::pool_row(p, now, old.is_none())).await?;
    write_pool_hosts(txn, &pools.created, false, now).await?;
    let rehosted: Vec<_> = pools
        .updated
        .iter()
        .filter(|(o, p)| o.hosts != p.hosts)
        .map(|(_, p)| *p)
        .collect();
    write_pool_hosts(txn, &rehosted, true, now).await
}

/// Applications and data queues: created and updated.
async fn write_places(
    txn: &DatabaseTransaction,
    d: &Diffs<'_>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    write_rows(txn, &d.apps, |a, old| {
        rows::application_row(a, now, old.is_none())
    })
    .await?;
    write_rows(txn, &d.queues, |q, old| {
        rows::data_queue_row(q, now, old.is_none())
    })
    .await?;
    Ok(())
}

async fn write_classifiers(
    txn: &DatabaseTransaction,
    classifiers: &Diff<'_, Classifier>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    write_rows(txn, classifiers, |c, _| rows::classifier_row(c, now)).await?;
    let mut written = 0;
    for c in &classifiers.created {
        write_classifier_values(txn, c, false).await?;
        written += c.values.len();
    }
    for (o, c) in &classifiers.updated {
        if o.values != c.values {
            write_classifier_values(txn, c, true).await?;
            written += c.values.len();
        }
    }
    if written >= ANALYZE_AFTER && txn.get_database_backend() == DbBackend::Postgres {
        // Without statistics PostgreSQL reads a classifier's labels through the order index
        // and filters every value (25 ms for 10 codes of 100,000, measured) until autovacuum
        // comes by; analysed in the same transaction (its own rows count), the first reader
        // after commit uses the primary key (0.2 ms).
        txn.execute_unprepared("ANALYZE classifier_values").await?;
    }
    Ok(())
}

/// Agents and launch settings: created and updated (a re-enabled launch setting gets back
/// every host its breaker quarantined).
async fn write_runnables(
    txn: &DatabaseTransaction,
    d: &Diffs<'_>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    write_rows(txn, &d.agents, |a, old| {
        rows::agent_row(a, now, old.is_none())
    })
    .await?;
    write_rows(txn, &d.settings, |l, old| {
        rows::launch_setting_row(l, now, old.map(|o| o.enabled))
    })
    .await?;
    for (o, l) in &d.settings.updated {
        if l.enabled && !o.enabled {
            crate::quarantine::clear_all(txn, &l.id).await?;
        }
    }
    Ok(())
}

async fn write_groups(
    txn: &DatabaseTransaction,
    groups: &Diff<'_, ScheduleGroup>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    write_rows(txn, groups, |g, old| {
        rows::schedule_group_row(g, now, old.map(|o| o.enabled))
    })
    .await?;
    write_members(txn, &groups.created, false).await?;
    let regrouped: Vec<_> = groups
        .updated
        .iter()
        .filter(|(o, g)| o.members != g.members)
        .map(|(_, g)| *g)
        .collect();
    write_members(txn, &regrouped, true).await
}

/// Deletes what `new` no longer holds, children first.
async fn delete_removed(txn: &DatabaseTransaction, d: &Diffs<'_>) -> ServiceResult<()> {
    for chunk in d.groups.deleted.chunks(INSERT_BATCH) {
        schedule_groups::Entity::delete_many()
            .filter(schedule_groups::Column::Id.is_in(chunk.iter().map(|g| g.id.clone())))
            .exec(txn)
            .await?;
    }
    for chunk in d.settings.deleted.chunks(INSERT_BATCH) {
        let chunk_ids = || chunk.iter().map(|l| l.id.clone());
        // Memberships of groups that stay were rewritten above; these are of deleted groups.
        schedule_group_members::Entity::delete_many()
            .filter(schedule_group_members::Column::LaunchSettingId.is_in(chunk_ids()))
            .exec(txn)
            .await?;
        launch_settings::Entity::delete_many()
            .filter(launch_settings::Column::Id.is_in(chunk_ids()))
            .exec(txn)
            .await?;
    }
    for a in &d.agents.deleted {
        agents::Entity::delete_by_id((a.application.clone(), a.id.clone()))
            .exec(txn)
            .await?;
    }
    for c in &d.classifiers.deleted {
        classifiers::Entity::delete_by_id((c.application.clone(), c.name.clone()))
            .exec(txn)
            .await?;
    }
    for chunk in d.queues.deleted.chunks(INSERT_BATCH) {
        data_queues::Entity::delete_many()
            .filter(data_queues::Column::Id.is_in(chunk.iter().map(|q| q.id.clone())))
            .exec(txn)
            .await?;
    }
    for chunk in d.apps.deleted.chunks(INSERT_BATCH) {
        applications::Entity::delete_many()
            .filter(applications::Column::Id.is_in(chunk.iter().map(|a| a.id.clone())))
            .exec(txn)
            .await?;
    }
    for chunk in d.pools.deleted.chunks(INSERT_BATCH) {
        pools::Entity::delete_many()
            .filter(pools::Column::Id.is_in(chunk.iter().map(|p| p.id.clone())))
            .exec(txn)
            .await?;
    }
    Ok(())
}
