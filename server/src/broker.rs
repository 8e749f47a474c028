//! The manager's connection to RabbitMQ. The manager serves its UI and API without the broker;
//! this task keeps (re)connecting with backoff and publishes the state for `/readyz` and the
//! dashboard.

use am_services::{db::redact_url, health::BrokerStatus};
use futures_util::StreamExt;
use lapin::{Connection, ConnectionProperties, Event};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const MIN_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Next delay after a failed attempt: doubles, capped.
pub fn next_backoff(current: Duration) -> Duration {
    (current * 2).clamp(MIN_BACKOFF, MAX_BACKOFF)
}

/// Keeps a connection up until `stop` fires.
pub async fn supervise(url: String, status: BrokerStatus, stop: CancellationToken) {
    let shown = redact_url(&url);
    let mut backoff = MIN_BACKOFF;
    loop {
        let attempt = tokio::select! {
            r = Connection::connect(&url, ConnectionProperties::default()) => r,
            () = stop.cancelled() => return,
        };
        match attempt {
            Ok(conn) => {
                tracing::info!(broker = %shown, "connected to the broker");
                status.set(true, format!("connected to {shown}"));
                backoff = MIN_BACKOFF;
                let mut events = Box::pin(conn.events_listener());
                let lost = async {
                    while let Some(event) = events.next().await {
                        match event {
                            Event::Error(e) => return e.to_string(),
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
                    }
                    () = stop.cancelled() => {
                        let _ = conn.close(200, "manager shutting down".into()).await;
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
        assert_eq!(next_backoff(Duration::from_secs(20)), MAX_BACKOFF);
    }
}
