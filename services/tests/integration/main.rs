//! Integration tests of the services against real databases: every case runs on SQLite and on
//! PostgreSQL, each on a database of its own.

// A test reads as one scenario, set-up to last check: the one-sitting bound of production
// functions (clippy::too_many_lines) is not theirs.
#![allow(clippy::too_many_lines)]

mod accounts;
mod activations;
mod ahead;
mod audit;
mod browsing;
mod bulk;
mod catalog;
mod channels;
mod dashboard;
mod dead_letters;
mod failures;
mod interrupt;
mod migrate;
mod notifications;
mod operations;
mod people;
mod quarantine;
mod registry;
mod replay_outcomes;
mod reports;
mod rerun;
mod retention;
mod runtime;
mod search;
mod sessions;
mod sweep;
mod throughput;
mod tokens;
mod told;

use am_domain::{catalog::Catalog, roles::Role};
use am_services::{AuthMethod, Principal};

/// Runs an `async fn(&DatabaseConnection)` case once per backend, each on a fresh database.
#[macro_export]
macro_rules! on_both_backends {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                use am_services::testing::{Backend, TestDb};

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    let t = TestDb::new(Backend::Sqlite).await;
                    super::$case(&t.db).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    let t = TestDb::new(Backend::Postgres).await;
                    super::$case(&t.db).await;
                }
            }
        )*
    };
}

pub fn actor(role: Role) -> Principal {
    Principal {
        user_id: 1,
        name: format!("test-{role}"),
        role,
        via: AuthMethod::Token,
        address: None,
    }
}

/// The demo catalog shipped with the repository: valid, and it exercises every entity kind.
pub fn demo_catalog() -> Catalog {
    let mut c: Catalog = serde_json::from_str(include_str!("../../../demo/catalog.json"))
        .expect("demo catalog parses");
    c.normalize();
    c
}
