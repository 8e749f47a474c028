//! Database migrations of the Agent Manager.
//!
//! The same migrations run on SQLite (the embedded default) and PostgreSQL (production, HA),
//! so they only use portable column types: text, integers, double, boolean, timestamps with
//! time zone, JSON (text on SQLite), UUID (text on SQLite) and blobs (`bytea` on PostgreSQL).
//!
//! Migrations are grouped by area:
//! - [`m20261121_000001_catalog`]: applications, hosts, pools, data queues, agents,
//!   classifiers, launch settings and schedule groups;
//! - [`m20261121_000002_runtime`]: nodes, activations and their hosts and events, failure
//!   logs, dead letters, the outbox, notifications and breaker trips;
//! - [`m20261121_000003_operations_audit`]: bulk operations and the audit log;
//! - [`m20261121_000004_accounts`]: users, API tokens and sessions;
//! - [`m20261121_000005_dispatch`]: what the runtime added: the agents each node offers, group
//!   failure handling, outbox claims and the dispatch state of activations;
//! - [`m20261121_000006_read_indexes`]: what the operations console reads by (newest
//!   activations, of a status; the dead letter of a data message);
//! - [`m20261121_000007_dead_letter_indexes`]: what the dead-letter browser filters by, a
//!   message's failure history, and the AMQP properties a replay restores;
//! - [`m20261124_000008_broker_topology`]: what the broker reconciler last applied, and its
//!   lease;
//! - [`m20261124_000009_exact_reports`]: failure reports stored once (by the id their node
//!   gave them) with what the node knew of them, and the protocol version of each node;
//! - [`m20261124_000010_waiting_publications`]: the publication of a node whose application is
//!   not in the catalog yet, applied once it is;
//! - [`m20261124_000011_dead_letter_forward`]: dead-letter policy `forward` (the exchange of a
//!   launch setting, and the copy each dead letter still owes it);
//! - [`m20261124_000012_unavailable_budget`]: how long a launch setting's messages may answer
//!   "temporarily unavailable" before they are dead-lettered;
//! - [`m20261125_000013_recovery`]: hosts a `MANY` breaker quarantined, and per launch setting
//!   the count of each kind of recovery;
//! - [`m20261125_000014_replay_outcomes`]: what became of each replayed dead letter;
//! - [`m20261125_000015_run_counts`]: the dashboard's count of runs (a group's run once);
//! - [`m20261125_000016_disabled_and_success`]: who disabled an item and when, and when a
//!   launch setting last succeeded;
//! - [`m20261125_000017_notifications`]: notifications as an outbox of their own, and the
//!   secrets that sign webhooks;
//! - [`m20261125_000018_webhook_format`]: whether a webhook wants JSON or chat text;
//! - [`m20261125_000019_audit_reading`]: the address a change came from; audit filter indexes;
//! - [`m20261125_000020_token_roles`]: a token's own role and the address it was last used from;
//! - [`m20261125_000021_notify_email`]: the addresses that get notifications by e-mail;
//! - [`m20261125_000022_session_details`]: the address and browser of each login session;
//! - [`m20261125_000023_notify_on_failure`]: launch settings that want every failed
//!   activation told;
//! - [`m20261125_000024_success_window`]: the dead man's switch of schedule groups;
//! - [`m20261125_000025_channels`]: the events each notification channel is told, and
//!   schedule groups' own channels;
//! - [`m20261126_000026_consumed_queue`]: the queue each dispatch of a stream was told to
//!   consume;
//! - [`m20261126_000027_publication_refusals`]: what a node published that the catalog refused;
//! - [`m20261127_000028_failure_kind`]: the kind of each failure report (failed, retried,
//!   unavailable), in the drill-down's indexes;
//! - [`m20261128_000029_throughput_minutes`]: processed messages and backlog per minute, for the
//!   charts of the last hour;
//! - [`m20261129_000030_error_types`]: the error types each launch setting's failures
//!   reported, for the global search;
//! - [`m20261129_000031_classifier_value_order`]: classifier values in their order, for the
//!   picker's first page;
//! - [`m20261206_000032_trace_parent`]: the trace an activation began in, for the spans of
//!   its later dispatches to link to.
//!
//! Every migration runs inside a transaction on every backend, so a failed migration leaves
//! nothing half-applied.
//!
//! ```no_run
//! use migration::{Migrator, MigratorTrait};
//! # async fn run(db: &sea_orm_migration::sea_orm::DatabaseConnection) -> Result<(), sea_orm_migration::DbErr> {
//! Migrator::up(db, None).await?;
//! # Ok(())
//! # }
//! ```

pub use sea_orm_migration::prelude::*;

pub mod m20261121_000001_catalog;
pub mod m20261121_000002_runtime;
pub mod m20261121_000003_operations_audit;
pub mod m20261121_000004_accounts;
pub mod m20261121_000005_dispatch;
pub mod m20261121_000006_read_indexes;
pub mod m20261121_000007_dead_letter_indexes;
pub mod m20261124_000008_broker_topology;
pub mod m20261124_000009_exact_reports;
pub mod m20261124_000010_waiting_publications;
pub mod m20261124_000011_dead_letter_forward;
pub mod m20261124_000012_unavailable_budget;
pub mod m20261125_000013_recovery;
pub mod m20261125_000014_replay_outcomes;
pub mod m20261125_000015_run_counts;
pub mod m20261125_000016_disabled_and_success;
pub mod m20261125_000017_notifications;
pub mod m20261125_000018_webhook_format;
pub mod m20261125_000019_audit_reading;
pub mod m20261125_000020_token_roles;
pub mod m20261125_000021_notify_email;
pub mod m20261125_000022_session_details;
pub mod m20261125_000023_notify_on_failure;
pub mod m20261125_000024_success_window;
pub mod m20261125_000025_channels;
pub mod m20261126_000026_consumed_queue;
pub mod m20261126_000027_publication_refusals;
pub mod m20261127_000028_failure_kind;
pub mod m20261128_000029_throughput_minutes;
pub mod m20261129_000030_error_types;
pub mod m20261129_000031_classifier_value_order;
pub mod m20261206_000032_trace_parent;
mod util;

/// Every migration of the manager's database, in order.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261121_000001_catalog::Migration),
            Box::new(m20261121_000002_runtime::Migration),
            Box::new(m20261121_000003_operations_audit::Migration),
            Box::new(m20261121_000004_accounts::Migration),
            Box::new(m20261121_000005_dispatch::Migration),
            Box::new(m20261121_000006_read_indexes::Migration),
            Box::new(m20261121_000007_dead_letter_indexes::Migration),
            Box::new(m20261124_000008_broker_topology::Migration),
            Box::new(m20261124_000009_exact_reports::Migration),
            Box::new(m20261124_000010_waiting_publications::Migration),
            Box::new(m20261124_000011_dead_letter_forward::Migration),
            Box::new(m20261124_000012_unavailable_budget::Migration),
            Box::new(m20261125_000013_recovery::Migration),
            Box::new(m20261125_000014_replay_outcomes::Migration),
            Box::new(m20261125_000015_run_counts::Migration),
            Box::new(m20261125_000016_disabled_and_success::Migration),
            Box::new(m20261125_000017_notifications::Migration),
            Box::new(m20261125_000018_webhook_format::Migration),
            Box::new(m20261125_000019_audit_reading::Migration),
            Box::new(m20261125_000020_token_roles::Migration),
            Box::new(m20261125_000021_notify_email::Migration),
            Box::new(m20261125_000022_session_details::Migration),
            Box::new(m20261125_000023_notify_on_failure::Migration),
            Box::new(m20261125_000024_success_window::Migration),
            Box::new(m20261125_000025_channels::Migration),
            Box::new(m20261126_000026_consumed_queue::Migration),
            Box::new(m20261126_000027_publication_refusals::Migration),
            Box::new(m20261127_000028_failure_kind::Migration),
            Box::new(m20261128_000029_throughput_minutes::Migration),
            Box::new(m20261129_000030_error_types::Migration),
            Box::new(m20261129_000031_classifier_value_order::Migration),
            Box::new(m20261206_000032_trace_parent::Migration),
        ]
    }
}
