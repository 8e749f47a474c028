//! A node configured from the environment, as a deployment sets it.

use crate::{NodeBuilder, NodeError, Topology};

impl NodeBuilder {
    /// A node configured from environment variables:
    ///
    /// | variable | default | meaning |
    /// |---|---|---|
    /// | `AM_APP` | required | the application's id in the manager's catalog |
    /// | `AM_HOST` | the machine's host name | this node's host, as listed in its pool |
    /// | `AM_AMQP_URL` | [`DEFAULT_AMQP_URL`](crate::DEFAULT_AMQP_URL) | the broker |
    /// | `AM_PREFIX` | `am` | prefix of every broker name; the manager's `AM_PREFIX` |
    /// | `AM_CAPACITY` | 8 | activations the node runs at once |
    /// | `AM_QUEUE_EXPIRY` | unset | tests and demos only: queues expire when unused this long, with the messages they hold; the manager's `AM_QUEUE_EXPIRY` |
    ///
    /// Every variable that is set but wrong is reported, each by its name.
    ///
    /// ```
    /// // With AM_APP=billing (and the rest defaulted):
    /// # let vars = |name: &str| (name == "AM_APP").then(|| "billing".to_owned());
    /// let builder = agent_client::NodeBuilder::from_vars(vars)?;
    /// # Ok::<(), agent_client::NodeError>(())
    /// ```
    pub fn from_env() -> Result<Self, NodeError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// As [`from_env`](Self::from_env), reading each variable from `vars` (for tests, or to
    /// give a variable a default of your own); an empty value counts as unset.
    ///
    /// ```
    /// let vars = |name: &str| match name {
    ///     "AM_APP" => Some("billing".to_owned()),
    ///     "AM_HOST" => Some("billing-01".to_owned()),
    ///     "AM_CAPACITY" => Some("four".to_owned()),
    ///     _ => None,
    /// };
    /// let err = agent_client::NodeBuilder::from_vars(vars).expect_err("not a number");
    /// assert!(err.to_string().contains("AM_CAPACITY: `four` is not a whole number"));
    /// ```
    pub fn from_vars(vars: impl Fn(&str) -> Option<String>) -> Result<Self, NodeError> {
        let var = |name: &str| vars(name).filter(|v| !v.trim().is_empty());
        let mut problems = Vec::new();
        let application = var("AM_APP").unwrap_or_else(|| {
            problems.push(
                "AM_APP: required (the application's id in the manager's catalog)".to_owned(),
            );
            String::new()
        });
        let host = var("AM_HOST")
            .or_else(machine_host_name)
            .unwrap_or_else(|| {
                problems.push(
                    "AM_HOST: not set, and the machine's host name cannot be read".to_owned(),
                );
                String::new()
            });
        let capacity = match var("AM_CAPACITY") {
            Some(raw) => match raw.trim().parse::<u32>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    problems.push(format!(
                        "AM_CAPACITY: `{raw}` is not a whole number of at least 1"
                    ));
                    None
                }
            },
            None => None,
        };
        let expiry = match var("AM_QUEUE_EXPIRY") {
            Some(raw) => match raw.parse::<am_domain::HumanDuration>() {
                Ok(d) if !d.is_zero() => Some(d.0),
                Ok(_) => {
                    problems.push("AM_QUEUE_EXPIRY: must be longer than 0s".to_owned());
                    None
                }
                Err(e) => {
                    problems.push(format!("AM_QUEUE_EXPIRY: {e}"));
                    None
                }
            },
            None => None,
        };
        if !problems.is_empty() {
            return Err(NodeError::Invalid(problems));
        }
        let mut builder = NodeBuilder::new(application, host);
        if let Some(url) = var("AM_AMQP_URL") {
            builder = builder.amqp_url(url);
        }
        if let Some(prefix) = var("AM_PREFIX") {
            builder = builder.topology(Topology::new(prefix));
        }
        // Both sides declare the shared queues: their arguments must agree with the manager's.
        if let Some(expiry) = expiry {
            let topology = builder.broker_topology().clone().ephemeral(expiry);
            builder = builder.topology(topology);
        }
        if let Some(n) = capacity {
            builder = builder.capacity(n);
        }
        Ok(builder)
    }
}

impl NodeBuilder {
    /// The host this node reports as (from [`new`](Self::new) or `AM_HOST`).
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "billing-01");
    /// assert_eq!(b.host_name(), "billing-01");
    /// ```
    pub fn host_name(&self) -> &str {
        &self.host
    }

    /// The broker URL the node will connect to, or the comma-separated list of a cluster's
    /// members.
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h");
    /// assert_eq!(b.broker_url(), agent_client::DEFAULT_AMQP_URL);
    /// ```
    pub fn broker_url(&self) -> &str {
        &self.amqp_url
    }

    /// The broker names and arguments the node will use.
    ///
    /// ```
    /// let b = agent_client::NodeBuilder::new("billing", "h");
    /// assert_eq!(b.broker_topology().names().reports_queue(), "am.reports");
    /// ```
    pub fn broker_topology(&self) -> &Topology {
        &self.topology
    }
}

/// The machine's host name, lower-case, as the kernel knows it.
fn machine_host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_lowercase())
        .filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn reads_every_variable() {
        let b = NodeBuilder::from_vars(vars(&[
            ("AM_APP", "billing"),
            ("AM_HOST", "billing-01"),
            ("AM_AMQP_URL", "amqp://rabbit:5672/%2f"),
            ("AM_PREFIX", "staging"),
            ("AM_CAPACITY", "3"),
        ]))
        .expect("valid");
        assert_eq!(b.application, "billing");
        assert_eq!(b.host, "billing-01");
        assert_eq!(b.amqp_url, "amqp://rabbit:5672/%2f");
        assert_eq!(b.topology.names().reports_queue(), "staging.reports");
        assert_eq!(b.capacity, 3);
    }

    #[test]
    fn defaults_and_errors_name_the_variable() {
        let b = NodeBuilder::from_vars(vars(&[("AM_APP", "billing"), ("AM_PREFIX", "")]))
            .expect("defaults");
        assert_eq!(b.amqp_url, crate::DEFAULT_AMQP_URL);
        assert_eq!(b.topology.names().reports_queue(), "am.reports");
        assert!(!b.host.is_empty(), "the machine's host name");

        let Err(NodeError::Invalid(problems)) =
            NodeBuilder::from_vars(vars(&[("AM_CAPACITY", "0")]))
        else {
            panic!("expected the problems listed");
        };
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("AM_APP: required"));
        assert!(problems[1].starts_with("AM_CAPACITY: `0`"));
    }
}
