//! The runtime's figures read from the database at each scrape of `/metrics`: the same on
//! every replica, so an alert reads them with `max`, never `sum`.

use crate::{
    entity::{activations, applications, nodes, outbox},
    error::ServiceResult,
    registry, status,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use std::collections::BTreeMap;

/// Live nodes of one application and their slots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeSlots {
    pub live: u64,
    /// Activations the live nodes say they run.
    pub used: u64,
    /// What the live nodes could still take (capacity less running, never below zero each).
    pub free: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeGauges {
    /// Broker commands not yet confirmed by the broker.
    pub outbox_depth: u64,
    /// Age of the oldest of them, in seconds (0 when none).
    pub outbox_oldest_age: f64,
    pub waiting: u64,
    /// Age of the oldest waiting activation, in seconds (0 when none).
    pub oldest_waiting_age: f64,
    /// Every application of the catalog (and any a live node runs for), with its live nodes.
    pub nodes: BTreeMap<String, NodeSlots>,
}

fn age(now: DateTime<Utc>, since: Option<DateTime<Utc>>) -> f64 {
    since.map_or(0.0, |t| {
        ((now - t).num_milliseconds().max(0) as f64) / 1000.0
    })
}

/// Reads the figures at `now`, nodes live by `node_timeout` ([`registry::live_condition`]).
pub async fn read(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    node_timeout: chrono::Duration,
) -> ServiceResult<RuntimeGauges> {
    let unsent = || outbox::Entity::find().filter(outbox::Column::SentAt.is_null());
    let outbox_depth = unsent().count(db).await?;
    let oldest_unsent = unsent()
        .order_by_asc(outbox::Column::CreatedAt)
        .one(db)
        .await?
        .map(|o| o.created_at);
    let waiting = || {
        activations::Entity::find()
            .filter(activations::Column::Status.eq(status::activation::WAITING))
    };
    let waiting_count = waiting().count(db).await?;
    let oldest_waiting = waiting()
        .order_by_asc(activations::Column::CreatedAt)
        .one(db)
        .await?
        .map(|a| a.created_at);
    let mut by_application: BTreeMap<String, NodeSlots> = applications::Entity::find()
        .select_only()
        .column(applications::Column::Id)
        .into_tuple::<String>()
        .all(db)
        .await?
        .into_iter()
        .map(|id| (id, NodeSlots::default()))
        .collect();
    let live = nodes::Entity::find()
        .filter(registry::live_condition(now, node_timeout))
        .all(db)
        .await?;
    for n in live {
        let slots = by_application.entry(n.application_id).or_default();
        let running = u64::try_from(n.running).unwrap_or(0);
        let capacity = u64::try_from(n.capacity).unwrap_or(0);
        slots.live += 1;
        slots.used += running;
        slots.free += capacity.saturating_sub(running);
    }
    Ok(RuntimeGauges {
        outbox_depth,
        outbox_oldest_age: age(now, oldest_unsent),
        waiting: waiting_count,
        oldest_waiting_age: age(now, oldest_waiting),
        nodes: by_application,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_age_is_in_seconds_and_never_negative() {
        let now = Utc::now();
        assert_eq!(age(now, None), 0.0);
        assert_eq!(
            age(now, Some(now - chrono::Duration::milliseconds(1500))),
            1.5
        );
        assert_eq!(age(now, Some(now + chrono::Duration::seconds(3))), 0.0);
    }
}
