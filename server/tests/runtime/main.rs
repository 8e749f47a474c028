//! The manager runtime end to end: in-process managers (scheduler, outbox relay, report
//! consumer, watchdog) on a real database, the real RabbitMQ, and `demo-node` processes with
//! different host names, which the tests kill, freeze and cut off.
//!
//! Every test has its own broker prefix, data exchange and database, so they run in parallel.
//! The node binary must be built first: `cargo build -p agent-client --features demo --bin demo-node`.

// A test reads as one scenario, set-up to last check: the one-sitting bound of production
// functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

mod breaker;
mod cluster;
mod dispatch;
mod failover;
mod follow;
mod forward;
mod getting_started;
mod harness;
mod isolation;
mod java_getting_started;
mod malformed;
mod misfire;
mod netns;
mod notify;
mod notify_email;
#[allow(
    dead_code,
    reason = "shared with the node conformance suite, which uses all of it"
)]
#[path = "../../../client-lib/tests/common/otlp.rs"]
mod otlp;
mod outage;
mod overlap;
mod replicas;
mod schedule;
mod topology;
mod traces;
mod unrouted;
mod upgrade;
mod watchdog;
