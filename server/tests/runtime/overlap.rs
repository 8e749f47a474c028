//! The overlap policies decided by the manager for the whole pool, with two live nodes. `skip`
//! through schedule groups: a member whose launch setting still runs (started by hand, by
//! another group, or by the group's previous fire) is recorded skipped, naming the run it met,
//! and the group goes on with its next member; cron fires never run two copies at once, on one
//! host or on two. `interrupt`: a new run, by hand or as a group member, ends the running one
//! wherever it runs before it starts there.

use crate::harness::{CatalogBuilder, LONG, SHORT, World, held};
use am_domain::usage::EntityRef;
use am_services::{
    entity::{activation_events, activations},
    testing::Backend,
};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::json;
use uuid::Uuid;

/// A run's time on a node (or on its nodes): id, start, end.
type Span = (Uuid, DateTime<Utc>, DateTime<Utc>);

/// Every activation of `ls`, group members included, oldest first.
async fn all_runs_of(w: &World, ls: &str) -> Vec<activations::Model> {
    activations::Entity::find()
        .filter(activations::Column::LaunchSettingId.eq(ls))
        .order_by_asc(activations::Column::CreatedAt)
        .all(&w.db)
        .await
        .expect("query")
}

/// When the runs of `ls` that reached a node held a slot ([`held`]), oldest first.
async fn spans_of(w: &World, ls: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    for run in all_runs_of(w, ls).await {
        if let Some((start, end)) = held(&w.hosts_of(run.id).await) {
            spans.push((run.id, start, end));
        }
    }
    spans.sort_by_key(|s| s.1);
    spans
}

fn assert_one_at_a_time(spans: &[Span]) {
    for pair in spans.windows(2) {
        let ((a, _, a_end), (b, b_start, _)) = (pair[0], pair[1]);
        assert!(
            b_start >= a_end,
            "run {b} started at {b_start} while run {a} ran until {a_end}"
        );
    }
}

/// Per host, no run of `ls` started there before the one before it ended there.
async fn assert_one_per_host_at_a_time(w: &World, ls: &str) {
    let mut by_host: std::collections::BTreeMap<String, Vec<Span>> = Default::default();
    for run in all_runs_of(w, ls).await {
        for h in w.hosts_of(run.id).await {
            if let Some(start) = h.started_at {
                let end = h.finished_at.unwrap_or_else(Utc::now);
                by_host
                    .entry(h.host)
                    .or_default()
                    .push((run.id, start, end));
            }
        }
    }
    for spans in by_host.values_mut() {
        spans.sort_by_key(|s| s.1);
        assert_one_at_a_time(spans);
    }
}

fn assert_skipped_for(member: &activations::Model, running: Uuid, host: &str) {
    assert_eq!(member.status, "skipped", "{member:?}");
    let reason = member.error.clone().unwrap_or_default();
    let short = &running.to_string()[..8];
    assert!(
        reason.contains(short) && reason.contains(host) && reason.contains("overlap policy: skip"),
        "the reason names the running run and its host: {reason}"
    );
}

async fn skip_holds_for_group_members(concurrency: &str) {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .agent("sleep", concurrency, "skip")
            .sleep("demo.slow", "6s")
            .sleep("demo.quick", "100ms")
            .sleep("demo.after", "100ms")
            // The busy launch setting first: skipped when the fire is recorded.
            .group(
                "demo.first",
                "0 0 0 1 1 *",
                &["demo.slow", "demo.after"],
                json!({}),
            )
            // The busy launch setting second: skipped when the member before it ends.
            .group(
                "demo.second",
                "0 0 0 1 1 *",
                &["demo.quick", "demo.slow", "demo.after"],
                json!({}),
            )
            .build(),
    )
    .await;
    let m = w.start_pool(&["h1", "h2"]).await;

    let running = m.run_ls("demo.slow").await;
    w.wait_status(running, &["running"], SHORT).await;
    let host = w.hosts_of(running).await[0].host.clone();

    for group in ["demo.first", "demo.second"] {
        let fire = m.run_now(EntityRef::ScheduleGroup(group.to_owned())).await;
        let done = w.wait_done(fire, LONG).await;
        assert_eq!(done.status, "succeeded", "{}", w.dump().await);
        let members = w.members_of(fire).await;
        let by_ls = |ls: &str| {
            members
                .iter()
                .find(|m| m.launch_setting_id.as_deref() == Some(ls))
                .unwrap_or_else(|| panic!("{group} has a member run of {ls}"))
                .clone()
        };
        let slow = by_ls("demo.slow");
        assert_skipped_for(&slow, running, &host);
        assert!(w.hosts_of(slow.id).await.is_empty(), "dispatched nowhere");
        assert_eq!(by_ls("demo.after").status, "succeeded");
    }
    // Still the one copy: the skipped members never reached a node.
    assert_eq!(w.activation(running).await.status, "running");
    assert_one_at_a_time(&spans_of(&w, "demo.slow").await);
    assert_eq!(w.wait_done(running, LONG).await.status, "succeeded");
    m.stop().await;
    w.finish(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skip_holds_for_group_members_across_nodes_for_any() {
    skip_holds_for_group_members("ANY").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skip_holds_for_group_members_across_nodes_for_many() {
    skip_holds_for_group_members("MANY").await;
}

/// A group firing every second whose member takes three: the fires that meet the running one
/// skip it, and with two idle nodes no two copies ever run at once.
async fn cron_fires_never_overlap(concurrency: &str) {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .agent("sleep", concurrency, "skip")
            .sleep("demo.slow", "2500ms")
            .group("demo.often", "* * * * * *", &["demo.slow"], json!({}))
            .build(),
    )
    .await;
    let m = w.start_pool(&["h1", "h2"]).await;

    // Two runs that reached a node, and fires skipped in between.
    let runs = w
        .wait("two runs of demo.slow and skipped fires", LONG, || async {
            let runs = all_runs_of(&w, "demo.slow").await;
            let ran = runs
                .iter()
                .filter(|r| r.status != "skipped" && r.status != "running")
                .count();
            let skipped = runs.iter().filter(|r| r.status == "skipped").count();
            (ran >= 2 && skipped >= 2).then_some(runs)
        })
        .await;
    m.stop().await;
    for r in runs.iter().filter(|r| r.status == "skipped") {
        let reason = r.error.clone().unwrap_or_default();
        assert!(reason.contains("overlap policy: skip"), "{reason}");
        assert!(w.hosts_of(r.id).await.is_empty(), "dispatched nowhere");
    }
    assert_one_at_a_time(&spans_of(&w, "demo.slow").await);
    // The fires themselves are all recorded, and none failed for it.
    for g in w.group_runs("demo.often").await {
        assert_ne!(g.status, "failed", "{}", w.dump().await);
    }
    w.finish(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cron_fires_of_a_skip_agent_never_overlap_for_any() {
    cron_fires_never_overlap("ANY").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cron_fires_of_a_skip_agent_never_overlap_for_many() {
    cron_fires_never_overlap("MANY").await;
}

async fn interrupt_holds_across_nodes(concurrency: &str) {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .agent("sleep", concurrency, "interrupt")
            .sleep("demo.slow", "4s")
            .sleep("demo.quick", "100ms")
            // Started with the fire, and by the member before it.
            .group("demo.again", "0 0 0 1 1 *", &["demo.slow"], json!({}))
            .group(
                "demo.later",
                "0 0 0 1 1 *",
                &["demo.quick", "demo.slow"],
                json!({}),
            )
            .build(),
    )
    .await;
    let m = w.start_pool(&["h1", "h2"]).await;

    let first = m.run_ls("demo.slow").await;
    w.wait_status(first, &["running"], SHORT).await;
    // By hand: the second run ends the first wherever it runs, then runs.
    let second = m.run_ls("demo.slow").await;
    assert_eq!(w.wait_done(first, SHORT).await.status, "interrupted");
    w.wait_status(second, &["running"], SHORT).await;
    // As a group member: the same, whether the fire or the member before it starts it.
    let fire = m
        .run_now(EntityRef::ScheduleGroup("demo.again".to_owned()))
        .await;
    assert_eq!(w.wait_done(second, SHORT).await.status, "interrupted");
    let member = w
        .wait("the fire's member running", SHORT, || async {
            let members = w.members_of(fire).await;
            members
                .first()
                .filter(|m| m.status == "running")
                .map(|m| m.id)
        })
        .await;
    let later = m
        .run_now(EntityRef::ScheduleGroup("demo.later".to_owned()))
        .await;
    assert_eq!(w.wait_done(member, SHORT).await.status, "interrupted");
    assert_eq!(w.wait_done(fire, SHORT).await.status, "interrupted");
    assert_eq!(
        w.wait_done(later, LONG).await.status,
        "succeeded",
        "{}",
        w.dump().await
    );
    // The manager told each host why (on the run's timeline).
    for run in [first, second, member] {
        let told: Vec<activation_events::Model> = activation_events::Entity::find()
            .filter(activation_events::Column::ActivationId.eq(run))
            .filter(activation_events::Column::Kind.eq("interrupt-requested"))
            .all(&w.db)
            .await
            .expect("query");
        assert!(
            !told.is_empty()
                && told.iter().all(|e| e
                    .detail
                    .as_deref()
                    .unwrap_or_default()
                    .contains("overlap policy: interrupt")),
            "{told:?}"
        );
    }
    assert_one_per_host_at_a_time(&w, "demo.slow").await;
    if concurrency == "ANY" {
        assert_one_at_a_time(&spans_of(&w, "demo.slow").await);
    }
    m.stop().await;
    w.finish(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_holds_across_nodes_for_any() {
    interrupt_holds_across_nodes("ANY").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_holds_across_nodes_for_many() {
    interrupt_holds_across_nodes("MANY").await;
}

/// Two manager replicas on PostgreSQL, two groups firing every second with the same `skip`
/// member and two nodes: the replicas race every fire, the groups race each other, and still
/// no two copies ever run at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_and_two_groups_never_overlap_a_skip_agent() {
    let mut w = World::new(Backend::Postgres).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .agent("sleep", "ANY", "skip")
            .sleep("demo.slow", "1500ms")
            .group("demo.one", "* * * * * *", &["demo.slow"], json!({}))
            .group("demo.two", "* * * * * *", &["demo.slow"], json!({}))
            .build(),
    )
    .await;
    let a = w.start_pool(&["h1", "h2"]).await;
    let b = w.manager().await;

    w.wait("three runs of demo.slow that ended", LONG, || async {
        let ran = all_runs_of(&w, "demo.slow")
            .await
            .iter()
            .filter(|r| r.status == "succeeded")
            .count();
        (ran >= 3).then_some(())
    })
    .await;
    a.stop().await;
    b.stop().await;
    let runs = all_runs_of(&w, "demo.slow").await;
    assert!(
        runs.iter().filter(|r| r.status == "skipped").count() >= 3,
        "{}",
        w.dump().await
    );
    assert_one_at_a_time(&spans_of(&w, "demo.slow").await);
    w.finish(&[]).await;
}
