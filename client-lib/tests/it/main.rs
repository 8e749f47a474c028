//! Integration tests against the real RabbitMQ (`AM_TEST_AMQP_URL`, default the local one).
//! Each test has its own topology prefix and data exchanges, so they run in parallel; the
//! harness plays the manager.

mod agents;
mod breaker;
mod counters;
mod demo;
mod getting_started;
mod harness;
mod messages;
mod reliability;
mod standalone;
