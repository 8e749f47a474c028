//! Where activations go: `ANY` to the idler node, `MANY` to every live node, and what the
//! overlap policy does with a second run while the first still runs.

use crate::harness::{APP, CatalogBuilder, LONG, SHORT, World};
use am_services::testing::Backend;
use serde_json::json;
use std::collections::BTreeSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_goes_to_the_idler_node() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .sleep("demo.busy", "60s")
            .sleep("demo.probe", "200ms")
            .build(),
    )
    .await;
    w.start_node("h1");
    w.start_node("h2");
    let m = w.manager().await;
    w.wait_live(&["h1", "h2"]).await;

    let busy = m.run_ls("demo.busy").await;
    w.wait_status(busy, &["running"], SHORT).await;
    let busy_host = w.hosts_of(busy).await[0].host.clone();
    let idle_host = if busy_host == "h1" { "h2" } else { "h1" };

    for _ in 0..3 {
        let probe = m.run_ls("demo.probe").await;
        let done = w.wait_done(probe, SHORT).await;
        assert_eq!(done.status, "succeeded");
        let hosts = w.hosts_of(probe).await;
        assert_eq!(hosts.len(), 1);
        assert_eq!(
            hosts[0].host, idle_host,
            "the node running demo.busy is busier"
        );
    }
    assert_eq!(w.activation(busy).await.status, "running");
    // Each run is counted once, by agent and result, where its end and start were written.
    let runs = &m.metrics().runs;
    assert_eq!(runs.finished.get(&[APP, "sleep", "succeeded"]), 3);
    assert_eq!(runs.duration.count(&[APP, "sleep", "succeeded"]), 3);
    assert_eq!(
        runs.start_delay.count(&[APP, "sleep"]),
        4,
        "demo.busy and 3 probes started"
    );
    m.stop().await;
    w.finish(&[]).await;
}

/// (host, status) of an activation's dispatches.
async fn hosts_of_run(w: &World, id: uuid::Uuid) -> BTreeSet<(String, String)> {
    w.hosts_of(id)
        .await
        .into_iter()
        .map(|h| (h.host, h.status))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_runs_on_every_live_node() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2", "h3"])
            .agent("sleep", "MANY", "allow")
            .agent("echo", "MANY", "allow")
            .sleep("demo.everywhere", "300ms")
            .ls(
                "demo.echo",
                "echo",
                "stream",
                json!({ "stream_mode": "asap" }),
            )
            .build(),
    )
    .await;
    w.start_node("h1");
    w.start_node("h2");
    let m = w.manager().await;
    w.wait_live(&["h1", "h2"]).await;

    // A scheduled launch setting runs once on each live node of the pool.
    let run = m.run_ls("demo.everywhere").await;
    assert_eq!(w.wait_done(run, SHORT).await.status, "succeeded");
    assert_eq!(
        hosts_of_run(&w, run).await,
        BTreeSet::from([
            ("h1".into(), "succeeded".into()),
            ("h2".into(), "succeeded".into())
        ])
    );

    // A stream runs on every live node, sharing its subscription.
    let stream = w
        .wait("the echo stream running on h1 and h2", SHORT, || async {
            let run = w.runs_of("demo.echo").await.pop()?;
            let running: BTreeSet<String> = w
                .hosts_of(run.id)
                .await
                .into_iter()
                .filter(|h| h.status == "running")
                .map(|h| h.host)
                .collect();
            (running.len() == 2).then_some(run.id)
        })
        .await;
    for i in 0..20 {
        w.publish(&format!("hello {i}")).await;
    }
    w.wait("20 messages processed between the nodes", SHORT, || async {
        let processed: i64 = w.hosts_of(stream).await.iter().map(|h| h.processed).sum();
        (processed == 20).then_some(())
    })
    .await;

    // A node that comes up joins the running stream, and the next run includes it.
    w.start_node("h3");
    w.wait_live(&["h3"]).await;
    w.wait("h3 joining the echo stream", SHORT, || async {
        w.hosts_of(stream)
            .await
            .into_iter()
            .any(|h| h.host == "h3" && h.status == "running")
            .then_some(())
    })
    .await;
    assert!(
        w.events_of(stream)
            .await
            .iter()
            .any(|e| e.kind == "joined: node came up" && e.host.as_deref() == Some("h3"))
    );
    let run = m.run_ls("demo.everywhere").await;
    assert_eq!(w.wait_done(run, SHORT).await.status, "succeeded");
    let hosts: BTreeSet<String> = hosts_of_run(&w, run)
        .await
        .into_iter()
        .map(|h| h.0)
        .collect();
    assert_eq!(
        hosts,
        BTreeSet::from(["h1".into(), "h2".into(), "h3".into()])
    );
    assert_eq!(
        w.runs_of("demo.echo").await.len(),
        1,
        "one stream activation"
    );
    m.stop().await;
    w.finish(&["demo.echo"]).await;
}

/// `skip` holds for the whole pool: with two live nodes, a second *Run now* while the first
/// runs is skipped by the manager (naming the run it met and its host) instead of landing on
/// the idler node, for `ANY` and for `MANY`.
async fn overlap_skip_holds_across_nodes(concurrency: &str) {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .agent("sleep", concurrency, "skip")
            .sleep("demo.slow", "3s")
            .build(),
    )
    .await;
    w.start_node("h1");
    w.start_node("h2");
    let m = w.manager().await;
    w.wait_live(&["h1", "h2"]).await;

    let first = m.run_ls("demo.slow").await;
    w.wait_status(first, &["running"], SHORT).await;
    let first_hosts: Vec<String> = w
        .hosts_of(first)
        .await
        .into_iter()
        .map(|h| h.host)
        .collect();
    // Two quick clicks: both are skipped, neither reaches a node.
    let second = m.run_ls("demo.slow").await;
    let third = m.run_ls("demo.slow").await;
    for id in [second, third] {
        let skipped = w.wait_done(id, SHORT).await;
        assert_eq!(skipped.status, "skipped");
        let reason = skipped.error.unwrap_or_default();
        let short = first.to_string()[..8].to_owned();
        assert!(
            reason.contains(&short) && reason.contains(&first_hosts[0]),
            "the reason names the running run and its host: {reason}"
        );
        assert!(reason.contains("overlap policy: skip"), "{reason}");
        assert!(w.hosts_of(id).await.is_empty(), "dispatched nowhere");
    }
    assert_eq!(w.activation(first).await.status, "running");
    assert_eq!(w.wait_done(first, SHORT).await.status, "succeeded");
    // A skipped run is not the launch setting's last result.
    let ls = w.launch_setting("demo.slow").await;
    assert_eq!(ls.last_result.as_deref(), Some("succeeded"));
    assert_eq!(ls.last_activation_id, Some(first));
    // Once the first has ended, the next run goes.
    let after = m.run_ls("demo.slow").await;
    assert_eq!(w.wait_done(after, SHORT).await.status, "succeeded");
    m.stop().await;
    w.finish(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlap_skip_holds_across_nodes_for_any() {
    overlap_skip_holds_across_nodes("ANY").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlap_skip_holds_across_nodes_for_many() {
    overlap_skip_holds_across_nodes("MANY").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlap_interrupt_ends_the_first_run_and_starts_the_second() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1"])
            .agent("sleep", "ANY", "interrupt")
            .sleep("demo.slow", "3s")
            .build(),
    )
    .await;
    w.start_node("h1");
    let m = w.manager().await;
    w.wait_live(&["h1"]).await;

    let first = m.run_ls("demo.slow").await;
    w.wait_status(first, &["running"], SHORT).await;
    let second = m.run_ls("demo.slow").await;
    assert_eq!(w.wait_done(first, SHORT).await.status, "interrupted");
    assert_eq!(w.wait_done(second, LONG).await.status, "succeeded");
    let runs = &m.metrics().runs;
    for result in ["interrupted", "succeeded"] {
        assert_eq!(runs.finished.get(&[APP, "sleep", result]), 1, "{result}");
    }
    let first_host = &w.hosts_of(first).await[0];
    let second_host = &w.hosts_of(second).await[0];
    assert_eq!(first_host.status, "interrupted");
    let ended = first_host.finished_at.expect("the first run ended");
    let started = second_host.started_at.expect("the second run started");
    assert!(
        started >= ended,
        "the second run started at {started}, before the first ended at {ended}"
    );
    m.stop().await;
    w.finish(&[]).await;
}

/// *Run now* on SQLite while the runtime writes all the time (heartbeats, reports, watchdog):
/// a transaction that reads before it writes must not fail with "database is locked".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_now_succeeds_while_the_runtime_writes() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .sleep("demo.quick", "10ms")
            .build(),
    )
    .await;
    w.start_node("h1");
    w.start_node("h2");
    let m = w.manager().await;
    w.wait_live(&["h1", "h2"]).await;
    let mut runs = Vec::new();
    for _ in 0..40 {
        runs.push(m.run_ls("demo.quick").await);
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    for id in runs {
        assert_eq!(w.wait_done(id, SHORT).await.status, "succeeded");
    }
    m.stop().await;
    w.finish(&[]).await;
}

/// A burst larger than the pool's capacity (two nodes of one slot each, six runs at once): every
/// launch runs in the end, the nodes queue what they cannot start, and none is `skipped`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_beyond_the_pools_capacity_runs_every_launch() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .sleep("demo.burst", "700ms")
            .build(),
    )
    .await;
    w.start_node_with("h1", 1);
    w.start_node_with("h2", 1);
    let m = w.manager().await;
    w.wait_live(&["h1", "h2"]).await;

    let mut runs = Vec::new();
    for _ in 0..6 {
        runs.push(m.run_ls("demo.burst").await);
    }
    let mut hosts = BTreeSet::new();
    for id in runs {
        let done = w.wait_done(id, LONG).await;
        assert_eq!(done.status, "succeeded", "{}", w.dump().await);
        for h in w.hosts_of(id).await {
            assert_eq!(h.status, "succeeded");
            hosts.insert(h.host);
        }
    }
    assert_eq!(
        hosts,
        BTreeSet::from(["h1".into(), "h2".into()]),
        "both nodes took a share"
    );
    m.stop().await;
    w.finish(&[]).await;
}
