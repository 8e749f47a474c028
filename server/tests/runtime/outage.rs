//! A broker outage on the manager's side: fires and *run now* keep being recorded, their
//! launches wait in the outbox, and go out once the broker is back.

use crate::harness::{CatalogBuilder, LONG, Proxy, SHORT, World};
use am_services::runtime::RuntimeConfig;
use am_services::testing::Backend;
use chrono::Utc;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launches_recorded_during_a_broker_outage_go_out_after_it() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1"])
            .sleep("demo.now", "200ms")
            .sleep("demo.tick", "200ms")
            .group("demo.ticks", "*/2 * * * * *", &["demo.tick"], json!({}))
            .build(),
    )
    .await;
    // The node talks to the broker directly; only the manager goes through the proxy. The
    // node must stay live while the manager cannot hear its heartbeats.
    let mut proxy = Proxy::start().await;
    let cfg = RuntimeConfig {
        node_timeout: chrono::Duration::seconds(60),
        ..w.config()
    };
    let m = w.manager_with(cfg, &proxy.url()).await;
    w.start_node("h1");
    w.wait_live(&["h1"]).await;
    w.wait("a fire run through the proxy", LONG, || async {
        w.group_runs("demo.ticks")
            .await
            .into_iter()
            .find(|r| r.status == "succeeded")
    })
    .await;

    proxy.cut();
    crate::harness::eventually("the manager to notice the outage", SHORT, || async {
        (!m.broker_up()).then_some(())
    })
    .await;
    let cut_at = Utc::now();
    let now_run = m.run_ls("demo.now").await;
    let fired = w
        .wait("a fire during the outage", SHORT, || async {
            let run = w
                .group_runs("demo.ticks")
                .await
                .into_iter()
                .find(|r| r.created_at > cut_at)?;
            w.members_of(run.id).await.into_iter().next()
        })
        .await;
    // Both launches are written, not sent.
    let unsent: Vec<String> = w
        .outbox()
        .await
        .into_iter()
        .filter(|o| o.sent_at.is_none())
        .map(|o| o.message_id)
        .collect();
    for id in [now_run, fired.id] {
        let launch = format!("launch:{id}:h1:1");
        assert!(
            unsent.contains(&launch),
            "{launch} waits in the outbox: {unsent:?}"
        );
        assert_eq!(w.activation(id).await.status, "dispatched");
    }

    proxy.restore().await;
    for id in [now_run, fired.id] {
        assert_eq!(w.wait_done(id, LONG).await.status, "succeeded");
    }
    assert!(m.broker_up());
    w.wait("an empty outbox", SHORT, || async {
        w.outbox()
            .await
            .iter()
            .all(|o| o.sent_at.is_some())
            .then_some(())
    })
    .await;
    m.stop().await;
    w.finish(&[]).await;
}
