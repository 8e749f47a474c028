//! The node's one connection to RabbitMQ, shared by every task through a [`Link`].
//!
//! A supervisor (in the runtime) connects with backoff and publishes the live connection on a
//! watch channel; consumers and publishers wait on it, open their channels, and when their
//! stream breaks they wait for the *next* connection. That gives reconnect-and-resubscribe
//! without two consumers ever sharing one subscription slot.

use lapin::{Connection, ConnectionProperties, Event};
use std::{sync::Arc, time::Duration};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub(crate) const MIN_BACKOFF: Duration = Duration::from_millis(200);
/// Capped low: a node that cannot reach the broker does nothing, so once the network or a
/// member is back, it should not wait long to notice (a one-minute partition with a 30 s cap
/// kept nodes away 18–25 s after the link returned).
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Next delay after a failed connection attempt: doubles, capped.
pub(crate) fn next_backoff(current: Duration) -> Duration {
    (current * 2).clamp(MIN_BACKOFF, MAX_BACKOFF)
}

/// How long opening a broker connection may take, the TCP connect and the AMQP handshake
/// together. A broker that accepts the socket but never answers the handshake (overloaded, or a
/// proxy in front of a dead one) would otherwise hold the attempt forever, and with it every
/// reconnect.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a broker connection could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The broker refused the connection or the network failed.
    #[error(transparent)]
    Broker(#[from] lapin::Error),
    /// Neither a connection nor a refusal within the time allowed.
    #[error("no answer from the broker within {0:?} (TCP connect and AMQP handshake)")]
    Timeout(Duration),
}

/// Opens a connection to `url`, giving up after [`CONNECT_TIMEOUT`]. The manager and the
/// nodes connect through it, so both retry a broker that hangs instead of waiting on it.
///
/// ```no_run
/// # async fn run() -> Result<(), agent_client::ConnectError> {
/// use lapin::ConnectionProperties;
/// let conn = agent_client::connect(
///     "amqp://guest:guest@127.0.0.1:5672/%2f",
///     ConnectionProperties::default(),
/// )
/// .await?;
/// assert!(conn.status().connected());
/// # Ok(()) }
/// ```
pub async fn connect(url: &str, props: ConnectionProperties) -> Result<Connection, ConnectError> {
    connect_within(url, props, CONNECT_TIMEOUT).await
}

/// [`connect`] with a time limit of one's own.
///
/// ```no_run
/// # async fn run() {
/// use lapin::ConnectionProperties;
/// use std::time::Duration;
/// let attempt = agent_client::connect_within(
///     "amqp://guest:guest@127.0.0.1:5672/%2f",
///     ConnectionProperties::default(),
///     Duration::from_secs(5),
/// )
/// .await;
/// if let Err(agent_client::ConnectError::Timeout(after)) = attempt {
///     eprintln!("the broker did not answer within {after:?}");
/// }
/// # }
/// ```
pub async fn connect_within(
    url: &str,
    props: ConnectionProperties,
    limit: Duration,
) -> Result<Connection, ConnectError> {
    match tokio::time::timeout(limit, Connection::connect(url, props)).await {
        Ok(r) => Ok(r?),
        Err(_) => Err(ConnectError::Timeout(limit)),
    }
}

/// How long a graceful close waits for the broker's answer.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// Closes `conn` gracefully (AMQP `connection.close` with `code` and `reason`), waiting at most
/// [`CLOSE_TIMEOUT`] for the broker's answer. A connection that has already failed (lapin
/// marks it so after, for one, a channel error it cannot place) may never get that answer, and
/// a supervisor awaiting it would never reconnect; past the bound the connection is dropped,
/// which closes its socket.
///
/// ```no_run
/// # async fn run(conn: lapin::Connection) {
/// agent_client::close(&conn, 200, "shutting down").await;
/// # }
/// ```
pub async fn close(conn: &Connection, code: u16, reason: &str) {
    let closing = conn.close(code, reason.into());
    if let Err(_elapsed) = tokio::time::timeout(CLOSE_TIMEOUT, closing).await {
        tracing::warn!(%reason, "the broker did not answer the connection's close in time");
    }
}

/// Why `conn` is lost, when an event of its [`Connection::events_listener`] says it is; `None`
/// for any other event. lapin reports a channel the broker closed (a refused declare, a
/// consumer's queue gone, a queue whose cluster member is down) on the same stream as the loss
/// of the connection, and marks a lost connection as such before it sends the event: an error
/// while the connection is still up is one channel's, and the connection stays.
///
/// ```no_run
/// # async fn run(conn: lapin::Connection) {
/// use futures_util::StreamExt;
/// let mut events = Box::pin(conn.events_listener());
/// while let Some(event) = events.next().await {
///     if let Some(reason) = agent_client::lost_by(&conn, &event) {
///         eprintln!("lost the broker connection: {reason}");
///         break;
///     }
/// }
/// # }
/// ```
pub fn lost_by(conn: &Connection, event: &Event) -> Option<String> {
    match event {
        Event::Error(e) if !conn.status().connected() => Some(e.to_string()),
        Event::Error(e) => {
            tracing::debug!(error = %e, "a channel was closed; the connection stays");
            None
        }
        _ => None,
    }
}

/// Whether the broker refused to declare an object because it holds one of that name with
/// other arguments (`PRECONDITION_FAILED`; the channel is closed with it): declared by another
/// installation, or by an older version with other arguments.
///
/// ```no_run
/// # async fn run(channel: lapin::Channel) {
/// use lapin::{options::QueueDeclareOptions, types::FieldTable};
/// let declared = channel
///     .queue_declare("am.x".into(), QueueDeclareOptions::default(), FieldTable::default())
///     .await;
/// if let Err(e) = declared {
///     if agent_client::is_precondition_failed(&e) {
///         eprintln!("am.x exists with other arguments");
///     }
/// }
/// # }
/// ```
pub fn is_precondition_failed(e: &lapin::Error) -> bool {
    use lapin::protocol::{AMQPErrorKind, AMQPSoftError};
    matches!(
        e.kind(),
        lapin::ErrorKind::ProtocolError(p)
            if matches!(p.kind(), AMQPErrorKind::Soft(AMQPSoftError::PRECONDITIONFAILED))
    )
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

    /// A listener that accepts the socket and never says a word: the attempt ends at the
    /// limit, as a timeout, instead of hanging.
    #[tokio::test]
    async fn a_broker_that_never_answers_the_handshake_times_out() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binds");
        let port = listener.local_addr().expect("address").port();
        let held = tokio::spawn(async move {
            let mut sockets = Vec::new();
            while let Ok((s, _)) = listener.accept().await {
                sockets.push(s);
            }
        });
        let started = std::time::Instant::now();
        let attempt = connect_within(
            &format!("amqp://guest:guest@127.0.0.1:{port}/%2f"),
            ConnectionProperties::default(),
            Duration::from_millis(300),
        )
        .await;
        assert!(
            matches!(attempt, Err(ConnectError::Timeout(d)) if d == Duration::from_millis(300)),
            "{attempt:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        held.abort();
    }

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(next_backoff(MIN_BACKOFF), Duration::from_millis(400));
        assert_eq!(next_backoff(Duration::from_secs(8)), MAX_BACKOFF);
    }
}
