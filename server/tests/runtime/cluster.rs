//! On a three-node RabbitMQ cluster (`scripts/cluster.sh`, beside the system broker): a manager
//! and two nodes given the three members' addresses, a producer publishing numbered messages
//! with confirms, and `kill -9` of the broker node that leads the stream's subscription queue
//! in the middle of it, then its restart. Every confirmed message is found in the nodes' logs
//! (none lost); messages processed twice are counted and bounded by what can be in flight at a
//! crash; the time from the kill until a message published after it is processed is measured.

use crate::harness::{CatalogBuilder, LONG, World, connect_to, eventually};
use agent_client::Topology;
use am_services::testing::Backend;
use lapin::{
    BasicProperties,
    options::{BasicPublishOptions, ConfirmSelectOptions},
};
use serde_json::json;
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::{Duration, Instant},
};
use uuid::Uuid;

const STREAM: &str = "demo.echo.cluster";
/// Messages the producer publishes.
const COUNT: u32 = 2_000;
/// What each node may hold unacknowledged at a crash: the echo agent's prefetch (its default).
const PREFETCH: u32 = 10;
const HOSTS: [&str; 2] = ["h1", "h2"];

/// The cluster of `scripts/cluster.sh`, stopped (every node by its pid, its directory removed)
/// when dropped, also when the test fails.
struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/cluster.sh")
    }

    async fn run(args: &[&str]) -> String {
        let out = tokio::process::Command::new(Self::script())
            .args(args)
            .output()
            .await
            .expect("scripts/cluster.sh runs");
        assert!(
            out.status.success(),
            "scripts/cluster.sh {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    async fn start() -> Cluster {
        let dir = std::env::temp_dir().join(format!("am-cluster-{}", Uuid::new_v4().simple()));
        let cluster = Cluster { dir };
        Self::run(&["start", &cluster.dir()]).await;
        cluster
    }

    fn dir(&self) -> String {
        self.dir.display().to_string()
    }

    async fn urls(&self) -> String {
        Self::run(&["urls"]).await
    }

    /// The number (1-3) of the node leading `queue`.
    async fn leader(&self, queue: &str) -> String {
        Self::run(&["leader", &self.dir(), queue]).await
    }

    async fn kill(&self, node: &str) {
        Self::run(&["kill", &self.dir(), node]).await;
    }

    async fn restart(&self, node: &str) {
        Self::run(&["restart", &self.dir(), node]).await;
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new(Self::script())
            .args(["stop", &self.dir()])
            .status();
    }
}

/// What the producer did: every message `0..COUNT` confirmed, some sent again after a
/// connection died before its confirm came (each such resend may be a second copy).
struct Produced {
    resent: u32,
}

/// Publishes `cluster-<n>` for n in `0..COUNT` to `exchange` with confirms and `mandatory`,
/// one at a time; a publish that fails or is not confirmed within 5 s is sent again on a new
/// connection to the next member. `progress` counts the confirmed ones.
async fn produce(urls: String, exchange: String, progress: Arc<AtomicU32>) -> Produced {
    let members: Vec<String> = urls.split(',').map(str::to_owned).collect();
    let mut next = 0;
    let mut resent = 0;
    let mut channel = None;
    for n in 0..COUNT {
        loop {
            if channel.is_none() {
                let url = &members[next % members.len()];
                next += 1;
                let Ok(conn) = connect_to(url).await else {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                };
                let Ok(ch) = conn.create_channel().await else {
                    continue;
                };
                if ch
                    .confirm_select(ConfirmSelectOptions::default())
                    .await
                    .is_err()
                {
                    continue;
                }
                channel = Some((conn, ch));
            }
            let Some((_, ch)) = channel.as_ref() else {
                continue;
            };
            let body = format!("cluster-{n}");
            let publish = async {
                ch.basic_publish(
                    exchange.as_str().into(),
                    "".into(),
                    BasicPublishOptions {
                        mandatory: true,
                        ..BasicPublishOptions::default()
                    },
                    body.as_bytes(),
                    BasicProperties::default().with_delivery_mode(2),
                )
                .await?
                .await
            };
            let confirmed = match tokio::time::timeout(Duration::from_secs(5), publish).await {
                Ok(Ok(confirm)) => confirm.is_ack() && confirm.take_message().is_none(),
                _ => false,
            };
            if confirmed {
                progress.store(n + 1, Ordering::SeqCst);
                break;
            }
            // Not confirmed: the broker may or may not have it. Sent again, counted.
            resent += 1;
            channel = None;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    if let Some((conn, _)) = channel {
        let _ = conn.close(200, "produced".into()).await;
    }
    Produced { resent }
}

/// How many times each numbered message was handled, from the nodes' logs (the echo agent
/// logs each message's body).
fn seen(logs: &[PathBuf]) -> BTreeMap<u32, u32> {
    let mut out = BTreeMap::new();
    for log in logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        for line in text.lines().filter(|l| l.contains("echo")) {
            let Some(at) = line.find("cluster-") else {
                continue;
            };
            let digits: String = line[at + "cluster-".len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = digits.parse::<u32>() {
                *out.entry(n).or_insert(0) += 1;
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_a_cluster_loses_nothing_when_the_broker_node_leading_it_dies() {
    let cluster = Cluster::start().await;
    let mut w = World::on(Backend::Sqlite, &cluster.urls().await).await;
    w.seed(
        CatalogBuilder::new(&w, &HOSTS)
            .ls(STREAM, "echo", "stream", json!({}))
            .build(),
    )
    .await;
    let logs: Vec<PathBuf> = HOSTS
        .iter()
        .map(|h| std::env::temp_dir().join(format!("{}-{h}.log", w.prefix)))
        .collect();
    for (h, log) in HOSTS.iter().zip(&logs) {
        w.start_node_logged(h, 4, log);
    }
    let m = w.manager().await;
    w.wait_live(&HOSTS).await;
    // Once this one is through, the subscription is bound and the stream consumes.
    w.publish("warm-up").await;
    let queue = Topology::new(w.prefix.clone()).names().subscription(STREAM);

    let progress = Arc::new(AtomicU32::new(0));
    let producer = tokio::spawn(produce(
        w.broker.clone(),
        w.address.clone(),
        Arc::clone(&progress),
    ));
    eventually("a third of the messages confirmed", LONG, || async {
        (progress.load(Ordering::SeqCst) >= COUNT / 3).then_some(())
    })
    .await;

    let leader = cluster.leader(&queue).await;
    cluster.kill(&leader).await;
    let killed = Instant::now();
    let at_kill = progress.load(Ordering::SeqCst);
    // Processing resumed: a message confirmed after the kill was handled.
    let recovery = eventually("a message published after the kill processed", LONG, || {
        let logs = logs.clone();
        async move {
            seen(&logs)
                .range(at_kill + 1..)
                .next()
                .map(|_| killed.elapsed())
        }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    cluster.restart(&leader).await;

    let produced = tokio::time::timeout(Duration::from_secs(120), producer)
        .await
        .expect("the producer finished within 2 minutes")
        .expect("the producer did not panic");
    eventually("every confirmed message processed", LONG, || {
        let logs = logs.clone();
        async move { (seen(&logs).range(0..COUNT).count() == COUNT as usize).then_some(()) }
    })
    .await;
    // Late copies (a redelivery after the restart) are counted too.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let all = seen(&logs);
    let lost = (0..COUNT).filter(|n| !all.contains_key(n)).count();
    let twice: u32 = all.values().map(|c| c - 1).sum();
    let bound = 2 * HOSTS.len() as u32 * PREFETCH + produced.resent;
    println!(
        "cluster, kill -9 of the leading broker node {leader}: sent {COUNT}, lost {lost}, \
         processed twice {twice} (at most {bound}), resent by the producer {}, \
         processing resumed {} ms after the kill",
        produced.resent,
        recovery.as_millis()
    );
    assert_eq!(lost, 0, "messages lost");
    assert!(
        twice <= bound,
        "{twice} processed twice, more than {bound} in flight"
    );

    m.stop().await;
    w.finish(&[STREAM]).await;
    for log in &logs {
        let _ = std::fs::remove_file(log);
    }
    drop(cluster);
}
