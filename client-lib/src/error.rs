//! Errors: [`AgentError`] is what agents return, [`NodeError`] what starting a node returns.

use std::fmt;

/// How an agent's run or message ended badly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A real failure: counted by the breaker, retried (messages) or ends the run `failed`.
    Failed,
    /// A transient condition the agent detected (e.g. a document not replicated yet): the
    /// message comes back later and the breaker does not count it.
    TemporarilyUnavailable,
    /// The agent stopped because it was asked to (stop, interrupt, shutdown).
    Interrupted,
}

/// The error an agent returns. Any `std::error::Error` converts into a [`ErrorKind::Failed`]
/// one with `?`, its error type taken from the Rust type name.
///
/// ```
/// use agent_client::{AgentError, ErrorKind};
/// fn parse(s: &str) -> Result<u32, AgentError> {
///     Ok(s.parse::<u32>()?)
/// }
/// let e = parse("x").unwrap_err();
/// assert_eq!(e.kind(), ErrorKind::Failed);
/// assert_eq!(e.error_type(), "ParseIntError");
/// let t = AgentError::temporarily_unavailable("not replicated yet");
/// assert!(t.is_temporary());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentError {
    kind: ErrorKind,
    error_type: String,
    message: String,
    details: String,
}

impl AgentError {
    /// A failure with an error type (what the breaker compares) and a message.
    ///
    /// ```
    /// let e = agent_client::AgentError::failed("Timeout", "the ERP did not answer");
    /// assert_eq!(e.error_type(), "Timeout");
    /// ```
    pub fn failed(error_type: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Failed,
            error_type: error_type.into(),
            message: message.into(),
            details: String::new(),
        }
    }

    /// A transient condition: retried later, ignored by the breaker.
    ///
    /// ```
    /// let e = agent_client::AgentError::temporarily_unavailable("replica lagging");
    /// assert_eq!(e.error_type(), "TemporarilyUnavailable");
    /// ```
    pub fn temporarily_unavailable(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::TemporarilyUnavailable,
            error_type: "TemporarilyUnavailable".into(),
            message: message.into(),
            details: String::new(),
        }
    }

    /// The agent honoured a cancellation.
    ///
    /// ```
    /// assert!(agent_client::AgentError::interrupted().is_interrupted());
    /// ```
    pub fn interrupted() -> Self {
        Self {
            kind: ErrorKind::Interrupted,
            error_type: "Interrupted".into(),
            message: "interrupted".into(),
            details: String::new(),
        }
    }

    /// Adds details (a stack, a response body) shown in the failure log.
    ///
    /// ```
    /// let e = agent_client::AgentError::failed("Http", "502").with_details("<html>…");
    /// assert_eq!(e.details(), "<html>…");
    /// ```
    pub fn with_details(mut self, details: impl Into<String>) -> Self {
        self.details = details.into();
        self
    }

    /// The kind of the error.
    ///
    /// ```
    /// use agent_client::{AgentError, ErrorKind};
    /// assert_eq!(AgentError::interrupted().kind(), ErrorKind::Interrupted);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The error type the breaker compares and the failure log groups by.
    ///
    /// ```
    /// assert_eq!(agent_client::AgentError::failed("Io", "disk").error_type(), "Io");
    /// ```
    pub fn error_type(&self) -> &str {
        &self.error_type
    }

    /// The human message.
    ///
    /// ```
    /// assert_eq!(agent_client::AgentError::failed("Io", "disk").message(), "disk");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Details given with [`AgentError::with_details`] (or the error's source chain).
    ///
    /// ```
    /// assert_eq!(agent_client::AgentError::failed("Io", "disk").details(), "");
    /// ```
    pub fn details(&self) -> &str {
        &self.details
    }

    /// Whether this is a *temporarily unavailable* error.
    ///
    /// ```
    /// assert!(!agent_client::AgentError::failed("Io", "disk").is_temporary());
    /// ```
    pub fn is_temporary(&self) -> bool {
        self.kind == ErrorKind::TemporarilyUnavailable
    }

    /// Whether the agent stopped on request.
    ///
    /// ```
    /// assert!(!agent_client::AgentError::failed("Io", "disk").is_interrupted());
    /// ```
    pub fn is_interrupted(&self) -> bool {
        self.kind == ErrorKind::Interrupted
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error_type, self.message)
    }
}

// Not `std::error::Error` on purpose: that would forbid this blanket conversion (as with
// `anyhow::Error`), and `?` on any error is what makes agents short.
impl<E: std::error::Error + Send + Sync + 'static> From<E> for AgentError {
    fn from(e: E) -> Self {
        let full = std::any::type_name::<E>();
        // `std::num::error::ParseIntError` → `ParseIntError`; generics keep their outer name.
        let base = full.split('<').next().unwrap_or(full);
        let short = base.rsplit("::").next().unwrap_or(base);
        let mut details = String::new();
        let mut source = e.source();
        while let Some(s) = source {
            details.push_str("caused by: ");
            details.push_str(&s.to_string());
            details.push('\n');
            source = s.source();
        }
        Self {
            kind: ErrorKind::Failed,
            error_type: short.to_owned(),
            message: e.to_string(),
            details,
        }
    }
}

/// Why a node could not be built or started.
///
/// ```
/// use agent_client::{NodeBuilder, NodeError};
/// let err = NodeBuilder::new("Bad App", "h1").validate().unwrap_err();
/// assert!(matches!(err, NodeError::Invalid(_)));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The configuration or an agent registration is invalid; every problem is listed.
    #[error("invalid node configuration: {}", .0.join("; "))]
    Invalid(Vec<String>),
    /// The broker refused or failed an operation.
    #[error("broker error: {0}")]
    Broker(#[from] lapin::Error),
    /// The node stopped before it was ready.
    #[error("the node stopped before it was ready")]
    Stopped,
}
