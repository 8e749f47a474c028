//! The node of `docs/getting-started.md` (the example program `getting-started` of
//! `agent-client`, which is the guide's code) does what the guide says: started before its
//! application exists, it waits; the application created, its agents appear without a restart;
//! with the guide's catalog, a greeting published to the data queue is processed. Build it
//! first: `cargo build -p agent-client --example getting-started` (a workspace-wide test run,
//! as scripts/test.sh's, builds it with the tests).

use crate::harness::{SHORT, World, amqp_url, eventually};
use am_domain::catalog::Catalog;
use am_services::{
    entity::{agents, nodes},
    testing::Backend,
};
use lapin::options::QueueDeleteOptions;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use std::{path::PathBuf, process::Stdio, time::Duration};

const GUIDE: &str = include_str!("../../../docs/getting-started.md");

/// The guide's catalog document, its data queue on this test's exchange.
fn guide_catalog(w: &World) -> Catalog {
    let start = GUIDE.find("```json\n").expect("a catalog document") + "```json\n".len();
    let end = start + GUIDE[start..].find("```").expect("its end");
    let mut c: Catalog = serde_json::from_str(&GUIDE[start..end]).expect("the document parses");
    c.data_queues[0].address = Some(w.address.clone());
    c
}

fn example_binary() -> PathBuf {
    if let Ok(p) = std::env::var("AM_TEST_GETTING_STARTED") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/debug/deps/runtime-<hash> → target/debug/examples/getting-started
    exe.parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join("examples").join("getting-started"))
        .expect("the test binary lives in target/<profile>/deps")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_node_waits_for_its_application_then_processes_a_greeting() {
    let w = World::new(Backend::Sqlite).await;
    let full = guide_catalog(&w);
    let app = full.applications[0].id.clone();
    let host = full.pools[0].hosts[0].clone();
    // The example heartbeats every 10 s (the library's default): a longer node timeout.
    let cfg = am_services::runtime::RuntimeConfig {
        node_timeout: chrono::Duration::seconds(30),
        ..w.config()
    };
    let m = w.manager_with(cfg, &amqp_url()).await;
    let mut node = tokio::process::Command::new(example_binary())
        .env("AM_AMQP_URL", amqp_url())
        .env("AM_APP", &app)
        .env("AM_HOST", &host)
        .env("AM_PREFIX", &w.prefix)
        // As the test managers' topology: the shared queues are declared alike by both.
        .env("AM_QUEUE_EXPIRY", "60s")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the getting-started example starts (cargo build -p agent-client --example getting-started)");

    // Not in the catalog yet: the node is kept waiting, with no agents.
    eventually("the node waiting for its application", SHORT, || async {
        nodes::Entity::find()
            .filter(nodes::Column::ApplicationId.eq(app.as_str()))
            .one(&w.db)
            .await
            .ok()
            .flatten()
            .filter(|n| n.waiting_publication.is_some())
    })
    .await;

    // The application, its pool and data queue: the node's agents appear, no restart.
    let mut bare = full.clone();
    bare.agents.clear();
    bare.launch_settings.clear();
    bare.schedule_groups.clear();
    w.seed(bare).await;
    let offered = eventually("the node's agents in the catalog", SHORT, || async {
        let found = agents::Entity::find()
            .filter(agents::Column::ApplicationId.eq(app.as_str()))
            .all(&w.db)
            .await
            .ok()?;
        (found.len() == 2).then_some(found)
    })
    .await;
    let greet = offered.iter().find(|a| a.id == "greet").expect("greet");
    // The data queue the node suggests is the guide's.
    assert_eq!(
        greet.data_queue_id.as_deref(),
        Some(full.data_queues[0].id.as_str())
    );

    // The guide's whole catalog: the stream runs on the node, and a greeting is processed.
    w.seed(full).await;
    w.publish(r#"{"name": "Ada"}"#).await;
    w.wait(
        "the greeting processed",
        Duration::from_secs(30),
        || async {
            let run = w.runs_of("shop.greet").await.pop()?;
            w.hosts_of(run.id)
                .await
                .iter()
                .any(|h| h.processed == 1)
                .then_some(())
        },
    )
    .await;

    let _ = node.kill().await;
    m.stop().await;
    // Gone at once rather than after its expiry.
    if let Ok(conn) = crate::harness::connect().await {
        let names = agent_client::Topology::new(w.prefix.clone())
            .names()
            .clone();
        if let Ok(ch) = conn.create_channel().await {
            let _ = ch
                .queue_delete(
                    names.node_queue(&app, &host).as_str().into(),
                    QueueDeleteOptions::default(),
                )
                .await;
        }
        agent_client::close(&conn, 200, "").await;
    }
    w.finish(&["shop.greet"]).await;
}
