//! The `agent-manager` binary's library: configuration, HTTP (JSON API and admin UI), the
//! broker connection, the runtime (scheduler, outbox relay, report consumer, watchdog) and the
//! command-line commands. `main.rs` only parses arguments.

pub mod api;
pub mod auth;
pub mod broker;
pub mod commands;
pub mod config;
pub mod dead_letters;
pub mod error;
pub mod host_check;
pub mod http;
pub mod jobs;
pub mod live;
pub mod metrics;
pub mod runtime;
pub mod state;
pub mod unrouted;
