//! A running stream follows the catalog: its agent moved from a `topic` data queue to a `queue`
//! one and back while a node runs it and messages keep coming. Each move restarts the stream on
//! the queue the catalog now names, within seconds, and every message published is processed
//! once or, if it was left in a queue the catalog no longer wants, dead-lettered with the
//! reason: none lost, none twice.

use crate::harness::{CatalogBuilder, LONG, World, eventually};
use am_domain::catalog::Catalog;
use am_services::{
    entity::{activations, dead_letters},
    testing::Backend,
};
use lapin::options::ExchangeDeleteOptions;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::json;

const LS: &str = "demo.follow";

fn catalog(w: &World, jobs: &str, agent_on: &str) -> Catalog {
    let mut c = CatalogBuilder::new(w, &["h1"])
        .ls(LS, "echo", "stream", json!({}))
        .build();
    c.data_queues.push(
        serde_json::from_value(json!({ "id": "jobs", "kind": "queue", "address": jobs }))
            .expect("data queue"),
    );
    if let Some(a) = c.agents.iter_mut().find(|a| a.id == "echo") {
        a.data_queue = Some(agent_on.to_owned());
    }
    c
}

/// Messages the launch setting processed (every dispatch of every activation) and messages
/// dead-lettered, in this test's database.
async fn accounted(w: &World) -> (i64, u64) {
    let processed = w.processed_by(LS).await;
    let dead = dead_letters::Entity::find()
        .count(&w.db)
        .await
        .expect("query");
    (processed, dead)
}

/// Waits until the stream's latest activation runs on `queue`.
async fn consumes(w: &World, queue: &str) {
    eventually(&format!("the stream runs on {queue}"), LONG, || async {
        let runs = w.runs_of(LS).await;
        let a: &activations::Model = runs.last()?;
        if a.status != "running" {
            return None;
        }
        w.hosts_of(a.id)
            .await
            .into_iter()
            .any(|h| h.status == "running" && h.consumes.as_deref() == Some(queue))
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_stream_follows_its_agent_to_another_data_queue_and_back() {
    let mut w = World::new(Backend::Sqlite).await;
    let jobs = format!("{}.jobs", w.prefix);
    let names = am_domain::wire::names::Names::new(w.prefix.clone());
    w.seed(catalog(&w, &jobs, "events")).await;
    w.start_node("h1");
    let m = w.manager().await;
    w.wait_live(&["h1"]).await;
    consumes(&w, &names.subscription(LS)).await;

    let mut sent = 0;
    for i in 0..20 {
        w.publish(&format!("follow-{i}")).await;
        sent += 1;
    }
    // topic → queue: the stream restarts on the shared queue of `jobs`.
    w.seed(catalog(&w, &jobs, "jobs")).await;
    for i in 20..40 {
        w.publish_to(&jobs, &format!("follow-{i}")).await;
        sent += 1;
    }
    consumes(&w, &names.shared_queue("jobs")).await;
    // queue → topic: back on its own subscription.
    w.seed(catalog(&w, &jobs, "events")).await;
    for i in 40..60 {
        w.publish(&format!("follow-{i}")).await;
        sent += 1;
    }
    consumes(&w, &names.subscription(LS)).await;

    let (processed, dead) = eventually("every message is accounted for", LONG, || async {
        let (processed, dead) = accounted(&w).await;
        (processed + i64::try_from(dead).ok()? >= sent).then_some((processed, dead))
    })
    .await;
    // Nothing more comes in later: none was doubled.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(accounted(&w).await, (processed, dead), "{}", w.dump().await);
    assert_eq!(processed + i64::try_from(dead).expect("count"), sent);
    let restarted = w
        .runs_of(LS)
        .await
        .iter()
        .filter(|a| a.status == "interrupted")
        .count();
    assert_eq!(restarted, 2, "one restart per move: {}", w.dump().await);

    m.stop().await;
    if let Ok(conn) = crate::harness::connect().await {
        if let Ok(ch) = conn.create_channel().await {
            let _ = ch
                .exchange_delete(jobs.as_str().into(), ExchangeDeleteOptions::default())
                .await;
        }
        agent_client::close(&conn, 200, "test done").await;
    }
    w.finish(&[LS]).await;
}
