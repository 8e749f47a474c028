//! What nodes published that the catalog does not run yet: the changes of each node's last
//! publication that a catalog rule refused (with why), and the messages agents that landed
//! without a data queue because the one their code suggested is not in the catalog. Both are
//! shown on the schema-drift page (and the agents on their own pages), so nothing a node
//! publishes disappears with only a line in the manager's log.

use crate::{
    Principal,
    catalog::rows,
    entity::{agents, nodes},
    error::ServiceResult,
};
use am_domain::{publication::Refused, read::nodes::RefusedPublication, roles::Operation};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

/// Every node's refused changes, by application and host.
pub async fn refused_publications(
    db: &impl ConnectionTrait,
    actor: &Principal,
) -> ServiceResult<Vec<RefusedPublication>> {
    actor.require(Operation::Read)?;
    let rows: Vec<(String, String, Option<String>)> = nodes::Entity::find()
        .select_only()
        .columns([
            nodes::Column::ApplicationId,
            nodes::Column::Host,
            nodes::Column::RefusedChanges,
        ])
        .filter(nodes::Column::RefusedChanges.is_not_null())
        .order_by_asc(nodes::Column::ApplicationId)
        .order_by_asc(nodes::Column::Host)
        .into_tuple()
        .all(db)
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for (application, host, json) in rows {
        match json.as_deref().map(serde_json::from_str::<Vec<Refused>>) {
            Some(Ok(refused)) if !refused.is_empty() => out.push(RefusedPublication {
                application,
                host,
                refused,
            }),
            Some(Err(e)) => {
                tracing::warn!(%application, %host, error = %e,
                    "stored refused changes are not readable; the node's next publication replaces them");
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Messages agents waiting for an operator to pick their data queue, as (application, agent),
/// by the domain's rule (`Agent::needs_data_queue`) on the agents' rows alone (the whole
/// catalog, classifier values included, is not needed).
pub async fn agents_needing_data_queue(
    db: &impl ConnectionTrait,
    actor: &Principal,
) -> ServiceResult<Vec<(String, String)>> {
    actor.require(Operation::Read)?;
    let mut out = Vec::new();
    for row in agents::Entity::find()
        .filter(agents::Column::DataQueueId.is_null())
        .order_by_asc(agents::Column::ApplicationId)
        .order_by_asc(agents::Column::Id)
        .all(db)
        .await?
    {
        let agent = rows::agent(row)?;
        if agent.needs_data_queue() {
            out.push((agent.application, agent.id));
        }
    }
    Ok(out)
}
