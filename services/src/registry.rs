//! The node registry: which nodes (one application on one host) exist, what they offer and
//! whether they are alive, fed by their reports (docs/runtime.md, Node registry).
//!
//! A node publishes itself when it starts ([`record_publication`]): the node row, the agents it
//! offers, and the catalog changes its agents and classifiers bring. It then heartbeats
//! ([`record_heartbeat`]). A node not heard from for `Settings::node_timeout` is lost: nothing
//! is dispatched to it, and the watchdog marks it so ([`mark_lost`]). Pages and the API read the
//! registry with the liveness computed at read time ([`list`]), so a node is shown lost as soon
//! as its heartbeats stop, not only once the watchdog has passed.

mod publish;
mod refusals;
mod views;

pub use publish::{apply_waiting_publications, record_publication};
pub use refusals::{agents_needing_data_queue, refused_publications};
pub use views::{application_publication, drift, list, offered_agents};

use crate::{
    entity::nodes,
    error::ServiceResult,
    notifications::{self, events},
};
use am_domain::wire;
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, TransactionTrait, sea_query::OnConflict,
};

/// `nodes.status` of a node heard from recently.
pub const LIVE: &str = am_domain::status::NodeStatus::Live.as_str();
/// `nodes.status` of a node the watchdog gave up on.
pub const LOST: &str = am_domain::status::NodeStatus::Lost.as_str();

/// Version recorded for a node heard from before it published itself.
const UNKNOWN_VERSION: &str = "unknown";

fn int(n: impl TryInto<i32>) -> i32 {
    n.try_into().unwrap_or(i32::MAX)
}

/// Whether a node row counts as live at `now`: [`live_condition`] on a loaded row.
pub fn is_live(node: &nodes::Model, now: DateTime<Utc>, timeout: chrono::Duration) -> bool {
    node.status == LIVE && node.last_heartbeat_at > now - timeout
}

/// The nodes that count as live at `now`, as a query condition: marked live and heard from
/// within `timeout`. Every query for live nodes uses it, and [`is_live`] says the same of a row.
pub fn live_condition(now: DateTime<Utc>, timeout: chrono::Duration) -> sea_orm::Condition {
    sea_orm::Condition::all()
        .add(nodes::Column::Status.eq(LIVE))
        .add(nodes::Column::LastHeartbeatAt.gt(now - timeout))
}

/// Records a heartbeat: capacity, running activations, load, liveness. Only the node row
/// changes; a node heard from before its publication gets a row with an unknown version.
pub async fn record_heartbeat(
    db: &impl ConnectionTrait,
    hb: &wire::Heartbeat,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    back_if_lost(db, &hb.application, &hb.host, now).await?;
    let running: usize = hb.running.iter().map(|r| r.activations.len()).sum();
    let load = hb.load.filter(|l| l.is_finite()).unwrap_or(0.0);
    let row = nodes::ActiveModel {
        application_id: Set(hb.application.clone()),
        host: Set(hb.host.clone()),
        version: Set(UNKNOWN_VERSION.to_owned()),
        capacity: Set(int(hb.capacity)),
        running: Set(int(running)),
        load: Set(load),
        started_at: Set(now),
        last_heartbeat_at: Set(now),
        status: Set(LIVE.to_owned()),
        protocol_version: Set(1),
        waiting_publication: Set(None),
        refused_changes: Set(None),
    };
    use nodes::Column as C;
    nodes::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([C::ApplicationId, C::Host])
                .update_columns([
                    C::Capacity,
                    C::Running,
                    C::Load,
                    C::LastHeartbeatAt,
                    C::Status,
                ])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// Live nodes of an application: status live and heard from within `timeout`, by host name.
pub async fn live_nodes(
    db: &impl ConnectionTrait,
    application: &str,
    now: DateTime<Utc>,
    timeout: chrono::Duration,
) -> ServiceResult<Vec<nodes::Model>> {
    Ok(nodes::Entity::find()
        .filter(nodes::Column::ApplicationId.eq(application))
        .filter(live_condition(now, timeout))
        .order_by_asc(nodes::Column::Host)
        .all(db)
        .await?)
}

/// Marks the live nodes not heard from within `timeout` as lost and returns those this call
/// flipped, as (application, host), each with its `node_lost` notification in the same
/// transaction. Each flip is a compare-and-set (still live, still stale), so concurrent
/// watchdogs and a heartbeat arriving meanwhile are never overruled, and one replica tells it.
pub async fn mark_lost(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    timeout: chrono::Duration,
) -> ServiceResult<Vec<(String, String)>> {
    use nodes::Column as C;
    let cutoff = now - timeout;
    let stale: Vec<(String, String, DateTime<Utc>)> = nodes::Entity::find()
        .select_only()
        .columns([C::ApplicationId, C::Host, C::LastHeartbeatAt])
        .filter(C::Status.eq(LIVE))
        .filter(C::LastHeartbeatAt.lte(cutoff))
        .order_by_asc(C::ApplicationId)
        .order_by_asc(C::Host)
        .into_tuple()
        .all(db)
        .await?;
    let mut flipped = Vec::with_capacity(stale.len());
    for (application, host, last) in stale {
        let txn = db.begin().await?;
        let r = nodes::Entity::update_many()
            .col_expr(C::Status, sea_orm::sea_query::Expr::value(LOST))
            .filter(C::ApplicationId.eq(application.as_str()))
            .filter(C::Host.eq(host.as_str()))
            .filter(C::Status.eq(LIVE))
            .filter(C::LastHeartbeatAt.lte(cutoff))
            .exec(&txn)
            .await?;
        if r.rows_affected == 1 {
            let notice = events::node(true, &application, &host, Some(last), now);
            notifications::raise(&txn, notice, now).await?;
        }
        txn.commit().await?;
        if r.rows_affected == 1 {
            tracing::warn!(application = %application, host = %host, "node lost: no heartbeat within {}s", timeout.num_seconds());
            flipped.push((application, host));
        }
    }
    Ok(flipped)
}

/// When the newest heartbeat any node sent was stored (by any replica): how far the reports
/// have been read. `None` before the first.
pub async fn heard_until(db: &impl ConnectionTrait) -> ServiceResult<Option<DateTime<Utc>>> {
    use nodes::Column as C;
    Ok(nodes::Entity::find()
        .select_only()
        .column_as(C::LastHeartbeatAt.max(), "heard")
        .into_tuple::<Option<DateTime<Utc>>>()
        .one(db)
        .await?
        .flatten())
}

/// A node marked lost is heard from again (a heartbeat or a publication): flips it live by
/// compare-and-set, so of several replicas one tells it, and raises `node_back`.
pub(crate) async fn back_if_lost(
    db: &impl ConnectionTrait,
    application: &str,
    host: &str,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    use nodes::Column as C;
    let r = nodes::Entity::update_many()
        .col_expr(C::Status, sea_orm::sea_query::Expr::value(LIVE))
        .filter(C::ApplicationId.eq(application))
        .filter(C::Host.eq(host))
        .filter(C::Status.eq(LOST))
        .exec(db)
        .await?;
    if r.rows_affected == 1 {
        tracing::info!(%application, %host, "node back");
        notifications::raise(db, events::node(false, application, host, None, now), now).await?;
    }
    Ok(())
}
