//! The node's one connection to RabbitMQ, shared by every task through a [`Link`].
//!
//! A supervisor (in the runtime) connects with backoff and publishes the live connection on a
//! watch channel; consumers and publishers wait on it, open their channels, and when their
//! stream breaks they wait for the *next* connection. That gives reconnect-and-resubscribe
//! without two consumers ever sharing one subscription slot.

use lapin::Connection;
use std::{sync::Arc, time::Duration};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub(crate) const MIN_BACKOFF: Duration = Duration::from_millis(200);
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Next delay after a failed connection attempt: doubles, capped.
pub(crate) fn next_backoff(current: Duration) -> Duration {
    (current * 2).clamp(MIN_BACKOFF, MAX_BACKOFF)
}

/// Read side of the current connection.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    rx: watch::Receiver<Option<Arc<Connection>>>,
}

pub(crate) fn link() -> (watch::Sender<Option<Arc<Connection>>>, Link) {
    let (tx, rx) = watch::channel(None);
    (tx, Link { rx })
}

impl Link {
    /// The live connection, waiting for one; `None` once `stop` fires or the node is gone.
    pub(crate) async fn connected(&self, stop: &CancellationToken) -> Option<Arc<Connection>> {
        let mut rx = self.rx.clone();
        tokio::select! {
            r = rx.wait_for(|c| c.as_ref().is_some_and(|c| c.status().connected())) => {
                r.ok().and_then(|c| c.clone())
            }
            () = stop.cancelled() => None,
        }
    }

    /// The connection of the moment, live or not.
    pub(crate) fn current(&self) -> Option<Arc<Connection>> {
        self.rx.borrow().clone()
    }

    /// Whether a live connection is up right now.
    pub(crate) fn is_up(&self) -> bool {
        self.rx
            .borrow()
            .as_ref()
            .is_some_and(|c| c.status().connected())
    }
}

/// The URL without its password, for logs.
///
/// ```text
/// amqp://guest:guest@host:5672/%2f → amqp://guest:***@host:5672/%2f
/// ```
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some((userinfo, host)) = rest.rsplit_once('@') else {
        return url.to_owned();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            redact("amqp://guest:secret@127.0.0.1:5672/%2f"),
            "amqp://guest:***@127.0.0.1:5672/%2f"
        );
        assert_eq!(redact("amqp://127.0.0.1"), "amqp://127.0.0.1");
    }

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(next_backoff(MIN_BACKOFF), Duration::from_millis(400));
        assert_eq!(next_backoff(Duration::from_secs(20)), MAX_BACKOFF);
    }
}
