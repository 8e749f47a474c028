//! Replicas started together on a new PostgreSQL database each migrate it at start: one at a
//! time, so none fails on a table another is creating.

use am_services::{
    db,
    testing::{Backend, TestDb},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_migrating_a_new_database_at_once_all_succeed() {
    let t = TestDb::unmigrated(Backend::Postgres).await;
    let a = db::connect(&t.url).await.expect("replica a connects");
    let b = db::connect(&t.url).await.expect("replica b connects");
    let c = db::connect(&t.url).await.expect("replica c connects");
    let results = tokio::join!(db::migrate(&a), db::migrate(&b), db::migrate(&c));
    for (i, r) in [results.0, results.1, results.2].iter().enumerate() {
        assert!(r.is_ok(), "replica {i}: {r:?}");
    }
    // The schema is whole: a migrated database migrates again with nothing to do.
    db::migrate(&t.db).await.expect("nothing pending");
}
