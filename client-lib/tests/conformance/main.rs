//! The node conformance suite (docs/conformance.md): scenarios any node implementation must
//! pass, driven through the real broker against a node **process** started from
//! `AM_CONFORMANCE_NODE` (a command line; default this crate's `demo-node`). The suite plays
//! the manager with the `it` suite's harness and reads what the node's scripted agents saw.

// A test reads as one scenario, set-up to last check.
#![allow(clippy::too_many_lines)]

// The fault suite's cluster of `scripts/cluster.sh`, for a node losing its broker member.
#[allow(
    dead_code,
    reason = "shared with the manager's fault suite, which uses all of it"
)]
#[path = "../../../server/tests/runtime/cluster/members.rs"]
mod cluster;
#[allow(
    dead_code,
    reason = "the harness is shared with the `it` suite, which uses all of it"
)]
#[path = "../it/harness.rs"]
mod harness;
mod lifecycle;
mod messages;
mod node;
#[allow(
    dead_code,
    reason = "the receiver is shared with the manager's runtime tests, which use all of it"
)]
#[path = "../common/otlp.rs"]
mod otlp;
mod standalone;
mod traces;
