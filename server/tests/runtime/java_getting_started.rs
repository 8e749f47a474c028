//! The Java node of `docs/java-getting-started.md` (the example application
//! `client-java/examples/getting-started`, whose source the guide shows whole) does what the
//! guide says, against a manager on a three-member RabbitMQ cluster: it becomes a node with the
//! guide's catalog, runs its scheduled agent with typed parameters when started by hand,
//! processes greetings with its message agent (every one of them, counted by name),
//! dead-letters a message that is no greeting without its launch setting being disabled, and
//! keeps processing through the loss of the broker member that leads its queue. Build the
//! example first: `cd client-java && mvn -B -o -s /etc/maven/settings-debian.xml package`
//! (scripts/test.sh builds it before these tests).

use crate::{
    cluster::members::Cluster,
    harness::{World, eventually},
};
use am_domain::catalog::Catalog;
use am_services::{
    entity::{dead_letters, nodes},
    status,
    testing::Backend,
};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};
use tokio::io::{AsyncBufReadExt, BufReader};

const GUIDE: &str = include_str!("../../../docs/java-getting-started.md");
const EXAMPLE: &str = "client-java/examples/getting-started";
/// The guide's application, in one file.
const SOURCE: &str = "src/main/java/com/example/shop/ShopNode.java";
const LONG: Duration = Duration::from_secs(90);
/// The cluster's ports: AMQP on 5881-5883 (scripts/cluster.sh), beside the fault suite's.
const CLUSTER_PORTS: u16 = 5880;

fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The guide's fenced block after `marker` (e.g. "```json\n").
fn block(marker: &str) -> &'static str {
    let start = GUIDE.find(marker).expect("the guide has the block") + marker.len();
    let end = start + GUIDE[start..].find("```").expect("its end");
    &GUIDE[start..end]
}

/// The guide's catalog document, its data queue on this test's exchange.
fn guide_catalog(w: &World) -> Catalog {
    let mut c: Catalog = serde_json::from_str(block("```json\n")).expect("the document parses");
    c.data_queues[0].address = Some(w.address.clone());
    c
}

fn example_jar() -> PathBuf {
    if let Ok(p) = std::env::var("AM_TEST_JAVA_GETTING_STARTED") {
        return PathBuf::from(p);
    }
    let target = repository().join(EXAMPLE).join("target");
    std::fs::read_dir(&target)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.starts_with("agent-manager-getting-started") && name.ends_with(".jar")
        })
        .unwrap_or_else(|| {
            panic!(
                "no example jar under {}: build it with `cd client-java && mvn -B -o -s \
                 /etc/maven/settings-debian.xml package`",
                target.display()
            )
        })
}

#[test]
fn the_guide_shows_the_example_as_it_is() {
    let source = std::fs::read_to_string(repository().join(EXAMPLE).join(SOURCE))
        .expect("the example's source");
    assert_eq!(
        block("```java\n"),
        source,
        "docs/java-getting-started.md shows {SOURCE} whole"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_java_guides_node_runs_its_agents_and_outlives_a_broker_member() {
    let cluster = Cluster::start_beside(CLUSTER_PORTS, "amjava").await;
    let urls = cluster.urls().await;
    let w = World::on(Backend::Sqlite, &urls).await;
    let catalog = guide_catalog(&w);
    let app = catalog.applications[0].id.clone();
    let host = catalog.pools[0].hosts[0].clone();
    // The guide's node heartbeats every 10 s (the library's default): a longer node timeout.
    let cfg = am_services::runtime::RuntimeConfig {
        node_timeout: chrono::Duration::seconds(30),
        ..w.config()
    };
    let m = w.manager_with(cfg, &urls).await;
    w.seed(catalog).await;

    let mut node = tokio::process::Command::new("java")
        .arg("-jar")
        .arg(example_jar())
        .env("AM_AMQP_URL", &urls)
        .env("AM_APP", &app)
        .env("AM_HOST", &host)
        .env("AM_PREFIX", &w.prefix)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("java runs the example");
    // What the node logged, line by line: the greetings it processed are counted by name.
    let logged = Arc::new(Mutex::new(Vec::<String>::new()));
    for out in [
        node.stdout
            .take()
            .map(|o| Box::new(o) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
        node.stderr
            .take()
            .map(|o| Box::new(o) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let logged = Arc::clone(&logged);
        tokio::spawn(async move {
            let mut lines = BufReader::new(out).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                // Shown with the test's output when it fails.
                eprintln!("[java node] {line}");
                logged.lock().expect("lock").push(line);
            }
        });
    }
    let greeted = || -> BTreeSet<String> {
        logged
            .lock()
            .expect("lock")
            .iter()
            .filter_map(|l| l.split("hello, ").nth(1))
            .map(|name| name.trim().to_owned())
            .collect()
    };
    eventually("the Java node live", LONG, || async {
        nodes::Entity::find()
            .filter(nodes::Column::ApplicationId.eq(app.as_str()))
            .filter(nodes::Column::Host.eq(host.as_str()))
            .filter(nodes::Column::Status.eq(am_services::registry::LIVE))
            .one(&w.db)
            .await
            .ok()
            .flatten()
    })
    .await;

    // The scheduled agent with its typed parameters, started by hand as the guide does.
    let tally = m.run_ls("shop.tally").await;
    let done = w.wait_done(tally, LONG).await;
    assert_eq!(
        done.status,
        status::activation::SUCCEEDED,
        "{}",
        w.dump().await
    );

    // Greetings, and one message that is no greeting.
    for i in 0..10 {
        w.publish(&format!(r#"{{"name": "n{i}"}}"#)).await;
    }
    w.publish("no greeting at all").await;
    let dead_letters_of_greet = || async {
        dead_letters::Entity::find()
            .filter(dead_letters::Column::LaunchSettingId.eq("shop.greet"))
            .count(&w.db)
            .await
            .expect("query")
    };
    eventually(
        "the message that is no greeting dead-lettered",
        LONG,
        || async { (dead_letters_of_greet().await == 1).then_some(()) },
    )
    .await;
    let first: BTreeSet<String> = (0..10).map(|i| format!("n{i}")).collect();
    eventually("ten greetings processed", LONG, || async {
        first.is_subset(&greeted()).then_some(())
    })
    .await;
    assert!(
        w.launch_setting("shop.greet").await.enabled,
        "one poison message does not disable its launch setting"
    );

    // The broker member the node is connected to dies; the node moves to another member and
    // greetings go on.
    let connected = |log: &[String]| -> Vec<u16> {
        log.iter()
            .filter(|l| l.contains("connected to the broker"))
            .filter_map(|l| l.rsplit(':').next())
            .filter_map(|tail| tail.split('/').next()?.parse().ok())
            .collect()
    };
    let port = *connected(&logged.lock().expect("lock"))
        .last()
        .expect("the node logged the member it connected to");
    let member = (port - CLUSTER_PORTS).to_string();
    cluster.kill(&member).await;
    eventually("the node on another member", LONG, || async {
        let ports = connected(&logged.lock().expect("lock"));
        (ports.len() >= 2 && ports.last() != Some(&port)).then_some(())
    })
    .await;
    for i in 10..20 {
        w.publish(&format!(r#"{{"name": "n{i}"}}"#)).await;
    }
    let all: BTreeSet<String> = (0..20).map(|i| format!("n{i}")).collect();
    eventually(
        "every greeting processed after the loss of a member",
        LONG,
        || async { all.is_subset(&greeted()).then_some(()) },
    )
    .await;
    assert_eq!(
        dead_letters_of_greet().await,
        1,
        "nothing else dead-lettered"
    );
    assert!(w.launch_setting("shop.greet").await.enabled);

    let _ = node.kill().await;
    m.stop().await;
    drop(cluster);
}
