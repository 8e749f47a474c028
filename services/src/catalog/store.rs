//! Reading the whole catalog from the database and writing the difference between two
//! catalogs back, entity by entity, with an audit entry for each change.

use super::{
    kinds::{CatalogEntity, display_id},
    rows,
};
use crate::{
    Principal,
    audit::{self, AuditEntry},
    entity::*,
    error::ServiceResult,
};
use am_domain::catalog::{Catalog, Classifier, ClassifierValue};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter, QueryOrder,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Rows per INSERT when writing many child rows (classifier values): well under SQLite's
/// bound-parameter limit.
const INSERT_BATCH: usize = 500;

/// Loads every catalog entity, lists in key order.
pub async fn load(db: &impl ConnectionTrait) -> ServiceResult<Catalog> {
    load_with(db, true).await
}

/// As [`load`]; without classifier values when `values` is false (pages that only list
/// entities need not read a 50,000-value classifier).
pub async fn load_with(db: &impl ConnectionTrait, with_values: bool) -> ServiceResult<Catalog> {
    let mut catalog = Catalog::new();

    let mut hosts_by_pool: HashMap<String, Vec<String>> = HashMap::new();
    for ph in pool_hosts::Entity::find().all(db).await? {
        hosts_by_pool
            .entry(ph.pool_id)
            .or_default()
            .push(ph.host_name);
    }
    catalog.pools = pools::Entity::find()
        .all(db)
        .await?
        .into_iter()
        .map(|p| {
            let hosts = hosts_by_pool.remove(&p.id).unwrap_or_default();
            rows::pool(p, hosts)
        })
        .collect();

    catalog.applications = applications::Entity::find()
        .all(db)
        .await?
        .into_iter()
        .map(rows::application)
        .collect();
    catalog.data_queues = data_queues::Entity::find()
        .all(db)
        .await?
        .into_iter()
        .map(rows::data_queue)
        .collect::<ServiceResult<_>>()?;

    let mut values: HashMap<(String, String), Vec<ClassifierValue>> = HashMap::new();
    let value_rows = if with_values {
        classifier_values::Entity::find()
            .order_by_asc(classifier_values::Column::ApplicationId)
            .order_by_asc(classifier_values::Column::ClassifierName)
            .order_by_asc(classifier_values::Column::Position)
            .all(db)
            .await?
    } else {
        Vec::new()
    };
    for v in value_rows {
        values
            .entry((v.application_id, v.classifier_name))
            .or_default()
            .push(ClassifierValue {
                code: v.code,
                label: v.label,
            });
    }
    catalog.classifiers = classifiers::Entity::find()
        .all(db)
        .await?
        .into_iter()
        .map(|c| {
            let vals = values
                .remove(&(c.application_id.clone(), c.name.clone()))
                .unwrap_or_default();
            rows::classifier(c, vals)
        })
        .collect();

    catalog.agents = agents::Entity::find()
        .all(db)
        .await?
        .into_iter()
        .map(rows::agent)
        .collect::<ServiceResult<_>>()?;
    catalog.launch_settings = launch_settings::Entity::find()
        .all(db)
        .await?
        .into_iter()
        .map(rows::launch_setting)
        .collect::<ServiceResult<_>>()?;

    let mut members: HashMap<String, Vec<String>> = HashMap::new();
    for m in schedule_group_members::Entity::find()
        .order_by_asc(schedule_group_members::Column::GroupId)
        .order_by_asc(schedule_group_members::Column::Position)
        .all(db)
        .await?
    {
        members
            .entry(m.group_id)
            .or_default()
            .push(m.launch_setting_id);
    }
    catalog.schedule_groups = schedule_groups::Entity::find()
        .all(db)
        .await?
        .into_iter()
        .map(|g| {
            let m = members.remove(&g.id).unwrap_or_default();
            rows::schedule_group(g, m)
        })
        .collect::<ServiceResult<_>>()?;

    catalog.normalize();
    Ok(catalog)
}

/// What a write changed, as `kind:id` strings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ChangeSummary {
    pub created: Vec<String>,
    pub updated: Vec<String>,
    pub deleted: Vec<String>,
}

impl ChangeSummary {
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.updated.is_empty() && self.deleted.is_empty()
    }
}

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
fn audit_view<E: CatalogEntity>(e: &E) -> serde_json::Value {
    let mut v = serde_json::to_value(e).unwrap_or(serde_json::Value::Null);
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

async fn audit_diff<E: CatalogEntity>(
    txn: &DatabaseTransaction,
    actor: &Principal,
    d: &Diff<'_, E>,
    cause: Option<&str>,
    summary: &mut ChangeSummary,
) -> ServiceResult<()> {
    let ty = entity_type::<E>();
    let with_cause = |e: AuditEntry| match cause {
        Some(c) => e.cause(c),
        None => e,
    };
    for e in &d.created {
        let id = display_id(&e.key());
        audit::record(
            txn,
            with_cause(AuditEntry::new(actor, "create", &ty, &id).after(&audit_view(*e))),
        )
        .await?;
        summary.created.push(format!("{ty}:{id}"));
    }
    for (o, n) in &d.updated {
        let id = display_id(&n.key());
        let entry = AuditEntry::new(actor, "update", &ty, &id)
            .before(&audit_view(*o))
            .after(&audit_view(*n));
        audit::record(txn, with_cause(entry)).await?;
        summary.updated.push(format!("{ty}:{id}"));
    }
    for e in &d.deleted {
        let id = display_id(&e.key());
        audit::record(
            txn,
            with_cause(AuditEntry::new(actor, "delete", &ty, &id).before(&audit_view(*e))),
        )
        .await?;
        summary.deleted.push(format!("{ty}:{id}"));
    }
    Ok(())
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

async fn write_pool_hosts(
    txn: &DatabaseTransaction,
    pool: &am_domain::catalog::Pool,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    pool_hosts::Entity::delete_many()
        .filter(pool_hosts::Column::PoolId.eq(&pool.id))
        .exec(txn)
        .await?;
    ensure_hosts(txn, &pool.hosts, now).await?;
    let rows: Vec<pool_hosts::ActiveModel> = pool
        .hosts
        .iter()
        .map(|h| pool_hosts::ActiveModel {
            pool_id: sea_orm::Set(pool.id.clone()),
            host_name: sea_orm::Set(h.clone()),
        })
        .collect();
    if !rows.is_empty() {
        pool_hosts::Entity::insert_many(rows)
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}

async fn write_classifier_values(txn: &DatabaseTransaction, c: &Classifier) -> ServiceResult<()> {
    classifier_values::Entity::delete_many()
        .filter(classifier_values::Column::ApplicationId.eq(&c.application))
        .filter(classifier_values::Column::ClassifierName.eq(&c.name))
        .exec(txn)
        .await?;
    let rows = rows::classifier_value_rows(c);
    for chunk in rows.chunks(INSERT_BATCH) {
        classifier_values::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}

async fn write_members(
    txn: &DatabaseTransaction,
    g: &am_domain::catalog::ScheduleGroup,
) -> ServiceResult<()> {
    schedule_group_members::Entity::delete_many()
        .filter(schedule_group_members::Column::GroupId.eq(&g.id))
        .exec(txn)
        .await?;
    let rows: Vec<schedule_group_members::ActiveModel> = g
        .members
        .iter()
        .enumerate()
        .map(|(i, ls)| schedule_group_members::ActiveModel {
            group_id: sea_orm::Set(g.id.clone()),
            launch_setting_id: sea_orm::Set(ls.clone()),
            position: sea_orm::Set(i32::try_from(i).unwrap_or(i32::MAX)),
        })
        .collect();
    if !rows.is_empty() {
        schedule_group_members::Entity::insert_many(rows)
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
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
    let mut summary = ChangeSummary::default();

    let pools = diff::<am_domain::catalog::Pool>(old, new);
    let apps = diff::<am_domain::catalog::Application>(old, new);
    let queues = diff::<am_domain::catalog::DataQueue>(old, new);
    let classifiers = diff::<Classifier>(old, new);
    let agents = diff::<am_domain::catalog::Agent>(old, new);
    let settings = diff::<am_domain::catalog::LaunchSetting>(old, new);
    let groups = diff::<am_domain::catalog::ScheduleGroup>(old, new);

    for p in &pools.created {
        pools::Entity::insert(rows::pool_row(p, now, true))
            .exec_without_returning(txn)
            .await?;
        write_pool_hosts(txn, p, now).await?;
    }
    for (o, p) in &pools.updated {
        pools::Entity::update(rows::pool_row(p, now, false))
            .exec(txn)
            .await?;
        if o.hosts != p.hosts {
            write_pool_hosts(txn, p, now).await?;
        }
    }
    for a in &apps.created {
        applications::Entity::insert(rows::application_row(a, now, true))
            .exec_without_returning(txn)
            .await?;
    }
    for (_, a) in &apps.updated {
        applications::Entity::update(rows::application_row(a, now, false))
            .exec(txn)
            .await?;
    }
    for q in &queues.created {
        data_queues::Entity::insert(rows::data_queue_row(q, now, true))
            .exec_without_returning(txn)
            .await?;
    }
    for (_, q) in &queues.updated {
        data_queues::Entity::update(rows::data_queue_row(q, now, false))
            .exec(txn)
            .await?;
    }
    for c in &classifiers.created {
        classifiers::Entity::insert(rows::classifier_row(c, now))
            .exec_without_returning(txn)
            .await?;
        write_classifier_values(txn, c).await?;
    }
    for (o, c) in &classifiers.updated {
        classifiers::Entity::update(rows::classifier_row(c, now))
            .exec(txn)
            .await?;
        if o.values != c.values {
            write_classifier_values(txn, c).await?;
        }
    }
    for a in &agents.created {
        agents::Entity::insert(rows::agent_row(a, now, true))
            .exec_without_returning(txn)
            .await?;
    }
    for (_, a) in &agents.updated {
        agents::Entity::update(rows::agent_row(a, now, false))
            .exec(txn)
            .await?;
    }
    for l in &settings.created {
        launch_settings::Entity::insert(rows::launch_setting_row(l, now, None))
            .exec_without_returning(txn)
            .await?;
    }
    for (o, l) in &settings.updated {
        launch_settings::Entity::update(rows::launch_setting_row(l, now, Some(o.enabled)))
            .exec(txn)
            .await?;
    }
    for g in &groups.created {
        schedule_groups::Entity::insert(rows::schedule_group_row(g, now, None))
            .exec_without_returning(txn)
            .await?;
        write_members(txn, g).await?;
    }
    for (o, g) in &groups.updated {
        schedule_groups::Entity::update(rows::schedule_group_row(g, now, Some(o.enabled)))
            .exec(txn)
            .await?;
        if o.members != g.members {
            write_members(txn, g).await?;
        }
    }

    for g in &groups.deleted {
        schedule_groups::Entity::delete_by_id(g.id.clone())
            .exec(txn)
            .await?;
    }
    for l in &settings.deleted {
        // Memberships of groups that stay were rewritten above; these are of deleted groups.
        schedule_group_members::Entity::delete_many()
            .filter(schedule_group_members::Column::LaunchSettingId.eq(&l.id))
            .exec(txn)
            .await?;
        launch_settings::Entity::delete_by_id(l.id.clone())
            .exec(txn)
            .await?;
    }
    for a in &agents.deleted {
        agents::Entity::delete_by_id((a.application.clone(), a.id.clone()))
            .exec(txn)
            .await?;
    }
    for c in &classifiers.deleted {
        classifiers::Entity::delete_by_id((c.application.clone(), c.name.clone()))
            .exec(txn)
            .await?;
    }
    for q in &queues.deleted {
        data_queues::Entity::delete_by_id(q.id.clone())
            .exec(txn)
            .await?;
    }
    for a in &apps.deleted {
        applications::Entity::delete_by_id(a.id.clone())
            .exec(txn)
            .await?;
    }
    for p in &pools.deleted {
        pools::Entity::delete_by_id(p.id.clone()).exec(txn).await?;
    }

    audit_diff(txn, actor, &pools, cause, &mut summary).await?;
    audit_diff(txn, actor, &apps, cause, &mut summary).await?;
    audit_diff(txn, actor, &queues, cause, &mut summary).await?;
    audit_diff(txn, actor, &classifiers, cause, &mut summary).await?;
    audit_diff(txn, actor, &agents, cause, &mut summary).await?;
    audit_diff(txn, actor, &settings, cause, &mut summary).await?;
    audit_diff(txn, actor, &groups, cause, &mut summary).await?;
    Ok(summary)
}
