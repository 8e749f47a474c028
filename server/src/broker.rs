//! The manager's connection to RabbitMQ. The manager serves its UI and API without the broker;
//! this task keeps (re)connecting with backoff, declares the manager's side of the topology,
//! publishes the state for `/readyz` and the dashboard, and hands the live connection to the
//! runtime through a [`Link`].

use agent_client::{BrokerAddresses, Topology};
use am_services::{db::redact_url, health::BrokerStatus, runtime::Metrics};
use futures_util::StreamExt;
use lapin::{Connection, ConnectionProperties, Event};
use std::{sync::Arc, time::Duration};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Read side of the current broker connection, for the runtime's tasks.
#[derive(Debug, Clone)]
pub struct Link {
    rx: watch::Receiver<Option<Arc<Connection>>>,
}

/// A link and its write side (given to [`supervise`]).
pub fn link() -> (watch::Sender<Option<Arc<Connection>>>, Link) {
    let (tx, rx) = watch::channel(None);
    (tx, Link { rx })
}

impl Link {
    /// The live connection, waiting for one; `None` once `stop` fires.
    pub async fn connected(&self, stop: &CancellationToken) -> Option<Arc<Connection>> {
        let mut rx = self.rx.clone();
        tokio::select! {
            r = rx.wait_for(|c| c.as_ref().is_some_and(|c| c.status().connected())) => {
                r.ok().and_then(|c| c.clone())
            }
            () = stop.cancelled() => None,
        }
    }
}

const MIN_BACKOFF: Duration = Duration::from_millis(500);
/// As a node's (`agent_client`): without the broker a manager dispatches nothing.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

async fn declare(conn: &Connection, topology: &Topology) -> Result<(), lapin::Error> {
    let channel = conn.create_channel().await?;
    topology.declare_manager_side(&channel).await?;
    channel.close(200, "declared".into()).await
}

/// Next delay after a failed attempt: doubles, capped.
pub fn next_backoff(current: Duration) -> Duration {
    (current * 2).clamp(MIN_BACKOFF, MAX_BACKOFF)
}

/// Keeps a connection up until `stop` fires. Each attempt goes to the next of `brokers` (a
/// cluster's members), so a lost member is left for another one at the next attempt.
pub async fn supervise(
    brokers: BrokerAddresses,
    topology: Topology,
    status: BrokerStatus,
    link: watch::Sender<Option<Arc<Connection>>>,
    metrics: Arc<Metrics>,
    stop: CancellationToken,
) {
    let mut backoff = MIN_BACKOFF;
    let mut connected_before = false;
    loop {
        let url = brokers.next_url();
        let shown = redact_url(url);
        let attempt = tokio::select! {
            r = agent_client::connect(url, ConnectionProperties::default().with_connection_name("agent-manager".into())) => r,
            () = stop.cancelled() => return,
        };
        match attempt {
            Ok(conn) => {
                if let Err(e) = declare(&conn, &topology).await {
                    tracing::warn!(broker = %shown, error = %e, "cannot declare the manager's queues");
                    status.set(
                        false,
                        format!(
                            "connected to {shown}, but cannot declare the manager's queues: {e}"
                        ),
                    );
                    agent_client::close(&conn, 200, "retrying").await;
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        () = stop.cancelled() => return,
                    }
                    backoff = next_backoff(backoff);
                    continue;
                }
                tracing::info!(broker = %shown, "connected to the broker");
                status.set(true, format!("connected to {shown}"));
                if connected_before {
                    Metrics::inc(&metrics.broker_reconnects);
                }
                connected_before = true;
                backoff = MIN_BACKOFF;
                let conn = Arc::new(conn);
                link.send_replace(Some(conn.clone()));
                let mut events = Box::pin(conn.events_listener());
                let lost = async {
                    while let Some(event) = events.next().await {
                        if let Some(reason) = agent_client::lost_by(&conn, &event) {
                            return reason;
                        }
                        match event {
                            Event::ConnectionBlocked(reason) => {
                                status.set(true, format!("connected to {shown}, but the broker blocks publishing: {reason}"));
                            }
                            Event::ConnectionUnblocked => {
                                status.set(true, format!("connected to {shown}"))
                            }
                            _ => {}
                        }
                    }
                    "connection closed".to_owned()
                };
                tokio::select! {
                    reason = lost => {
                        tracing::warn!(broker = %shown, %reason, "lost the broker connection");
                        status.set(false, format!("connection to {shown} lost: {reason}"));
                        link.send_replace(None);
                    }
                    () = stop.cancelled() => {
                        agent_client::close(&conn, 200, "manager shutting down").await;
                        return;
                    }
                }
            }
            Err(e) => {
                tracing::warn!(broker = %shown, error = %e, retry_in = ?backoff, "cannot connect to the broker");
                status.set(false, format!("cannot connect to {shown}: {e}"));
            }
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = stop.cancelled() => return,
        }
        backoff = next_backoff(backoff);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(next_backoff(MIN_BACKOFF), Duration::from_secs(1));
        assert_eq!(next_backoff(Duration::from_secs(8)), MAX_BACKOFF);
    }
}
