//! The watchdog with nodes that die (SIGKILL) or freeze (SIGSTOP): launches not accepted in
//! time move to another node with a new fencing token, runs without heartbeat are lost and
//! restarted or failed, and a frozen node's late answers carry an old token and are ignored.

use crate::harness::{CatalogBuilder, LONG, SHORT, World};
use am_services::testing::Backend;
use serde_json::json;
use uuid::Uuid;

/// Short watchdog deadlines (nodes heartbeat every 500 ms and `sleep` reports progress every
/// second).
fn recovery(on_lost: &str) -> serde_json::Value {
    json!({ "recovery": { "start_timeout": "2s", "work_timeout": "3s", "on_lost": on_lost } })
}

/// Starts `demo.busy` (a long sleep) on h2 before h1 exists, so that h1 is the idler node
/// afterwards and gets the next `ANY` launch.
async fn h2_busy_then_h1(w: &mut World, m: &crate::harness::Manager) {
    w.start_node("h2");
    w.wait_live(&["h2"]).await;
    let busy = m.run_ls("demo.busy").await;
    w.wait_status(busy, &["running"], SHORT).await;
    w.start_node("h1");
    w.wait_live(&["h1"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_not_accepted_in_time_moves_to_another_node() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .sleep("demo.busy", "60s")
            .sleep_with("demo.probe", "500ms", recovery("restart"))
            .build(),
    )
    .await;
    let m = w.manager().await;
    h2_busy_then_h1(&mut w, &m).await;

    // h1 dies, but still looks alive: it gets the launch and never answers.
    w.node("h1").kill().await;
    let probe = m.run_ls("demo.probe").await;
    assert_eq!(w.hosts_of(probe).await[0].host, "h1");

    let done = w.wait_done(probe, LONG).await;
    assert_eq!(done.status, "succeeded");
    assert_eq!(done.fencing_token, 2);
    let hosts = w.hosts_of(probe).await;
    let rows: Vec<(&str, i64, &str)> = hosts
        .iter()
        .map(|h| (h.host.as_str(), h.fencing_token, h.status.as_str()))
        .collect();
    assert_eq!(rows, [("h1", 1, "superseded"), ("h2", 2, "succeeded")]);
    assert!(
        hosts[0]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("did not accept the launch in time"))
    );
    assert!(
        w.events_of(probe)
            .await
            .iter()
            .any(|e| e.kind.starts_with("re-dispatched") && e.host.as_deref() == Some("h2"))
    );
    assert_eq!(m.metric(|m| &m.redispatch_start_timeout), 1);
    m.stop().await;
    w.finish(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_of_a_killed_node_are_lost_then_restarted_or_failed() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .sleep_with("demo.restarts", "8s", recovery("restart"))
            .sleep_with("demo.fails", "8s", recovery("fail"))
            .build(),
    )
    .await;
    let m = w.manager().await;
    w.start_node("h1");
    w.wait_live(&["h1"]).await;
    let restarts = m.run_ls("demo.restarts").await;
    let fails = m.run_ls("demo.fails").await;
    for id in [restarts, fails] {
        w.wait_status(id, &["running"], SHORT).await;
        assert_eq!(w.hosts_of(id).await[0].host, "h1");
    }
    w.start_node("h2");
    w.wait_live(&["h2"]).await;

    w.node("h1").kill().await;

    let failed = w.wait_done(fails, LONG).await;
    assert_eq!(failed.status, "failed");
    assert!(
        failed
            .error
            .as_deref()
            .is_some_and(|e| e.contains("no heartbeat from h1 within the work timeout")),
        "{:?}",
        failed.error
    );
    let rows = w.hosts_of(fails).await;
    assert_eq!(rows.len(), 1, "policy fail: not dispatched again");
    assert_eq!(rows[0].status, "lost");

    let restarted = w.wait_done(restarts, LONG).await;
    assert_eq!(restarted.status, "succeeded", "{}", w.dump().await);
    assert_eq!(restarted.fencing_token, 2);
    let rows: Vec<(String, i64, String)> = w
        .hosts_of(restarts)
        .await
        .into_iter()
        .map(|h| (h.host, h.fencing_token, h.status))
        .collect();
    assert_eq!(
        rows,
        [
            ("h1".into(), 1, "lost".into()),
            ("h2".into(), 2, "succeeded".into())
        ]
    );
    assert_eq!(m.metric(|m| &m.restarted_after_lost), 1);
    assert_eq!(m.metric(|m| &m.failed_after_lost), 1);
    assert!(m.metric(|m| &m.lost) >= 2);
    m.stop().await;
    w.finish(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_node_answers_late_with_an_old_token_and_is_ignored() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .sleep("demo.busy", "60s")
            .sleep_with("demo.probe", "2s", recovery("restart"))
            .build(),
    )
    .await;
    let m = w.manager().await;
    h2_busy_then_h1(&mut w, &m).await;

    w.node("h1").freeze().await;
    let probe = m.run_ls("demo.probe").await;
    assert_eq!(w.hosts_of(probe).await[0].host, "h1");
    w.wait("the launch moved to h2", LONG, || async {
        let rows = w.hosts_of(probe).await;
        (rows.len() == 2 && rows[0].status == "superseded").then_some(())
    })
    .await;
    // h1 wakes up, takes the launch it was sent with token 1 and reports on it.
    w.node("h1").thaw().await;
    let stale = |id: Uuid| {
        let w = &w;
        async move {
            w.events_of(id)
                .await
                .into_iter()
                .filter(|e| e.kind == "stale-report" && e.host.as_deref() == Some("h1"))
                .count()
        }
    };
    w.wait("stale reports from h1", SHORT, || async {
        (stale(probe).await > 0).then_some(())
    })
    .await;
    assert!(m.metric(|m| &m.stale_reports) >= 1);

    let done = w.wait_done(probe, LONG).await;
    assert_eq!(done.status, "succeeded", "{}", w.dump().await);
    let rows: Vec<(String, i64, String)> = w
        .hosts_of(probe)
        .await
        .into_iter()
        .map(|h| (h.host, h.fencing_token, h.status))
        .collect();
    assert_eq!(
        rows,
        [
            ("h1".into(), 1, "superseded".into()),
            ("h2".into(), 2, "succeeded".into())
        ],
        "h1's answers changed nothing"
    );
    m.stop().await;
    w.finish(&[]).await;
}
