//! Server functions of the Broker page: the broker as the reconciler keeps it from the catalog,
//! and *Reconcile now*.

use crate::error::UiError;
use am_domain::read::broker::BrokerView;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The Broker page: the broker as the reconciler keeps it, and whether the caller may act.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerState {
    pub broker: BrokerView,
    pub can_operate: bool,
}

/// The reconciler's state for the Broker page (viewers).
#[server(prefix = "/ui", endpoint = "broker_status", input = Json)]
pub async fn broker_status() -> Result<BrokerState, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    Ok(BrokerState {
        broker: am_services::topology::view(&s.db, &who, &s.broker_depths).await?,
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
    use am_domain::read::operations::OperationRequest;
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
