//! Where a client reaches the broker: one AMQP URL, or the members of a RabbitMQ cluster as a
//! comma-separated list (`AM_AMQP_URL`, for the manager and for nodes alike).
//!
//! A client connects to one member and, when it loses that connection or cannot open one, tries
//! the next member on its next attempt: a node on the member that died reconnects through one
//! that lives within seconds. Clients start at different members (by a key such as the node's
//! application and host), so a cluster's connections spread instead of all landing on the
//! first member.

use std::{
    hash::{DefaultHasher, Hash, Hasher},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

/// The broker members a client may connect to, tried in turn.
///
/// ```
/// let brokers = agent_client::BrokerAddresses::parse(
///     "amqp://guest:guest@rabbit-1:5672/%2f, amqp://guest:guest@rabbit-2:5672/%2f",
/// )?;
/// assert_eq!(brokers.len(), 2);
/// let first = brokers.next_url().to_owned();
/// let second = brokers.next_url().to_owned();
/// assert_ne!(first, second, "each attempt goes to the next member");
/// # Ok::<(), agent_client::AddressError>(())
/// ```
#[derive(Debug, Clone)]
pub struct BrokerAddresses {
    urls: Arc<[String]>,
    next: Arc<AtomicUsize>,
}

/// Why a broker address list cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("no broker address given (expected amqp://… or a comma-separated list of them)")]
    Empty,
    /// One entry of the list (counted from 1) is not an AMQP URL.
    #[error("address {position} of the list (`{shown}`): {reason}")]
    Invalid {
        position: usize,
        /// The entry with its password hidden.
        shown: String,
        reason: String,
    },
}

impl BrokerAddresses {
    /// Reads one AMQP URL or a comma-separated list of them (blanks around commas are
    /// ignored). Each must be `amqp://` or `amqps://` and read by lapin's own URI parser (the
    /// one a connection uses), so a bad port or host is refused here rather than retried.
    ///
    /// ```
    /// use agent_client::BrokerAddresses;
    /// assert!(BrokerAddresses::parse("amqp://rabbit:5672/%2f").is_ok());
    /// let err = BrokerAddresses::parse("amqp://a:5672/%2f,http://b").unwrap_err();
    /// assert!(err.to_string().contains("address 2"), "{err}");
    /// ```
    pub fn parse(list: &str) -> Result<Self, AddressError> {
        if list.trim().is_empty() {
            return Err(AddressError::Empty);
        }
        let mut urls = Vec::new();
        for (i, raw) in list.split(',').map(str::trim).enumerate() {
            let invalid = |reason: &str| AddressError::Invalid {
                position: i + 1,
                shown: crate::broker::redact(raw),
                reason: reason.to_owned(),
            };
            let Some((scheme, rest)) = raw.split_once("://") else {
                return Err(invalid("not a URL (expected amqp://host:port/vhost)"));
            };
            if !matches!(scheme, "amqp" | "amqps") {
                return Err(invalid(&format!(
                    "scheme `{scheme}` is not supported (expected amqp:// or amqps://)"
                )));
            }
            let authority = rest.split('/').next().unwrap_or_default();
            if authority
                .rsplit('@')
                .next()
                .is_none_or(|h| h.is_empty() || h.starts_with(':'))
            {
                return Err(invalid("it names no host"));
            }
            if let Err(e) = raw.parse::<lapin::uri::AMQPUri>() {
                return Err(invalid(&e));
            }
            urls.push(raw.to_owned());
        }
        Ok(Self {
            urls: urls.into(),
            next: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// The same members, the first attempt going to the one `key` picks (a node's application
    /// and host, a manager's name): clients with different keys spread over the members.
    ///
    /// ```
    /// let list = "amqp://a:5672/%2f,amqp://b:5672/%2f,amqp://c:5672/%2f";
    /// let first = |key: &str| {
    ///     agent_client::BrokerAddresses::parse(list).unwrap().spread_by(key).next_url().to_owned()
    /// };
    /// assert_eq!(first("billing@app-01"), first("billing@app-01"), "stable for a client");
    /// let starts: std::collections::BTreeSet<String> =
    ///     (0..20).map(|i| first(&format!("billing@app-{i:02}"))).collect();
    /// assert!(starts.len() > 1, "spread over the members");
    /// ```
    pub fn spread_by(self, key: &str) -> Self {
        let mut h = DefaultHasher::new();
        key.hash(&mut h);
        let start = usize::try_from(h.finish() % self.urls.len() as u64).unwrap_or(0);
        self.next.store(start, Ordering::Relaxed);
        self
    }

    /// The member to try now; the next call gives the next member (after the last, the first).
    ///
    /// ```
    /// let b = agent_client::BrokerAddresses::parse("amqp://a:5672/%2f").unwrap();
    /// assert_eq!(b.next_url(), "amqp://a:5672/%2f");
    /// assert_eq!(b.next_url(), "amqp://a:5672/%2f");
    /// ```
    pub fn next_url(&self) -> &str {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.urls.len();
        &self.urls[i]
    }

    /// How many members the list names.
    ///
    /// ```
    /// let b = agent_client::BrokerAddresses::parse("amqp://a:5672/%2f , amqp://b:5672/%2f").unwrap();
    /// assert_eq!(b.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.urls.len()
    }

    /// Always false: a list names at least one member.
    ///
    /// ```
    /// assert!(!agent_client::BrokerAddresses::parse("amqp://a:5672/%2f").unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }

    /// The members, in the order given.
    ///
    /// ```
    /// let b = agent_client::BrokerAddresses::parse("amqp://a:5672/%2f,amqp://b:5672/%2f").unwrap();
    /// assert_eq!(b.urls()[1], "amqp://b:5672/%2f");
    /// ```
    pub fn urls(&self) -> &[String] {
        &self.urls
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_read_and_every_bad_entry_is_named() {
        let b = BrokerAddresses::parse(" amqp://u:p@a:5672/%2f ,amqps://b:5671/v ").expect("valid");
        assert_eq!(b.urls(), ["amqp://u:p@a:5672/%2f", "amqps://b:5671/v"]);
        assert_eq!(
            BrokerAddresses::parse("").expect_err("empty"),
            AddressError::Empty
        );
        assert_eq!(
            BrokerAddresses::parse("  ").expect_err("blank"),
            AddressError::Empty
        );
        for (list, position, what) in [
            ("amqp://a:5672/%2f,", 2, "not a URL"),
            ("amqp://a:5672/%2f,,amqp://b", 2, "not a URL"),
            ("rabbit:5672", 1, "not a URL"),
            ("http://a", 1, "scheme `http`"),
            ("amqp://u:secret@/%2f", 1, "no host"),
            ("amqp://a:5672/%2f,amqp://b:notaport/%2f", 2, "port"),
        ] {
            let Err(AddressError::Invalid {
                position: p,
                shown,
                reason,
            }) = BrokerAddresses::parse(list)
            else {
                panic!("{list} accepted");
            };
            assert_eq!(p, position, "{list}");
            assert!(reason.contains(what), "{list}: {reason}");
            assert!(!shown.contains("secret"), "{shown}");
        }
    }

    #[test]
    fn attempts_go_round_the_members() {
        let b = BrokerAddresses::parse("amqp://a,amqp://b,amqp://c").expect("valid");
        let tried: Vec<&str> = (0..4).map(|_| b.next_url()).collect();
        assert_eq!(tried, ["amqp://a", "amqp://b", "amqp://c", "amqp://a"]);
        // Clones share the turn: a reconnect after a loss moves on from the member lost.
        let c = b.clone();
        assert_eq!(c.next_url(), "amqp://b");
        assert_eq!(b.next_url(), "amqp://c");
    }
}
