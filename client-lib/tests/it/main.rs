//! Integration tests against the real RabbitMQ (`AM_TEST_AMQP_URL`, default the local one).
//! Each test has its own topology prefix and data exchanges, so they run in parallel; the
//! harness plays the manager.

// A test reads as one scenario, set-up to last check: the one-sitting bound of production
// functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

mod agents;
mod breaker;
mod compatibility;
mod counters;
mod demo;
mod getting_started;
mod harness;
mod messages;
#[allow(
    dead_code,
    reason = "the receiver is shared with the manager's runtime tests, which use all of it"
)]
#[path = "../common/otlp.rs"]
mod otlp;
mod reliability;
mod standalone;
mod traces;
