//! `agent-client`: the library applications embed to become Agent Manager nodes.
//!
//! This release is the empty shell the workspace is built around; the runtime (publication,
//! launches, shared subscriptions, retries, dead letters, breaker) arrives with the wire
//! protocol. Until then the crate only re-exports the shared vocabulary.
//!
//! ```
//! use agent_client::domain::catalog::Concurrency;
//! assert_ne!(Concurrency::Any, Concurrency::Many);
//! ```

/// The types and rules shared with the manager.
pub use am_domain as domain;
