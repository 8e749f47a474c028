//! Server functions of the Broker page: the broker as the reconciler keeps it from the catalog,
//! and *Reconcile now*.

use crate::error::UiError;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// A queue on its way out; times already formatted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeavingRow {
    pub queue: String,
    /// `drain` or `retire`.
    pub how: String,
    pub reason: Option<String>,
    pub since: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerState {
    pub catalog_revision: i64,
    pub applied_revision: Option<i64>,
    pub in_sync: bool,
    pub reconciled_at: Option<String>,
    pub full_requested_at: Option<String>,
    /// What the broker refused on the last pass, one line each.
    pub errors: Vec<String>,
    pub exchanges: usize,
    pub queues: usize,
    pub bindings: usize,
    pub leaving: Vec<LeavingRow>,
    /// When the queues below were sampled.
    pub sampled_at: Option<String>,
    pub depths: Vec<QueueRow>,
    /// Where the broker differs from what the reconciler keeps.
    pub drift: Vec<DriftRow>,
    pub can_operate: bool,
}

/// One object the broker does not hold as the reconciler keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriftRow {
    pub object: am_domain::topology::ObjectKind,
    pub name: String,
    pub state: am_domain::topology::DriftState,
    pub detail: String,
}

/// What one consumed or unrouted queue holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueRow {
    pub queue: String,
    /// `subscription`, `shared` or `unrouted`.
    pub role: String,
    pub launch_setting: Option<String>,
    pub data_queue: Option<String>,
    pub ready: u32,
    pub consumers: u32,
}

/// The reconciler's state for the Broker page (viewers).
#[server(prefix = "/ui", endpoint = "broker_status", input = Json)]
pub async fn broker_status() -> Result<BrokerState, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let v = am_services::topology::view(&s.db, &who, &s.broker_depths).await?;
    let time = am_domain::display::time;
    Ok(BrokerState {
        catalog_revision: v.catalog_revision,
        applied_revision: v.applied_revision,
        in_sync: v.in_sync,
        reconciled_at: v.reconciled_at.map(time),
        full_requested_at: v.full_requested_at.map(time),
        errors: v
            .last_error
            .map(|e| e.lines().map(str::to_owned).collect())
            .unwrap_or_default(),
        exchanges: v.exchanges,
        queues: v.queues,
        bindings: v.bindings,
        leaving: v
            .leaving
            .into_iter()
            .map(|l| LeavingRow {
                queue: l.queue,
                how: l.how,
                reason: l.reason,
                since: time(l.since),
            })
            .collect(),
        sampled_at: v.depths.sampled_at.map(time),
        drift: v
            .drift
            .into_iter()
            .map(|d| DriftRow {
                object: d.object,
                name: d.name,
                state: d.state,
                detail: d.detail,
            })
            .collect(),
        depths: v
            .depths
            .queues
            .into_iter()
            .map(|q| QueueRow {
                queue: q.queue,
                role: q.role,
                launch_setting: q.launch_setting,
                data_queue: q.data_queue,
                ready: q.ready,
                consumers: q.consumers,
            })
            .collect(),
        can_operate: who.role.may(Operation::Repair),
    })
}

/// Asks for a full reconciliation pass (operators).
#[server(prefix = "/ui", endpoint = "reconcile_now")]
pub async fn reconcile_now() -> Result<(), UiError> {
    use super::ssr::*;
    let who = require(Operation::Repair)?;
    let s = services()?;
    am_services::topology::request_full_pass(&s.db, &who, chrono::Utc::now()).await?;
    Ok(())
}

/// Replays the messages kept in the unrouted queue of `data_queue` to its exchange
/// (operators); returns the operation's id.
#[server(prefix = "/ui", endpoint = "replay_unrouted")]
pub async fn replay_unrouted(data_queue: String) -> Result<String, UiError> {
    use super::ssr::*;
    use am_services::operations::OperationRequest;
    let who = require(Operation::HandleDeadLetters)?;
    let op = am_services::operations::start(
        &services()?,
        &who,
        OperationRequest::ReplayUnrouted { data_queue },
    )
    .await?;
    Ok(op.id.to_string())
}

/// Messages kept in the unrouted queue of data queue `id` (no launch setting took them), as
/// this replica last sampled; `None` before a sample saw the queue.
#[server(prefix = "/ui", endpoint = "data_queue_unrouted", input = Json)]
pub async fn data_queue_unrouted(id: String) -> Result<Option<u32>, UiError> {
    use super::ssr::*;
    require(Operation::Read)?;
    let s = services()?;
    Ok(s.broker_depths.read().ok().and_then(|d| d.unrouted_of(&id)))
}
