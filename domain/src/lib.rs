//! Pure types and rules of Agent Manager.
//!
//! Everything here is free of I/O so the manager, the nodes and the browser (wasm) apply the
//! very same rules: the catalog entities and their validation, typed agent parameters, cron
//! schedules, and the small pieces of arithmetic (breaker thresholds, retry delays) that both
//! sides must agree on.

pub mod audit;
pub mod bulk;
pub mod catalog;
pub mod classifier;
pub mod dashboard;
pub mod display;
pub mod duration;
pub mod error;
pub mod exposition;
pub mod failing;
pub mod failure_kind;
pub mod ids;
pub mod links;
pub mod masked;
pub mod notify;
pub mod params;
pub mod policy;
pub mod publication;
pub mod read;
pub mod recovery;
pub mod roles;
pub mod schedule;
pub mod shortened;
pub mod status;
pub mod text;
pub mod throughput;
pub mod topology;
pub mod usage;
pub mod validate;
pub mod wire;
mod words;

pub use duration::HumanDuration;
pub use error::{FieldError, ValidationErrors};
