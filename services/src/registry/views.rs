//! Reading the registry for pages and the API: nodes with their liveness computed at read time,
//! the agents live nodes offer, what an application's nodes published, and schema drift.

use super::is_live;
use crate::{
    Principal,
    catalog::{load, rows},
    entity::{agents, classifier_values, classifiers, node_agents, nodes},
    error::ServiceResult,
};
use am_domain::{
    params::ParamSpec,
    publication::{Drift, schema_drift},
    read::nodes::{
        AgentOffer, ApplicationPublication, ClassifierPublication, NodeFilter, NodeView,
    },
    roles::Operation,
    status::NodeStatus,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait},
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Nodes matching `filter`, by application and host.
pub async fn list(
    db: &impl ConnectionTrait,
    actor: &Principal,
    filter: &NodeFilter,
    now: DateTime<Utc>,
    timeout: chrono::Duration,
) -> ServiceResult<Vec<NodeView>> {
    actor.require(Operation::Read)?;
    let application = filter.application();
    let mut query = nodes::Entity::find();
    let mut offered = node_agents::Entity::find();
    if let Some(app) = application {
        query = query.filter(nodes::Column::ApplicationId.eq(app));
        offered = offered.filter(node_agents::Column::ApplicationId.eq(app));
    }
    let rows = query
        .order_by_asc(nodes::Column::ApplicationId)
        .order_by_asc(nodes::Column::Host)
        .all(db)
        .await?;
    let mut agents: HashMap<(String, String), Vec<String>> = HashMap::new();
    for o in offered
        .order_by_asc(node_agents::Column::AgentId)
        .all(db)
        .await?
    {
        agents
            .entry((o.application_id, o.host))
            .or_default()
            .push(o.agent_id);
    }
    Ok(rows
        .into_iter()
        .filter_map(|n| {
            let live = is_live(&n, now, timeout);
            (live || filter.include_lost).then(|| NodeView {
                agents: agents
                    .remove(&(n.application_id.clone(), n.host.clone()))
                    .unwrap_or_default(),
                status: if live {
                    NodeStatus::Live
                } else {
                    NodeStatus::Lost
                },
                application: n.application_id,
                host: n.host,
                version: n.version,
                protocol: n.protocol_version,
                waiting_for_application: n.waiting_publication.is_some(),
                running: n.running,
                capacity: n.capacity,
                load: n.load,
                started_at: n.started_at,
                last_heartbeat_at: n.last_heartbeat_at,
            })
        })
        .collect())
}

/// For each agent of the application some live node offers: the hosts of those nodes.
pub async fn offered_agents(
    db: &impl ConnectionTrait,
    actor: &Principal,
    application: &str,
    now: DateTime<Utc>,
    timeout: chrono::Duration,
) -> ServiceResult<BTreeMap<String, Vec<String>>> {
    actor.require(Operation::Read)?;
    let live: BTreeSet<String> = super::live_nodes(db, application, now, timeout)
        .await?
        .into_iter()
        .map(|n| n.host)
        .collect();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for o in node_agents::Entity::find()
        .filter(node_agents::Column::ApplicationId.eq(application))
        .order_by_asc(node_agents::Column::Host)
        .all(db)
        .await?
    {
        if live.contains(&o.host) {
            out.entry(o.agent_id).or_default().push(o.host);
        }
    }
    Ok(out)
}

/// Agents and classifiers of an application with what nodes published and offer.
pub async fn application_publication(
    db: &impl ConnectionTrait,
    actor: &Principal,
    application: &str,
    now: DateTime<Utc>,
    timeout: chrono::Duration,
) -> ServiceResult<ApplicationPublication> {
    let offered = offered_agents(db, actor, application, now, timeout).await?;
    let live_hosts: Vec<String> = super::live_nodes(db, application, now, timeout)
        .await?
        .into_iter()
        .map(|n| n.host)
        .collect();
    let mut agents: BTreeMap<String, AgentOffer> = agents::Entity::find()
        .filter(agents::Column::ApplicationId.eq(application))
        .all(db)
        .await?
        .into_iter()
        .map(|a| {
            // The domain's rule, on the agent as the catalog reads it.
            let needs_data_queue = rows::agent(a.clone())?.needs_data_queue();
            let offer = AgentOffer {
                needs_data_queue,
                schema_differs: a
                    .published_schema
                    .as_ref()
                    .is_some_and(|s| s != &a.parameter_schema),
                offered_by: offered.get(&a.id).cloned().unwrap_or_default(),
                id: a.id.clone(),
                title: a.title,
                in_catalog: true,
                declared_by: Some(a.declared_by),
                published_version: a.published_version,
                published_by_host: a.published_by_host,
                published_at: a.published_at,
            };
            Ok((a.id, offer))
        })
        .collect::<ServiceResult<_>>()?;
    // Agents some node offers (live or not) that the catalog does not hold.
    let offered_anywhere: BTreeSet<String> = node_agents::Entity::find()
        .select_only()
        .column(node_agents::Column::AgentId)
        .filter(node_agents::Column::ApplicationId.eq(application))
        .into_tuple()
        .all(db)
        .await?
        .into_iter()
        .collect();
    for id in offered_anywhere {
        agents.entry(id.clone()).or_insert_with(|| AgentOffer {
            offered_by: offered.get(&id).cloned().unwrap_or_default(),
            id,
            title: String::new(),
            in_catalog: false,
            needs_data_queue: false,
            declared_by: None,
            published_version: None,
            published_by_host: None,
            published_at: None,
            schema_differs: false,
        });
    }
    let counts: HashMap<String, i64> = classifier_values::Entity::find()
        .select_only()
        .column(classifier_values::Column::ClassifierName)
        .column_as(Expr::col(classifier_values::Column::Code).count(), "values")
        .filter(classifier_values::Column::ApplicationId.eq(application))
        .group_by(classifier_values::Column::ClassifierName)
        .into_tuple::<(String, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let classifiers = classifiers::Entity::find()
        .filter(classifiers::Column::ApplicationId.eq(application))
        .order_by_asc(classifiers::Column::Name)
        .all(db)
        .await?
        .into_iter()
        .map(|c| ClassifierPublication {
            values: counts
                .get(&c.name)
                .and_then(|n| u64::try_from(*n).ok())
                .unwrap_or(0),
            name: c.name,
            title: c.title,
            published_at: c.published_at,
        })
        .collect();
    Ok(ApplicationPublication {
        live_hosts,
        agents: agents.into_values().collect(),
        classifiers,
    })
}

/// Launch settings, of every application, whose saved parameters the schema their agent's
/// nodes last published rejects, by launch setting id.
pub async fn drift(db: &impl ConnectionTrait, actor: &Principal) -> ServiceResult<Vec<Drift>> {
    actor.require(Operation::Read)?;
    let catalog = load(db).await?;
    let rows: Vec<(String, String, Option<serde_json::Value>)> = agents::Entity::find()
        .select_only()
        .columns([
            agents::Column::ApplicationId,
            agents::Column::Id,
            agents::Column::PublishedSchema,
        ])
        .filter(agents::Column::PublishedSchema.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    let mut schemas: HashMap<(String, String), Vec<ParamSpec>> = HashMap::new();
    for (application, id, schema) in rows {
        match schema.map(serde_json::from_value::<Vec<ParamSpec>>) {
            Some(Ok(s)) => {
                schemas.insert((application, id), s);
            }
            Some(Err(e)) => {
                tracing::warn!(application = %application, agent = %id, error = %e,
                    "stored published schema is not readable; drift not checked");
            }
            None => {}
        }
    }
    let published = |application: &str, agent: &str| {
        schemas
            .get(&(application.to_owned(), agent.to_owned()))
            .map(Vec::as_slice)
    };
    Ok(schema_drift(&catalog, &published))
}
