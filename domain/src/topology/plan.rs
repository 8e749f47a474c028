//! How to take the broker from what was applied to what the catalog wants, in an order that
//! neither loses nor doubles a message: declare what is new, bind the new before unbinding the
//! old (a message matching both bindings of one queue is still queued there once), and let
//! queues that are no longer wanted leave without dropping what they hold.

use super::{Binding, BrokerObjects, Exchange, Queue, QueueRole};
use serde::{Deserialize, Serialize};

/// How a queue the catalog no longer wants goes away.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum Departure {
    /// Its messages expire into a queue that stays (a delay or wait queue): delete it once
    /// it is empty.
    Drain,
    /// Nothing consumes it any more: once its hold has passed, move what it holds to the
    /// dead-letter queue with `reason`, then delete it.
    Retire { reason: String },
}

/// A queue on its way out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leaving {
    pub queue: Queue,
    #[serde(flatten)]
    pub departure: Departure,
}

/// The steps of one reconciliation, to be run in field order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Fanout exchanges (alternate and wait exchanges) first, so a data exchange's alternate
    /// exists before any message can need it.
    pub declare_exchanges: Vec<Exchange>,
    /// Exchanges whose declaration changed (an installation from before alternate
    /// exchanges): deleted and declared again, then every binding they should have is added.
    pub replace_exchanges: Vec<Exchange>,
    pub declare_queues: Vec<Queue>,
    /// Added before anything is unbound.
    pub bind: Vec<Binding>,
    pub unbind: Vec<Binding>,
    pub delete_exchanges: Vec<Exchange>,
    /// Queues that start leaving with this pass.
    pub leaving: Vec<Leaving>,
}

impl Plan {
    /// Whether the pass changes nothing on the broker.
    pub fn is_empty(&self) -> bool {
        self.declare_exchanges.is_empty()
            && self.replace_exchanges.is_empty()
            && self.declare_queues.is_empty()
            && self.bind.is_empty()
            && self.unbind.is_empty()
            && self.delete_exchanges.is_empty()
            && self.leaving.is_empty()
    }
}

fn departure(queue: &Queue, desired: &BrokerObjects) -> Departure {
    match &queue.role {
        QueueRole::Delay { launch_setting, .. } => {
            if queue
                .dead_letter_target()
                .is_some_and(|t| desired.queues.contains_key(t))
            {
                Departure::Drain
            } else {
                Departure::Retire {
                    reason: format!(
                        "launch setting '{launch_setting}' no longer consumes this data queue"
                    ),
                }
            }
        }
        QueueRole::Wait | QueueRole::System => Departure::Drain,
        QueueRole::Subscription {
            launch_setting,
            data_queue,
            ..
        } => Departure::Retire {
            reason: format!(
                "launch setting '{launch_setting}' no longer consumes data queue '{data_queue}' \
                 (deleted, or its agent or data queue changed)"
            ),
        },
        QueueRole::Shared { data_queue, .. } => Departure::Retire {
            reason: format!("no launch setting consumes data queue '{data_queue}' any more"),
        },
        QueueRole::Unrouted { data_queue } => Departure::Retire {
            reason: format!("data queue '{data_queue}' was deleted"),
        },
    }
}

/// The steps from `applied` to `desired`. With `full`, everything desired is declared and
/// bound again (repairing what someone removed by hand); otherwise only what changed.
pub fn plan(desired: &BrokerObjects, applied: &BrokerObjects, full: bool) -> Plan {
    let mut p = Plan::default();
    for (name, ex) in &desired.exchanges {
        match applied.exchanges.get(name) {
            Some(old) if old != ex => p.replace_exchanges.push(ex.clone()),
            Some(_) if !full => {}
            _ => p.declare_exchanges.push(ex.clone()),
        }
    }
    // Fanout (alternate, wait) before headers (data) exchanges.
    p.declare_exchanges
        .sort_by(|a, b| a.kind.cmp(&b.kind).then(a.name.cmp(&b.name)));
    for (name, q) in &desired.queues {
        let unchanged = applied
            .queues
            .get(name)
            .is_some_and(|old| old.same_declaration(q));
        if full || !unchanged {
            p.declare_queues.push(q.clone());
        }
    }
    let replaced = |b: &Binding| p.replace_exchanges.iter().any(|e| e.name == b.exchange);
    p.bind = desired
        .bindings
        .iter()
        .filter(|b| full || !applied.bindings.contains(b) || replaced(b))
        .cloned()
        .collect();
    p.unbind = applied
        .bindings
        .difference(&desired.bindings)
        // A binding whose exchange or queue leaves goes with it; unbinding first still
        // matters for queues, which are kept a while.
        .filter(|b| desired.exchanges.contains_key(&b.exchange))
        .cloned()
        .collect();
    p.delete_exchanges = applied
        .exchanges
        .iter()
        .filter(|(name, _)| !desired.exchanges.contains_key(*name))
        .map(|(_, e)| e.clone())
        .collect();
    p.leaving = applied
        .queues
        .values()
        .filter(|q| !desired.queues.contains_key(&q.name))
        .map(|q| Leaving {
            queue: q.clone(),
            departure: departure(q, desired),
        })
        .collect();
    p
}
