//! Runs a reconciliation plan on the broker, step by step and in the plan's order. A refused
//! step closes the channel (AMQP's way); the next step gets a fresh one, and the refusal is
//! recorded so the object is tried again on the next pass instead of counted as applied.

use agent_client::Topology;
use am_domain::topology::{Binding, BrokerObjects, Exchange, Plan};
use am_services::topology::Outcome;
use lapin::{Channel, Connection};
use std::collections::BTreeSet;

/// A channel that is reopened after the broker closed it for a refused step.
pub(super) struct Steps<'a> {
    conn: &'a Connection,
    channel: Channel,
    pub topology: &'a Topology,
}

pub(super) fn is_not_found(e: &lapin::Error) -> bool {
    e.to_string().contains("NOT_FOUND")
}

pub(super) fn is_precondition_failed(e: &lapin::Error) -> bool {
    e.to_string().contains("PRECONDITION_FAILED")
}

impl<'a> Steps<'a> {
    pub async fn open(conn: &'a Connection, topology: &'a Topology) -> Result<Self, lapin::Error> {
        Ok(Self {
            conn,
            channel: conn.create_channel().await?,
            topology,
        })
    }

    /// The channel, reopened if a refused step closed it.
    pub async fn channel(&mut self) -> Result<&Channel, lapin::Error> {
        if !self.channel.status().connected() {
            self.channel = self.conn.create_channel().await?;
        }
        Ok(&self.channel)
    }

    pub async fn close(self) {
        if self.channel.status().connected() {
            let _ = self.channel.close(200, "reconciled".into()).await;
        }
    }

    /// Declares an exchange; one declared with other arguments before (by nodes of protocol
    /// version 1, without an alternate exchange) is deleted and declared again. Returns
    /// whether it was replaced, which drops its bindings.
    async fn exchange(&mut self, exchange: &Exchange) -> Result<bool, lapin::Error> {
        let topology = self.topology;
        match topology
            .declare_exchange(self.channel().await?, exchange)
            .await
        {
            Ok(()) => Ok(false),
            Err(e) if is_precondition_failed(&e) => {
                tracing::info!(exchange = %exchange.name, "exchange declared with other arguments; replacing it");
                topology
                    .delete_exchange(self.channel().await?, &exchange.name)
                    .await?;
                topology
                    .declare_exchange(self.channel().await?, exchange)
                    .await?;
                Ok(true)
            }
            Err(e) => Err(e),
        }
    }
}

/// Declares, binds, unbinds and deletes what `plan` says; leaving queues are handled apart
/// ([`super::leaving`]).
pub(super) async fn apply(
    steps: &mut Steps<'_>,
    plan: &Plan,
    desired: &BrokerObjects,
    outcome: &mut Outcome,
) {
    let topology = steps.topology;
    let mut rebind: BTreeSet<String> = BTreeSet::new();
    let mut failed_exchanges: BTreeSet<String> = BTreeSet::new();
    for ex in plan.declare_exchanges.iter().chain(&plan.replace_exchanges) {
        match steps.exchange(ex).await {
            Ok(replaced) => {
                if replaced || plan.replace_exchanges.contains(ex) {
                    rebind.insert(ex.name.clone());
                }
            }
            Err(e) => {
                outcome.errors.push(format!("exchange `{}`: {e}", ex.name));
                failed_exchanges.insert(ex.name.clone());
            }
        }
    }
    let mut failed_queues: BTreeSet<String> = BTreeSet::new();
    for q in &plan.declare_queues {
        let result = match steps.channel().await {
            Ok(ch) => topology.declare_queue(ch, q).await,
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            outcome.errors.push(format!("queue `{}`: {e}", q.name));
            failed_queues.insert(q.name.clone());
        }
    }
    let replaced_bindings = desired
        .bindings
        .iter()
        .filter(|b| rebind.contains(&b.exchange));
    let binds: BTreeSet<&Binding> = plan.bind.iter().chain(replaced_bindings).collect();
    for b in binds {
        if failed_queues.contains(&b.queue) || failed_exchanges.contains(&b.exchange) {
            continue;
        }
        let result = match steps.channel().await {
            Ok(ch) => topology.bind(ch, b).await,
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            outcome
                .errors
                .push(format!("binding `{}` → `{}`: {e}", b.exchange, b.queue));
            // Left out of the applied state with its queue, so the next pass binds again.
            failed_queues.insert(b.queue.clone());
        }
    }
    // Only now that every new binding is in place do the old ones go.
    for b in &plan.unbind {
        let result = match steps.channel().await {
            Ok(ch) => topology.unbind(ch, b).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(()) => {}
            // Its queue or exchange is gone already, and the binding with it.
            Err(e) if is_not_found(&e) => {}
            Err(e) => {
                outcome
                    .errors
                    .push(format!("unbinding `{}` → `{}`: {e}", b.exchange, b.queue));
                outcome.kept_bindings.push(b.clone());
            }
        }
    }
    for ex in &plan.delete_exchanges {
        let result = match steps.channel().await {
            Ok(ch) => topology.delete_exchange(ch, &ex.name).await,
            Err(e) => Err(e),
        };
        if let Err(e) = result
            && !is_not_found(&e)
        {
            outcome
                .errors
                .push(format!("deleting exchange `{}`: {e}", ex.name));
            outcome.kept_exchanges.push(ex.clone());
        }
    }
    outcome.failed_queues.extend(failed_queues);
    outcome.failed_exchanges.extend(failed_exchanges);
}
