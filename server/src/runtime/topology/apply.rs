//! Runs a reconciliation plan on the broker, step by step and in the plan's order. A refused
//! step closes the channel (AMQP's way); the next step gets a fresh one, and the refusal is
//! recorded so the object is tried again on the next pass instead of counted as applied.

use agent_client::Topology;
use am_domain::topology::ObjectKind;
use am_domain::topology::{Binding, BrokerObjects, Exchange, Plan};
use am_services::topology::{Outcome, Refusal};
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

    /// Declares an exchange. One the broker holds with other arguments is deleted and declared
    /// again only when it is `owned` (this installation declared it before: its arguments
    /// changed with the catalog or an upgrade); one it does not own belongs to someone else,
    /// another manager on the broker most often, and is left as it is: the refusal is reported
    /// (the Broker page's drift) and nothing is bound to it. Returns whether it was replaced,
    /// which drops its bindings.
    async fn exchange(&mut self, exchange: &Exchange, owned: bool) -> Result<bool, lapin::Error> {
        let topology = self.topology;
        match topology
            .declare_exchange(self.channel().await?, exchange)
            .await
        {
            Ok(()) => Ok(false),
            Err(e) if owned && agent_client::is_precondition_failed(&e) => {
                tracing::info!(exchange = %exchange.name, "exchange declared with other arguments; replacing it");
                topology
                    .delete_exchange(self.channel().await?, &exchange.name)
                    .await?;
                topology
                    .declare_exchange(self.channel().await?, exchange)
                    .await?;
                Ok(true)
            }
            Err(e) => {
                if agent_client::is_precondition_failed(&e) {
                    tracing::warn!(exchange = %exchange.name,
                        "an exchange of this name exists with other arguments and is not this manager's \
                         (another manager on the broker?): left as it is, nothing is bound to it");
                }
                Err(e)
            }
        }
    }
}

fn refusal(object: ObjectKind, name: &str, e: &lapin::Error) -> Refusal {
    Refusal {
        object,
        name: name.to_owned(),
        wrong_arguments: agent_client::is_precondition_failed(e),
        error: e.to_string(),
    }
}

/// Channels used at once for the many independent declarations of a large pass: creating a
/// quorum queue waits on the broker, so a catalog of thousands of launch settings goes several
/// times faster with a few in flight.
const PARALLEL_CHANNELS: usize = 8;

type Step<'s> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<(), (String, lapin::Error)>> + Send + 's>,
>;

/// Runs `step` for every item over up to [`PARALLEL_CHANNELS`] channels, each working through
/// its share in order; a channel the broker closed after a refusal is replaced. Returns the
/// refusals.
async fn in_parallel<'s, T: Sync>(
    steps: &Steps<'s>,
    items: &'s [T],
    name_of: fn(&T) -> &str,
    step: impl Fn(&'s Topology, Channel, &'s T) -> Step<'s> + Sync,
) -> Vec<(String, lapin::Error)> {
    if items.is_empty() {
        return Vec::new();
    }
    let lanes = PARALLEL_CHANNELS.min(items.len());
    let chunk = items.len().div_ceil(lanes);
    let step = &step;
    let work = items.chunks(chunk).map(|share| async move {
        let mut failed = Vec::new();
        let mut channel: Option<Channel> = None;
        for (i, item) in share.iter().enumerate() {
            let ch = match channel.as_ref().filter(|c| c.status().connected()) {
                Some(c) => c.clone(),
                None => match steps.conn.create_channel().await {
                    Ok(c) => {
                        channel = Some(c.clone());
                        c
                    }
                    // No channel, no step: the rest of this share is refused with it.
                    Err(e) => {
                        let rest = share[i..]
                            .iter()
                            .map(|t| (name_of(t).to_owned(), e.clone()));
                        failed.extend(rest);
                        return failed;
                    }
                },
            };
            if let Err(f) = step(steps.topology, ch, item).await {
                failed.push(f);
            }
        }
        if let Some(c) = channel.filter(|c| c.status().connected()) {
            let _ = c.close(200, "declared".into()).await;
        }
        failed
    });
    futures_util::future::join_all(work)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// Declares, binds, unbinds and deletes what `plan` says; leaving queues are handled apart
/// ([`super::leaving`]).
pub(super) async fn apply(
    steps: &mut Steps<'_>,
    plan: &Plan,
    desired: &BrokerObjects,
    owned_exchanges: &BTreeSet<String>,
    outcome: &mut Outcome,
) {
    let topology = steps.topology;
    let mut rebind: BTreeSet<String> = BTreeSet::new();
    let mut failed_exchanges: BTreeSet<String> = BTreeSet::new();
    for ex in plan.declare_exchanges.iter().chain(&plan.replace_exchanges) {
        match steps.exchange(ex, owned_exchanges.contains(&ex.name)).await {
            Ok(replaced) => {
                if replaced || plan.replace_exchanges.contains(ex) {
                    rebind.insert(ex.name.clone());
                }
            }
            Err(e) => {
                let error = if agent_client::is_precondition_failed(&e)
                    && !owned_exchanges.contains(&ex.name)
                {
                    format!(
                        "exchange `{}` exists with other arguments and is not this manager's \
                         (another manager on the broker, or declared by hand): left as it is; \
                         give the data queue another address, or delete the exchange if it is \
                         yours: {e}",
                        ex.name
                    )
                } else {
                    format!("exchange `{}`: {e}", ex.name)
                };
                outcome.errors.push(error);
                outcome
                    .refusals
                    .push(refusal(ObjectKind::Exchange, &ex.name, &e));
                failed_exchanges.insert(ex.name.clone());
            }
        }
    }
    let mut failed_queues: BTreeSet<String> = BTreeSet::new();
    for (name, e) in in_parallel(
        steps,
        &plan.declare_queues,
        |q| &q.name,
        |t, ch, q| {
            Box::pin(async move {
                t.declare_queue(&ch, q)
                    .await
                    .map_err(|e| (q.name.clone(), e))
            })
        },
    )
    .await
    {
        outcome.errors.push(format!("queue `{name}`: {e}"));
        outcome.refusals.push(refusal(ObjectKind::Queue, &name, &e));
        failed_queues.insert(name);
    }
    let replaced_bindings = desired
        .bindings
        .iter()
        .filter(|b| rebind.contains(&b.exchange));
    let binds: Vec<Binding> = plan
        .bind
        .iter()
        .chain(replaced_bindings)
        .collect::<BTreeSet<&Binding>>()
        .into_iter()
        .filter(|b| !failed_queues.contains(&b.queue) && !failed_exchanges.contains(&b.exchange))
        .cloned()
        .collect();
    for (queue, e) in in_parallel(
        steps,
        &binds,
        |b| &b.queue,
        |t, ch, b| Box::pin(async move { t.bind(&ch, b).await.map_err(|e| (b.queue.clone(), e)) }),
    )
    .await
    {
        outcome.errors.push(format!("binding to `{queue}`: {e}"));
        outcome
            .refusals
            .push(refusal(ObjectKind::Binding, &queue, &e));
        // Left out of the applied state with its queue, so the next pass binds again.
        failed_queues.insert(queue);
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
