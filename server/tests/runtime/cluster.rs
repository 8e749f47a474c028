//! Faults on a three-node RabbitMQ cluster (`scripts/cluster.sh`, beside the system broker), one
//! after the other under load: two manager replicas on PostgreSQL and two nodes given the three
//! members' addresses, schedule groups firing every second, and two producers publishing
//! numbered messages with confirms, one to a `topic` data queue and one to a `queue` data
//! queue, each read by a stream.
//! 1. `kill -9` of the broker node that leads the topic stream's subscription queue mid-stream,
//!    then its restart: every confirmed message of both is found in the nodes' logs (none lost),
//!    copies are counted and bounded by what can be in flight at a crash, and the time until a
//!    message published after the kill is processed is measured.
//! 2. A manager replica killed as by `kill -9`: every group's every second is recorded exactly
//!    once across the replicas and runs to its end, and the time until the next fire is
//!    recorded is measured.
//! 3. `SIGSTOP` of a node for longer than the node timeout, then `SIGCONT`: what it held moves
//!    to the other, and what it reports late (old fencing tokens) changes nothing.
//! 4. `kill -9` of one of the two nodes: what it held (launches not accepted, runs) moves to the
//!    other within its watchdog deadlines; every fire still runs to `succeeded`.
//!
//! Throughout, no run of a live node is declared lost (a replica whose report consumer lost its
//! broker member must not take the unread heartbeats for silence).

use crate::harness::{CatalogBuilder, LONG, World, connect_to, eventually, fire_time};
use agent_client::Topology;
use am_services::{runtime::status, testing::Backend};
use chrono::{DateTime, Utc};
use lapin::{
    BasicProperties,
    options::{BasicPublishOptions, ConfirmSelectOptions},
};
use serde_json::json;
use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::{Duration, Instant},
};
use uuid::Uuid;

const STREAM: &str = "demo.echo.cluster";
/// The stream reading the `queue` data queue `jobs` (agent `poison`, which logs what passes).
const QUEUED: &str = "demo.poison.cluster";

/// What each node may hold unacknowledged at a crash: the echo agent's prefetch (its default).
const PREFETCH: u32 = 10;
const HOSTS: [&str; 2] = ["h1", "h2"];

/// The load. The test command runs the short profile (20 groups firing every second, 2,000
/// messages per data queue, ~1 minute); `AM_FAULTS_PROFILE=full` runs the full one (200 groups
/// firing every 5 s, 10,000 messages per data queue), docs/benchmarks.md.
#[derive(Debug, Clone, Copy)]
struct Profile {
    groups: usize,
    /// Seconds between two fires of a group.
    every: i64,
    /// Messages each producer publishes.
    count: u32,
}

impl Profile {
    fn from_env() -> Self {
        match std::env::var("AM_FAULTS_PROFILE").as_deref() {
            Ok("full") => Profile {
                groups: 200,
                every: 5,
                count: 10_000,
            },
            _ => Profile {
                groups: 20,
                every: 1,
                count: 2_000,
            },
        }
    }

    fn cron(&self) -> String {
        if self.every == 1 {
            "* * * * * *".to_owned()
        } else {
            format!("*/{} * * * * *", self.every)
        }
    }

    /// The fire times of one group within `from..=to`.
    fn due(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> usize {
        let (a, b) = (from.timestamp(), to.timestamp());
        (a..=b).filter(|s| s % self.every == 0).count()
    }
}

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

/// What the producer did: every message `0..count` confirmed, some sent again after a
/// connection died before its confirm came (each such resend may be a second copy).
struct Produced {
    resent: u32,
}

/// A data queue under load: the marker of its bodies (`<marker>-<n>`) and the message its
/// agent logs for each.
#[derive(Clone, Copy)]
struct Feed {
    marker: &'static str,
    logged: &'static str,
}

/// Publishes `<marker>-<n>` for n in `0..count` to `exchange` with confirms and
/// `mandatory`, one at a time; a publish that fails or is not confirmed within 5 s is sent again
/// on a new connection to the next member. `progress` counts the confirmed ones.
async fn produce(
    urls: String,
    exchange: String,
    marker: &'static str,
    count: u32,
    progress: Arc<AtomicU32>,
) -> Produced {
    let members: Vec<String> = urls.split(',').map(str::to_owned).collect();
    let mut next = 0;
    let mut resent = 0;
    let mut channel = None;
    for n in 0..count {
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
            let body = format!("{marker}-{n}");
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

/// How many times each numbered message of `feed` was handled, from the nodes' logs (its agent
/// logs each message's body).
fn seen(logs: &[PathBuf], feed: Feed) -> BTreeMap<u32, u32> {
    let mut out = BTreeMap::new();
    let marker = format!("{}-", feed.marker);
    for log in logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        for line in text.lines().filter(|l| l.contains(feed.logged)) {
            let Some(at) = line.find(&marker) else {
                continue;
            };
            let digits: String = line[at + marker.len()..]
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

/// What the schedule did within a window, over every group: fires that should have been
/// recorded (one per group and second), fires recorded more than once, seconds without a fire.
struct Fires {
    expected: usize,
    doubled: usize,
    missed: usize,
}

async fn fires_within(w: &World, p: Profile, from: DateTime<Utc>, to: DateTime<Utc>) -> Fires {
    let due = p.due(from, to);
    let mut out = Fires {
        expected: due * p.groups,
        doubled: 0,
        missed: 0,
    };
    for g in 0..p.groups {
        let times: Vec<_> = w
            .group_runs(&format!("demo.every-{g}"))
            .await
            .iter()
            .map(fire_time)
            .filter(|t| (from..=to).contains(t))
            .collect();
        let distinct: BTreeSet<_> = times.iter().collect();
        out.doubled += times.len() - distinct.len();
        out.missed += due.saturating_sub(distinct.len());
    }
    out
}

/// Every run of the groups fired within the window has ended; the statuses they ended with.
async fn ended_within(
    w: &World,
    p: Profile,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> BTreeMap<String, usize> {
    eventually("every fire's run ended", LONG, || async {
        let mut statuses = BTreeMap::new();
        for g in 0..p.groups {
            for run in w.group_runs(&format!("demo.every-{g}")).await {
                if (from..=to).contains(&fire_time(&run)) {
                    *statuses.entry(run.status).or_insert(0) += 1;
                }
            }
        }
        status::activation::ACTIVE
            .iter()
            .all(|s| !statuses.contains_key(*s))
            .then_some(statuses)
    })
    .await
}

/// The faults, one after the other, while schedule groups fire every second and two streams
/// consume: the broker node leading the topic stream's queue, a manager replica, a frozen node,
/// a killed node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_on_a_cluster_lose_no_message_and_double_no_fire() {
    let p = Profile::from_env();
    let cluster = Cluster::start().await;
    let mut w = World::on(Backend::Postgres, &cluster.urls().await).await;
    let mut catalog = CatalogBuilder::new(&w, &HOSTS)
        .ls(STREAM, "echo", "stream", json!({}))
        .ls(QUEUED, "poison", "stream", json!({}));
    for g in 0..p.groups {
        let tick = format!("demo.tick-{g}");
        // Short watchdog deadlines, so a killed node's launches and runs move within seconds.
        let recovery = json!({ "recovery": { "start_timeout": "2s", "work_timeout": "3s" } });
        catalog = catalog.sleep_with(&tick, "100ms", recovery).group(
            &format!("demo.every-{g}"),
            &p.cron(),
            &[&tick],
            json!({}),
        );
    }
    let jobs = format!("{}.jobs", w.prefix);
    let mut catalog = catalog.build();
    catalog.data_queues.push(
        serde_json::from_value(json!({ "id": "jobs", "kind": "queue", "address": jobs }))
            .expect("data queue"),
    );
    if let Some(a) = catalog.agents.iter_mut().find(|a| a.id == "poison") {
        a.data_queue = Some("jobs".to_owned());
    }
    w.seed(catalog).await;
    let topic = Feed {
        marker: "cluster",
        logged: "echo",
    };
    let queued = Feed {
        marker: "queued",
        logged: "passed",
    };
    let logs: Vec<PathBuf> = HOSTS
        .iter()
        .map(|h| std::env::temp_dir().join(format!("{}-{h}.log", w.prefix)))
        .collect();
    for (h, log) in HOSTS.iter().zip(&logs) {
        w.start_node_logged(h, 8, log);
    }
    let first = w.manager().await;
    let second = w.manager().await;
    w.wait_live(&HOSTS).await;
    // Once these are through, the subscription is bound and both streams consume.
    w.publish("warm-up").await;
    w.publish_to(&jobs, "warm-up").await;
    let from = next_second(Utc::now());
    let queue = Topology::new(w.prefix.clone()).names().subscription(STREAM);

    // 1. kill -9 of the broker node leading the stream's queue, with a producer publishing.
    let progress = Arc::new(AtomicU32::new(0));
    let producer = tokio::spawn(produce(
        w.broker.clone(),
        w.address.clone(),
        topic.marker,
        p.count,
        Arc::clone(&progress),
    ));
    let queued_producer = tokio::spawn(produce(
        w.broker.clone(),
        jobs.clone(),
        queued.marker,
        p.count,
        Arc::new(AtomicU32::new(0)),
    ));
    eventually("a third of the messages confirmed", LONG, || async {
        (progress.load(Ordering::SeqCst) >= p.count / 3).then_some(())
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
            seen(&logs, topic)
                .range(at_kill + 1..)
                .next()
                .map(|_| killed.elapsed())
        }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    cluster.restart(&leader).await;
    let mut produced = Vec::new();
    // One message at a time with its confirm: a few ms each, and the broker kill.
    let producing = Duration::from_secs(60 + u64::from(p.count) / 20);
    for producer in [producer, queued_producer] {
        produced.push(
            tokio::time::timeout(producing, producer)
                .await
                .expect("the producer finished in time")
                .expect("the producer did not panic"),
        );
    }
    eventually("every confirmed message processed", LONG, || {
        let logs = logs.clone();
        async move {
            [topic, queued]
                .iter()
                .all(|f| seen(&logs, *f).range(0..p.count).count() == p.count as usize)
                .then_some(())
        }
    })
    .await;

    // 2. kill -9 of a manager replica while the groups fire: the other goes on alone.
    first.kill().await;
    let replica_killed = Utc::now();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let after_kill = next_second(replica_killed);
    let handled = eventually("a fire after the replica's kill recorded", LONG, || async {
        let run = w
            .group_runs("demo.every-0")
            .await
            .into_iter()
            .find(|r| fire_time(r) >= after_kill)?;
        Some(run.created_at - replica_killed)
    })
    .await;

    // 3. SIGSTOP of a node past the node timeout (5 s), then SIGCONT: its work moves to the
    // other, and the answers it gives when it wakes carry old tokens and are ignored.
    w.node("h2").freeze().await;
    let frozen = Utc::now();
    tokio::time::sleep(Duration::from_secs(8)).await;
    w.node("h2").thaw().await;
    let thawed = Utc::now();
    w.wait_live(&["h2"]).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (moved_frozen, moved_frozen_in) = moved_from(&w, "h2", frozen, thawed).await;
    let late = late_reports(&w, "h2", frozen).await;

    // 4. kill -9 of a node while the groups fire: what it held goes to the other one.
    w.node("h2").kill().await;
    let node_killed = Utc::now();
    tokio::time::sleep(Duration::from_secs(8)).await;
    let to = next_second(Utc::now()) - chrono::Duration::seconds(2);
    let statuses = ended_within(&w, p, from, to).await;
    let fires = fires_within(&w, p, from, to).await;
    let (moved, moved_in) = moved_from(&w, "h2", node_killed, Utc::now()).await;
    let falsely_lost = lost_while_live(&w, (frozen, thawed), node_killed).await;

    // Late copies (a redelivery after the restart) are counted too.
    let mut lost = 0;
    let mut over = Vec::new();
    for (feed, produced) in [topic, queued].into_iter().zip(&produced) {
        let all = seen(&logs, feed);
        let missing = (0..p.count).filter(|n| !all.contains_key(n)).count();
        let twice: u32 = all.values().map(|c| c - 1).sum();
        let bound = 2 * HOSTS.len() as u32 * PREFETCH + produced.resent;
        println!(
            "kill -9 of the broker node leading the topic stream's queue ({leader}), {} data \
             queue: sent {}, lost {missing}, processed twice {twice} (at most {bound}), \
             resent by the producer {}",
            feed.marker, p.count, produced.resent,
        );
        lost += missing;
        if twice > bound {
            over.push(format!(
                "{}: {twice} processed twice, more than {bound}",
                feed.marker
            ));
        }
    }
    println!(
        "processing resumed {} ms after the broker node's kill",
        recovery.as_millis()
    );
    println!(
        "kill -9 of one of two manager replicas: {} fires of {} groups due from {from} to \
         {to}, doubled {}, missed {}, runs ended {statuses:?}; the next fire recorded {} ms after \
         the kill",
        fires.expected,
        p.groups,
        fires.doubled,
        fires.missed,
        handled.num_milliseconds()
    );
    println!(
        "SIGSTOP of one of two nodes for 8 s: {moved_frozen} launches or runs it held moved to \
         the other, the last ended {} ms after the freeze; {late} late reports from it ignored \
         (old fencing token)",
        moved_frozen_in.num_milliseconds()
    );
    println!(
        "kill -9 of one of two nodes: {moved} launches or runs it held moved to the other, the \
         last ended {} ms after the kill",
        moved_in.num_milliseconds()
    );
    println!("runs of live nodes declared lost: {falsely_lost}");
    assert_eq!(lost, 0, "messages lost");
    assert_eq!(
        falsely_lost, 0,
        "runs of a live node declared lost (h1 throughout, h2 but while frozen or killed)"
    );
    assert!(moved_frozen > 0, "nothing moved away from the frozen node");
    assert!(over.is_empty(), "more copies than in flight: {over:?}");
    assert_eq!(
        (fires.doubled, fires.missed),
        (0, 0),
        "fires doubled or missed"
    );
    assert_eq!(
        statuses.get(status::activation::SUCCEEDED).copied(),
        Some(fires.expected),
        "every fire ran: {statuses:?}"
    );

    second.stop().await;
    let mut finished = vec![STREAM.to_owned(), QUEUED.to_owned()];
    finished.extend((0..p.groups).map(|g| format!("demo.tick-{g}")));
    w.finish(&finished.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    for log in &logs {
        let _ = std::fs::remove_file(log);
    }
    drop(cluster);
}

/// The launches and runs given to `host` that were still open when it failed at `failed`
/// (those sent to it before its loss was noticed included) and that another node took over
/// before `until` (its host row superseded or lost), and when the last of them ended, after
/// the failure.
async fn moved_from(
    w: &World,
    host: &str,
    failed: DateTime<Utc>,
    until: DateTime<Utc>,
) -> (usize, chrono::Duration) {
    use am_services::entity::{activation_hosts, activations};
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let held: Vec<_> = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::Host.eq(host))
        .filter(
            activation_hosts::Column::Status.is_in([status::host::SUPERSEDED, status::host::LOST]),
        )
        .filter(activation_hosts::Column::FinishedAt.between(failed, until))
        .all(&w.db)
        .await
        .expect("query")
        .into_iter()
        .map(|h| h.activation_id)
        .collect();
    let ended: Vec<_> = activations::Entity::find()
        .filter(activations::Column::Id.is_in(held))
        .all(&w.db)
        .await
        .expect("query")
        .into_iter()
        .filter_map(|a| a.finished_at)
        .filter(|t| *t >= failed)
        .collect();
    let last = ended
        .iter()
        .max()
        .map_or(chrono::Duration::zero(), |t| *t - failed);
    (ended.len(), last)
}

/// Runs declared lost on a node that was alive: on `h1` at any time, on `h2` but while it was
/// frozen (and up to the node timeout after it woke, while its first heartbeat travels) or
/// after it was killed at `killed`.
async fn lost_while_live(
    w: &World,
    (frozen, thawed): (DateTime<Utc>, DateTime<Utc>),
    killed: DateTime<Utc>,
) -> usize {
    use am_services::entity::activation_hosts;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let asleep = frozen..thawed + chrono::Duration::seconds(5);
    activation_hosts::Entity::find()
        .filter(activation_hosts::Column::Status.eq(status::host::LOST))
        .all(&w.db)
        .await
        .expect("query")
        .into_iter()
        .filter(|h| {
            h.host == "h1"
                || h.finished_at
                    .is_some_and(|t| t < killed && !asleep.contains(&t))
        })
        .count()
}

/// Reports `host` sent after `since` that carried an outdated fencing token (each is an
/// activation event `stale-report`): its answers about work the manager had moved away.
async fn late_reports(w: &World, host: &str, since: DateTime<Utc>) -> usize {
    use am_services::entity::activation_events;
    use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
    let n = activation_events::Entity::find()
        .filter(activation_events::Column::Kind.eq("stale-report"))
        .filter(activation_events::Column::Host.eq(host))
        .filter(activation_events::Column::At.gte(since))
        .count(&w.db)
        .await
        .expect("query");
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The whole second after `t`.
fn next_second(t: DateTime<Utc>) -> DateTime<Utc> {
    use chrono::{DurationRound, TimeDelta};
    t.duration_trunc(TimeDelta::seconds(1)).unwrap_or(t) + TimeDelta::seconds(1)
}
