//! The `agent-manager` binary's library: configuration, HTTP (JSON API and admin UI), the
//! broker connection, the runtime (scheduler, outbox relay, report consumer, watchdog) and the
//! command-line commands. `main.rs` only parses arguments.

/// jemalloc instead of glibc's malloc for the manager (and everything linking this library):
/// glibc gives threads that allocate arenas of their own and keeps what was freed in them, so
/// the manager's resident memory grew with its threads (tokio workers, one per SQLite
/// connection, lapin's) to several times its live heap (docs/benchmarks.md, P2). On by default
/// (feature `jemalloc`); the demo and test scripts build without it.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

pub mod allowed_hosts;
pub mod api;
pub mod auth;
pub mod broker;
pub mod browser_safety;
pub mod commands;
pub mod config;
pub mod dead_letter_messages;
pub mod error;
pub mod host_check;
pub mod http;
pub mod jobs;
pub mod live;
pub mod metrics;
pub mod runtime;
pub mod state;
pub mod ui_door;
pub mod unrouted;
