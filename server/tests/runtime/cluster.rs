//! Faults on a three-node RabbitMQ cluster (`scripts/cluster.sh`, beside the system broker), one
//! after the other under load: two manager replicas on PostgreSQL and three nodes given the three
//! members' addresses, schedule groups firing every second (their agent under the overlap
//! policy `skip`), and producers publishing numbered messages with confirms, to a `topic` data
//! queue and to a `queue` data queue, each read by a stream.
//! 1. `kill -9` of the broker node that leads the topic stream's subscription queue mid-stream,
//!    then its restart: every confirmed message of both is found in the nodes' logs (none lost),
//!    copies are counted and bounded by what can be in flight at a crash, and the time until a
//!    message published after the kill is processed is measured.
//! 2. A manager replica killed as by `kill -9`: every group's every second is recorded exactly
//!    once across the replicas and runs to its end, and the time until the next fire is
//!    recorded is measured.
//! 3. `SIGSTOP` of a node for longer than the node timeout, then `SIGCONT`: what it held moves
//!    to the others, and what it reports late (old fencing tokens) changes nothing.
//! 4. A network partition of a node (it runs in a network namespace of its own; the link is cut
//!    for longer than the node timeout and its AMQP heartbeat) while both producers publish
//!    again: what it held moves, the broker gives what it held unacknowledged to the others,
//!    none of the messages is lost, and the node is live again after the link heals.
//! 5. `kill -9` of a node: what it held (launches not accepted, runs) moves to the
//!    others within its watchdog deadlines; every fire still runs to its end.
//!
//! Throughout, no run of a live node is declared lost (a replica whose report consumer lost its
//! broker member must not take the unread heartbeats for silence), and no launch setting has
//! two runs at once by the activation table.

mod ledger;
mod load;
pub(crate) mod members;

use crate::harness::{CatalogBuilder, LONG, World, eventually, fire_time};
use crate::netns::Netns;
use agent_client::Topology;
use am_services::{status, testing::Backend};
use chrono::Utc;
use ledger::{
    ended_within, fires_within, late_reports, lost_while_live, moved_from, next_second, overlapping,
};
use load::{Feed, Produced, Profile, produce, seen};
use members::Cluster;
use serde_json::json;
use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::{Duration, Instant},
};

const STREAM: &str = "demo.echo.cluster";
/// The stream reading the `queue` data queue `jobs` (agent `poison`, which logs what passes).
const QUEUED: &str = "demo.poison.cluster";
/// A scheduled run longer than its group's period: under `skip`, every other fire meets it.
const SLOW: &str = "demo.slow";

/// What each node may hold unacknowledged at a crash: the echo agent's prefetch (its default).
const PREFETCH: u32 = 10;
const HOSTS: [&str; 3] = ["h1", "h2", "h3"];
/// The node every fault of a node befalls (frozen, cut off, killed); the others stay up.
const FAULTED: &str = "h2";

/// The AMQP heartbeat of the node that is cut off (seconds). The broker closes a connection
/// silent for two of them and gives back what it held unacknowledged; RabbitMQ's default (60 s)
/// would keep those messages on the silent node for two minutes.
const PARTED_HEARTBEAT: u32 = 5;

/// The topic's and the queue's messages, the first time and during the partition.
const TOPIC: Feed = Feed {
    marker: "cluster",
    logged: "echo",
};
const QUEUED_FEED: Feed = Feed {
    marker: "queued",
    logged: "passed",
};
const TOPIC_APART: Feed = Feed {
    marker: "apart",
    logged: "echo",
};
const QUEUED_APART: Feed = Feed {
    marker: "aside",
    logged: "passed",
};

/// The cluster's addresses as a node in `ns` reaches them, with a short AMQP heartbeat.
fn seen_from(urls: &str, ns: &Netns) -> String {
    urls.split(',')
        .map(|u| {
            format!(
                "{}?heartbeat={PARTED_HEARTBEAT}",
                u.replace("127.0.0.1", &ns.gateway().to_string())
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Two producers, one per data queue, publishing `count` messages each with confirms; the
/// topic's confirmed count is in the returned counter.
fn produce_both(
    w: &World,
    jobs: &str,
    (topic, queued): (Feed, Feed),
    count: u32,
) -> (Arc<AtomicU32>, [tokio::task::JoinHandle<Produced>; 2]) {
    let progress = Arc::new(AtomicU32::new(0));
    let producers = [
        tokio::spawn(produce(
            w.broker.clone(),
            w.address.clone(),
            topic.marker,
            count,
            Arc::clone(&progress),
        )),
        tokio::spawn(produce(
            w.broker.clone(),
            jobs.to_owned(),
            queued.marker,
            count,
            Arc::new(AtomicU32::new(0)),
        )),
    ];
    (progress, producers)
}

/// Waits for both producers and until the nodes' logs hold every message they sent.
async fn produced_and_processed(
    producers: [tokio::task::JoinHandle<Produced>; 2],
    feeds: (Feed, Feed),
    count: u32,
    (logs, cluster, prefix): (&[PathBuf], &Cluster, &str),
) -> Vec<Produced> {
    let mut produced = Vec::new();
    // One message at a time with its confirm: a few ms each, and the faults.
    let producing = Duration::from_secs(90 + u64::from(count) / 20);
    for producer in producers {
        produced.push(
            tokio::time::timeout(producing, producer)
                .await
                .expect("the producer finished in time")
                .expect("the producer did not panic"),
        );
    }
    // Past the deadline, the failure says how many of which feed are missing (late or lost).
    let deadline = Instant::now() + LONG;
    loop {
        let missing: Vec<String> = [feeds.0, feeds.1]
            .iter()
            .filter_map(|f| {
                let all = seen(logs, *f);
                let absent: Vec<u32> = (0..count).filter(|n| !all.contains_key(n)).collect();
                (!absent.is_empty()).then(|| {
                    format!(
                        "{}: {} of {count} not found (first {:?})",
                        f.marker,
                        absent.len(),
                        &absent[..absent.len().min(10)]
                    )
                })
            })
            .collect();
        if missing.is_empty() {
            return produced;
        }
        if Instant::now() >= deadline {
            panic!(
                "confirmed messages not processed within {LONG:?}: {missing:?}; the broker \
                 holds:\n{}",
                cluster.queues(prefix).await
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The faults, one after the other, while schedule groups fire every second and two streams
/// consume: the broker node leading the topic stream's queue, a manager replica, a frozen node,
/// a node cut off, a killed node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_on_a_cluster_lose_no_message_and_double_no_fire() {
    let p = Profile::from_env();
    let cluster = Cluster::start().await;
    let urls = cluster.urls().await;
    let mut w = World::on(Backend::Postgres, &urls).await;
    // Every tick's agent refuses a second run of a launch setting while one runs.
    let mut catalog = CatalogBuilder::new(&w, &HOSTS)
        .agent("sleep", "ANY", "skip")
        .ls(STREAM, "echo", "stream", json!({}))
        .ls(QUEUED, "poison", "stream", json!({}));
    // Short watchdog deadlines, so a lost node's launches and runs move within seconds.
    let recovery = json!({ "recovery": { "start_timeout": "2s", "work_timeout": "3s" } });
    let mut ticks = vec![SLOW.to_owned()];
    for g in 0..p.groups {
        let tick = format!("demo.tick-{g}");
        catalog = catalog.sleep_with(&tick, "100ms", recovery.clone()).group(
            &format!("demo.every-{g}"),
            &p.cron(),
            &[&tick],
            json!({}),
        );
        ticks.push(tick);
    }
    catalog = catalog.sleep_with(SLOW, "1500ms", recovery).group(
        "demo.slow-every",
        "* * * * * *",
        &[SLOW],
        json!({}),
    );
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
    let logs: Vec<PathBuf> = HOSTS
        .iter()
        .map(|h| std::env::temp_dir().join(format!("{}-{h}.log", w.prefix)))
        .collect();
    // h2 runs on a host of its own where the machine allows it (root, network namespaces).
    let apart = Netns::create()
        .map_err(|why| println!("the partition is left out: {why}"))
        .ok();
    for (host, log) in HOSTS.iter().zip(&logs) {
        match &apart {
            Some(ns) if *host == FAULTED => {
                w.start_node_apart(host, 8, log, ns.name(), &seen_from(&urls, ns));
            }
            _ => w.start_node_logged(host, 8, log),
        }
    }
    let first = w.manager().await;
    let second = w.manager().await;
    w.wait_live(&HOSTS).await;
    // Once these are through, the subscription is bound and both streams consume.
    w.publish("warm-up").await;
    w.publish_to(&jobs, "warm-up").await;
    let from = next_second(Utc::now());
    let queue = Topology::new(w.prefix.clone()).names().subscription(STREAM);

    // 1. kill -9 of the broker node leading the stream's queue, with both producers publishing.
    let (progress, producers) = produce_both(&w, &jobs, (TOPIC, QUEUED_FEED), p.count);
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
            seen(&logs, TOPIC)
                .range(at_kill + 1..)
                .next()
                .map(|_| killed.elapsed())
        }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    cluster.restart(&leader).await;
    let mut produced = produced_and_processed(
        producers,
        (TOPIC, QUEUED_FEED),
        p.count,
        (&logs, &cluster, &w.prefix),
    )
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
    // others, and the answers it gives when it wakes carry old tokens and are ignored.
    w.node(FAULTED).freeze().await;
    let frozen = Utc::now();
    tokio::time::sleep(Duration::from_secs(8)).await;
    w.node(FAULTED).thaw().await;
    let thawed = Utc::now();
    w.wait_live(&[FAULTED]).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (moved_frozen, moved_frozen_in) = moved_from(&w, FAULTED, frozen, thawed).await;
    let late = late_reports(&w, FAULTED, frozen).await;
    let mut away = vec![frozen..thawed];

    // 4. h2 cut off from the network while both producers publish again.
    let mut parted = None;
    if let Some(ns) = &apart {
        let half = p.count / 2;
        let (progress, producers) = produce_both(&w, &jobs, (TOPIC_APART, QUEUED_APART), half);
        eventually("a third of the messages confirmed", LONG, || async {
            (progress.load(Ordering::SeqCst) >= half / 3).then_some(())
        })
        .await;
        ns.cut();
        let cut = Utc::now();
        tokio::time::sleep(p.partition).await;
        ns.heal();
        let healed = Instant::now();
        w.wait_live_within(&[FAULTED], LONG).await;
        let rejoined = healed.elapsed();
        let back = Utc::now();
        produced.extend(
            produced_and_processed(
                producers,
                (TOPIC_APART, QUEUED_APART),
                half,
                (&logs, &cluster, &w.prefix),
            )
            .await,
        );
        let (moved, moved_in) = moved_from(&w, FAULTED, cut, back).await;
        let late = late_reports(&w, FAULTED, cut).await;
        away.push(cut..back);
        parted = Some((moved, moved_in, late, rejoined));
    }

    // 5. kill -9 of a node while the groups fire: what it held goes to the others.
    w.node(FAULTED).kill().await;
    let node_killed = Utc::now();
    tokio::time::sleep(Duration::from_secs(8)).await;
    let to = next_second(Utc::now()) - chrono::Duration::seconds(2);
    let statuses = ended_within(&w, p, from, to).await;
    let fires = fires_within(&w, p, from, to).await;
    let (moved, moved_in) = moved_from(&w, FAULTED, node_killed, Utc::now()).await;
    let falsely_lost = lost_while_live(&w, FAULTED, &away, node_killed).await;
    let overlaps = overlapping(&w, &ticks).await;

    // Late copies (a redelivery after the restart or the partition) are counted too.
    let mut lost = 0;
    let mut over = Vec::new();
    let broker_kill =
        format!("kill -9 of the broker node leading the topic stream's queue (node {leader})");
    let partition = "partition of a node".to_owned();
    let feeds = [
        (TOPIC, p.count, &broker_kill),
        (QUEUED_FEED, p.count, &broker_kill),
        (TOPIC_APART, p.count / 2, &partition),
        (QUEUED_APART, p.count / 2, &partition),
    ];
    for ((feed, count, fault), produced) in feeds.into_iter().zip(&produced) {
        let all = seen(&logs, feed);
        let missing = (0..count).filter(|n| !all.contains_key(n)).count();
        let twice: u32 = all.values().map(|c| c - 1).sum();
        let bound = 2 * HOSTS.len() as u32 * PREFETCH + produced.resent;
        println!(
            "{fault}, messages {}: sent {count}, lost {missing}, processed twice \
             {twice} (at most {bound}), resent by the producer {}",
            feed.marker, produced.resent,
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
        "SIGSTOP of one of three nodes for 8 s: {moved_frozen} launches or runs it held moved \
         to the others, the last ended {} ms after the freeze; {late} late reports from it ignored \
         (old fencing token)",
        moved_frozen_in.num_milliseconds()
    );
    if let Some((moved, moved_in, late, rejoined)) = parted {
        println!(
            "partition of one of three nodes for {} s: {moved} launches or runs it held moved to \
             the others, the last ended {} ms after the cut; {late} late reports from it ignored; \
             live again {} ms after the link healed",
            p.partition.as_secs(),
            moved_in.num_milliseconds(),
            rejoined.as_millis()
        );
    }
    println!(
        "kill -9 of one of three nodes: {moved} launches or runs it held moved to the others, \
         the last ended {} ms after the kill",
        moved_in.num_milliseconds()
    );
    println!("runs of live nodes declared lost: {falsely_lost}");
    println!(
        "runs of one launch setting at once (overlap skip): {}",
        overlaps.len()
    );
    assert_eq!(lost, 0, "messages lost");
    assert_eq!(
        falsely_lost, 0,
        "runs of a live node declared lost (any but {FAULTED} throughout, {FAULTED} but while away or killed)"
    );
    assert!(
        overlaps.is_empty(),
        "overlap policy skip broken: {overlaps:#?}"
    );
    assert!(moved_frozen > 0, "nothing moved away from the frozen node");
    if let Some((moved, ..)) = parted {
        assert!(moved > 0, "nothing moved away from the node cut off");
    }
    assert!(over.is_empty(), "more copies than in flight: {over:?}");
    assert_eq!(
        (fires.doubled, fires.missed),
        (0, 0),
        "fires doubled or missed"
    );
    // A fire that met its launch setting's previous run still going (moved off a failed node)
    // ends skipped by the overlap policy; every other fire ran.
    let ran_or_skipped = [status::activation::SUCCEEDED, status::activation::SKIPPED]
        .iter()
        .filter_map(|s| statuses.get(*s))
        .sum::<usize>();
    assert_eq!(
        ran_or_skipped, fires.expected,
        "every fire ran: {statuses:?}"
    );

    second.stop().await;
    let mut finished = vec![STREAM.to_owned(), QUEUED.to_owned()];
    finished.extend(ticks);
    w.finish(&finished.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    for log in &logs {
        let _ = std::fs::remove_file(log);
    }
    drop(cluster);
    drop(apart);
}
