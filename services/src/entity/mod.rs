//! sea-orm entities, one module per table, matching the `migration` crate exactly.
//!
//! Hand-written in the classic `DeriveEntityModel` form. String-valued enums (statuses, kinds,
//! policies) are plain `String` columns holding the domain enums' serde names; durations are
//! `*_ms` milliseconds; timestamps are UTC (`DateTimeUtc`).

pub mod prelude;

pub mod activation_events;
pub mod activation_hosts;
pub mod activations;
pub mod agents;
pub mod api_tokens;
pub mod applications;
pub mod audit_log;
pub mod breaker_trips;
pub mod broker_topology;
pub mod catalog_meta;
pub mod classifier_values;
pub mod classifiers;
pub mod data_queues;
pub mod dead_letters;
pub mod error_types;
pub mod failure_logs;
pub mod host_quarantines;
pub mod hosts;
pub mod launch_settings;
pub mod node_agents;
pub mod nodes;
pub mod notifications;
pub mod operations;
pub mod outbox;
pub mod pool_hosts;
pub mod pools;
pub mod recovery_counts;
pub mod schedule_group_members;
pub mod schedule_groups;
pub mod sessions;
pub mod throughput_minutes;
pub mod users;
