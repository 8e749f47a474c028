//! Two manager replicas on one PostgreSQL database: both time every fire, one records it; both
//! relay and consume reports, and every activation runs once.

use crate::harness::{CatalogBuilder, LONG, World, fire_time};
use am_services::testing::Backend;
use chrono::Utc;
use serde_json::json;
use std::collections::HashSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_record_every_fire_once_and_run_it_once() {
    let mut w = World::new(Backend::Postgres).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .sleep("demo.tick", "100ms")
            .group("demo.every", "* * * * * *", &["demo.tick"], json!({}))
            .build(),
    )
    .await;
    w.start_node("h1");
    w.start_node("h2");
    let a = w.manager().await;
    let b = w.manager().await;
    w.wait_live(&["h1", "h2"]).await;
    let since = Utc::now();

    w.wait("six finished fires", LONG, || async {
        let done = w
            .group_runs("demo.every")
            .await
            .into_iter()
            .filter(|r| r.created_at > since && r.status == "succeeded")
            .count();
        (done >= 6).then_some(())
    })
    .await;
    let (a_metrics, b_metrics) = (a.metrics(), b.metrics());
    a.stop().await;
    b.stop().await;
    let count = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
    let (a_fires, a_duplicates) = (count(&a_metrics.fires), count(&a_metrics.duplicate_fires));
    let (b_fires, b_duplicates) = (count(&b_metrics.fires), count(&b_metrics.duplicate_fires));

    let runs = w.group_runs("demo.every").await;
    assert!(runs.iter().all(|r| r.trigger == "schedule"));
    let mut times: Vec<_> = runs.iter().map(fire_time).collect();
    times.sort();
    let distinct: HashSet<_> = times.iter().collect();
    assert_eq!(distinct.len(), times.len(), "a fire recorded twice");
    for pair in times.windows(2) {
        assert_eq!(
            pair[1] - pair[0],
            chrono::Duration::seconds(1),
            "no second without its fire between {} and {}",
            pair[0],
            pair[1]
        );
    }
    assert_eq!(
        a_fires + b_fires,
        runs.len() as u64,
        "the replicas' fire counters add up to the recorded fires"
    );
    assert!(
        a_duplicates + b_duplicates > 0,
        "both replicas timed the fires and one lost the race"
    );

    // Each member ran once, on one node; each launch went out once.
    for run in runs.iter().filter(|r| r.status == "succeeded") {
        let members = w.members_of(run.id).await;
        assert_eq!(members.len(), 1);
        let hosts = w.hosts_of(members[0].id).await;
        assert_eq!(hosts.len(), 1, "{}", w.dump().await);
        assert_eq!(hosts[0].status, "succeeded");
        let started = w
            .events_of(members[0].id)
            .await
            .into_iter()
            .filter(|e| e.kind == "started")
            .count();
        assert_eq!(started, 1);
    }
    let outbox = w.outbox().await;
    let ids: HashSet<&str> = outbox.iter().map(|o| o.message_id.as_str()).collect();
    assert_eq!(ids.len(), outbox.len(), "a command written twice");
    w.finish(&[]).await;
}
