//! Reading the whole catalog from the database, and the multi-row inserts its writes use
//! (`sync.rs` writes the difference between two catalogs).

use super::rows;
use crate::{entity::*, error::ServiceResult};
use am_domain::catalog::{Catalog, ClassifierValue};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryOrder};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Rows per INSERT when writing many rows: rows of ~25 columns stay well under SQLite's
/// bound-parameter limit (32,766). One statement per entity made a 100,000-pool import hold
/// the write lock for a minute.
pub(super) const INSERT_BATCH: usize = 500;

/// Inserts `rows` in multi-row statements.
pub(super) async fn insert_all<A>(txn: &DatabaseTransaction, rows: Vec<A>) -> ServiceResult<()>
where
    A: ActiveModelTrait + Clone + Send,
{
    for chunk in rows.chunks(INSERT_BATCH) {
        A::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}

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
        .collect::<ServiceResult<_>>()?;
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
    catalog.clean_display_texts();
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
