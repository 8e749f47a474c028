//! Recording a node's publication: the node row, the agents it offers, and what its agents and
//! classifiers change in the catalog — through the catalog's own write path (lock, whole-catalog
//! validation, audited difference), as the node's own actor.

use super::{LIVE, int};
use crate::{
    Principal,
    catalog::{apply_in, load, log_change},
    entity::{agents, applications, classifiers, node_agents, nodes},
    error::{ServiceError, ServiceResult},
};
use am_domain::{
    catalog::{Catalog, Classifier},
    publication::{Merged, Refused, merge},
    wire::{Publication, PublishedAgent},
};
use chrono::{DateTime, Utc};
use nodes::Column as C;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, DatabaseTransaction,
    EntityTrait, QueryFilter, QuerySelect, sea_query::Expr, sea_query::OnConflict,
};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The node as the audit log names it: `node billing/app-01`.
fn actor(p: &Publication) -> Principal {
    Principal::system(format!("node {}/{}", p.application, p.host))
}

/// Records a publication. The node row and its offered agents are always recorded; agents and
/// classifiers only when the application is in the catalog. Changes that would break a catalog
/// rule are left out (and logged); the published schemas are remembered anyway, to show drift.
/// Idempotent: the same publication again writes nothing but the node row.
pub async fn record_publication(
    db: &DatabaseConnection,
    p: &Publication,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let txn = crate::db::begin_write(db).await?;
    let known = applications::Entity::find_by_id(p.application.as_str())
        .one(&txn)
        .await?
        .is_some();
    upsert_node(&txn, p, !known, now).await?;
    replace_offered(&txn, p).await?;
    if !known {
        tracing::warn!(application = %p.application, host = %p.host,
            "publication of an application that is not in the catalog: kept until the application is created");
        txn.commit().await?;
        return Ok(());
    }

    // Decide without the catalog lock whether anything changes, so that a node restarting with
    // the same code does not serialize behind catalog writers nor bump the revision.
    let before = load(&txn).await?;
    let merged = merge(&before, p);
    let marks = Marks::read(&txn, p, &merged.catalog).await?;
    if merged.catalog == before && marks.is_empty() {
        record_refused(&txn, p, &merged.refused).await?;
        return Ok(txn.commit().await?);
    }

    let actor = actor(p);
    let cause = format!(
        "published by node {}/{}, version {}",
        p.application, p.host, p.version
    );
    let mut locked_before = Catalog::new();
    let mut refused = Vec::new();
    let (after, summary) = apply_in(&txn, &actor, None, Some(&cause), |c| {
        let Merged {
            catalog,
            refused: r,
        } = merge(c, p);
        locked_before = std::mem::replace(c, catalog);
        refused = r;
        Ok(())
    })
    .await?;
    for r in &refused {
        tracing::warn!(application = %p.application, host = %p.host, entity = %r.entity,
            errors = %r.errors, "published change left out: it would break a catalog rule");
    }
    record_refused(&txn, p, &refused).await?;
    let marks = Marks::read(&txn, p, &after).await?;
    marks.write(&txn, p, &locked_before, &after, now).await?;
    txn.commit().await?;
    log_change(&actor, &summary);
    Ok(())
}

/// Applies the publications that waited for their application, now that it is in the
/// catalog; returns how many. Run by the watchdog on every pass.
pub async fn apply_waiting_publications(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
) -> ServiceResult<usize> {
    let waiting: Vec<(String, String, Option<String>)> = nodes::Entity::find()
        .select_only()
        .columns([C::ApplicationId, C::Host, C::WaitingPublication])
        .filter(C::WaitingPublication.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    if waiting.is_empty() {
        return Ok(0);
    }
    let known: HashSet<String> = applications::Entity::find()
        .select_only()
        .column(applications::Column::Id)
        .filter(applications::Column::Id.is_in(waiting.iter().map(|(app, _, _)| app.clone())))
        .into_tuple()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let mut applied = 0;
    for (app, host, json) in waiting {
        if !known.contains(&app) {
            continue;
        }
        match json.as_deref().map(serde_json::from_str::<Publication>) {
            Some(Ok(p)) => {
                record_publication(db, &p, now).await?;
                tracing::info!(application = %app, %host, "waiting publication applied: the application is in the catalog now");
                applied += 1;
            }
            Some(Err(e)) => {
                // Written by us from a decoded publication: unreadable only across an
                // incompatible upgrade. Dropped; the node's next publication brings it again.
                tracing::warn!(application = %app, %host, error = %e, "waiting publication unreadable; dropped");
                nodes::Entity::update_many()
                    .col_expr(C::WaitingPublication, Expr::value(Option::<String>::None))
                    .filter(C::ApplicationId.eq(app.as_str()))
                    .filter(C::Host.eq(host.as_str()))
                    .exec(db)
                    .await?;
            }
            None => {}
        }
    }
    Ok(applied)
}

/// Keeps on the node's row what of its publication the catalog could not take (none: cleared),
/// for the schema-drift page.
async fn record_refused(
    txn: &DatabaseTransaction,
    p: &Publication,
    refused: &[Refused],
) -> ServiceResult<()> {
    let json = if refused.is_empty() {
        None
    } else {
        Some(serde_json::to_string(refused).map_err(|e| ServiceError::Internal(e.to_string()))?)
    };
    nodes::Entity::update_many()
        .col_expr(C::RefusedChanges, Expr::value(json))
        .filter(C::ApplicationId.eq(p.application.as_str()))
        .filter(C::Host.eq(p.host.as_str()))
        .exec(txn)
        .await?;
    Ok(())
}

async fn upsert_node(
    txn: &DatabaseTransaction,
    p: &Publication,
    waiting: bool,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    super::back_if_lost(txn, &p.application, &p.host, now).await?;
    let row = nodes::ActiveModel {
        application_id: Set(p.application.clone()),
        host: Set(p.host.clone()),
        version: Set(p.version.clone()),
        capacity: Set(int(p.capacity)),
        running: Set(0),
        load: Set(0.0),
        started_at: Set(now),
        last_heartbeat_at: Set(now),
        status: Set(LIVE.to_owned()),
        protocol_version: Set(int(p.protocol)),
        waiting_publication: Set(if waiting {
            serde_json::to_string(p).ok()
        } else {
            None
        }),
        refused_changes: Set(None),
    };
    nodes::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([C::ApplicationId, C::Host])
                .update_columns([
                    C::Version,
                    C::ProtocolVersion,
                    C::WaitingPublication,
                    C::Capacity,
                    C::Running,
                    C::Load,
                    C::StartedAt,
                    C::LastHeartbeatAt,
                    C::Status,
                ])
                .to_owned(),
        )
        .exec_without_returning(txn)
        .await?;
    Ok(())
}

/// Replaces the agents the node offers with those of this publication.
async fn replace_offered(txn: &DatabaseTransaction, p: &Publication) -> ServiceResult<()> {
    node_agents::Entity::delete_many()
        .filter(node_agents::Column::ApplicationId.eq(p.application.as_str()))
        .filter(node_agents::Column::Host.eq(p.host.as_str()))
        .exec(txn)
        .await?;
    let ids: BTreeSet<&str> = p.agents.iter().map(|a| a.id.as_str()).collect();
    let rows: Vec<node_agents::ActiveModel> = ids
        .into_iter()
        .map(|id| node_agents::ActiveModel {
            application_id: Set(p.application.clone()),
            host: Set(p.host.clone()),
            agent_id: Set(id.to_owned()),
        })
        .collect();
    if !rows.is_empty() {
        node_agents::Entity::insert_many(rows)
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}

/// The suggestions of a published agent as stored beside the agent (`null` when none).
fn suggestions(a: &PublishedAgent) -> Option<serde_json::Value> {
    let mut m = serde_json::Map::new();
    if let Some(q) = &a.suggested_data_queue {
        m.insert("data_queue".into(), q.clone().into());
    }
    if let Some(c) = a.suggested_concurrency {
        m.insert("concurrency".into(), serde_json::to_value(c).ok()?);
    }
    if let Some(o) = a.suggested_overlap {
        m.insert("overlap".into(), serde_json::to_value(o).ok()?);
    }
    (!m.is_empty()).then_some(serde_json::Value::Object(m))
}

fn schema_json(a: &PublishedAgent) -> serde_json::Value {
    serde_json::to_value(&a.parameters).unwrap_or(serde_json::Value::Null)
}

/// Publication columns beside the catalog's: which agents need their published schema, version
/// and suggestions written, and which classifiers have never been marked published.
#[derive(Default)]
struct Marks {
    agents: Vec<String>,
    classifiers: Vec<String>,
}

impl Marks {
    fn is_empty(&self) -> bool {
        self.agents.is_empty() && self.classifiers.is_empty()
    }

    /// What differs between the rows and the publication, for agents and classifiers that
    /// `catalog` (the catalog after the publication) holds.
    async fn read(
        db: &impl ConnectionTrait,
        p: &Publication,
        catalog: &Catalog,
    ) -> ServiceResult<Marks> {
        let app = p.application.as_str();
        let rows: HashMap<String, agents::Model> = agents::Entity::find()
            .filter(agents::Column::ApplicationId.eq(app))
            .all(db)
            .await?
            .into_iter()
            .map(|a| (a.id.clone(), a))
            .collect();
        let mut out = Marks::default();
        let mut seen = HashSet::new();
        for a in &p.agents {
            if !seen.insert(a.id.as_str()) || catalog.agent(app, &a.id).is_none() {
                continue;
            }
            let current = rows.get(&a.id).is_some_and(|r| {
                r.published_schema.as_ref() == Some(&schema_json(a))
                    && r.published_version.as_deref() == Some(p.version.as_str())
                    && r.suggested_defaults == suggestions(a)
            });
            if !current {
                out.agents.push(a.id.clone());
            }
        }
        let unmarked: HashSet<String> = classifiers::Entity::find()
            .filter(classifiers::Column::ApplicationId.eq(app))
            .filter(classifiers::Column::PublishedAt.is_null())
            .all(db)
            .await?
            .into_iter()
            .map(|c| c.name)
            .collect();
        out.classifiers = p
            .classifiers
            .iter()
            .filter(|c| unmarked.contains(&c.name) && accepted(catalog, p, &c.name))
            .map(|c| c.name.clone())
            .collect();
        Ok(out)
    }

    /// Writes the publication columns: of the marked agents (and `declared_by = node` for the
    /// ones this publication created), and `published_at` of classifiers the publication set.
    async fn write(
        mut self,
        txn: &DatabaseTransaction,
        p: &Publication,
        before: &Catalog,
        after: &Catalog,
        now: DateTime<Utc>,
    ) -> ServiceResult<()> {
        let app = p.application.as_str();
        self.agents.sort();
        for id in &self.agents {
            let Some(a) = p.agents.iter().find(|a| &a.id == id) else {
                continue;
            };
            let mut update = agents::Entity::update_many()
                .col_expr(
                    agents::Column::PublishedSchema,
                    Expr::value(Some(schema_json(a))),
                )
                .col_expr(
                    agents::Column::PublishedVersion,
                    Expr::value(Some(p.version.clone())),
                )
                .col_expr(
                    agents::Column::PublishedByHost,
                    Expr::value(Some(p.host.clone())),
                )
                .col_expr(agents::Column::PublishedAt, Expr::value(Some(now)))
                .col_expr(
                    agents::Column::SuggestedDefaults,
                    Expr::value(suggestions(a)),
                );
            if before.agent(app, id).is_none() {
                update = update.col_expr(agents::Column::DeclaredBy, Expr::value("node"));
            }
            update
                .filter(agents::Column::ApplicationId.eq(app))
                .filter(agents::Column::Id.eq(id.as_str()))
                .exec(txn)
                .await?;
        }
        // Classifiers this publication changed, and those never marked that it agrees with.
        let changed = p.classifiers.iter().filter(|c| {
            accepted(after, p, &c.name)
                && before.classifier(app, &c.name) != after.classifier(app, &c.name)
        });
        let names: BTreeSet<&str> = changed
            .map(|c| c.name.as_str())
            .chain(self.classifiers.iter().map(String::as_str))
            .collect();
        if !names.is_empty() {
            classifiers::Entity::update_many()
                .col_expr(classifiers::Column::PublishedAt, Expr::value(Some(now)))
                .filter(classifiers::Column::ApplicationId.eq(app))
                .filter(classifiers::Column::Name.is_in(names))
                .exec(txn)
                .await?;
        }
        Ok(())
    }
}

/// Whether the catalog holds the classifier exactly as published.
fn accepted(catalog: &Catalog, p: &Publication, name: &str) -> bool {
    let Some(published) = p.classifiers.iter().find(|c| c.name == name) else {
        return false;
    };
    catalog.classifier(&p.application, name)
        == Some(&Classifier {
            application: p.application.clone(),
            name: published.name.clone(),
            title: published.title.clone(),
            values: published.values.clone(),
        })
}
