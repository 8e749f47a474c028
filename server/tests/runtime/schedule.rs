//! Schedule groups fire on time and run their members one after another.

use crate::harness::{CatalogBuilder, LONG, World, fire_time};
use am_services::testing::Backend;
use chrono::Utc;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_fires_on_time_and_runs_members_in_order() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .sleep("demo.first", "700ms")
            .sleep("demo.second", "300ms")
            .group(
                "demo.pair",
                "*/2 * * * * *",
                &["demo.first", "demo.second"],
                json!({}),
            )
            .build(),
    )
    .await;
    w.start_node("h1");
    w.start_node("h2");
    let m = w.manager().await;
    w.wait_live(&["h1", "h2"]).await;
    let since = Utc::now();

    // Two fires after the nodes are up, both finished.
    let runs = w
        .wait("two finished fires of demo.pair", LONG, || async {
            let runs: Vec<_> = w
                .group_runs("demo.pair")
                .await
                .into_iter()
                .filter(|r| r.fire_key.is_some() && fire_time(r) > since)
                .collect();
            (runs.len() >= 2 && runs[..2].iter().all(|r| r.status != "running")).then_some(runs)
        })
        .await;
    let (first, second) = (&runs[0], &runs[1]);
    assert_eq!(
        fire_time(second) - fire_time(first),
        chrono::Duration::seconds(2),
        "consecutive fires of */2 are two seconds apart"
    );
    for run in &runs[..2] {
        let at = fire_time(run);
        assert_eq!(run.trigger, "schedule");
        assert_eq!(
            chrono::Timelike::second(&at) % 2,
            0,
            "fires on even seconds"
        );
        let lag = run.created_at - at;
        assert!(
            lag >= chrono::Duration::zero() && lag < chrono::Duration::milliseconds(1500),
            "fire of {at} recorded {lag} late"
        );
        assert_eq!(run.status, "succeeded", "{}", w.dump().await);

        let members = w.members_of(run.id).await;
        let ls: Vec<_> = members
            .iter()
            .map(|m| m.launch_setting_id.as_deref().unwrap_or_default())
            .collect();
        assert_eq!(ls, ["demo.first", "demo.second"]);
        assert_eq!(
            members.iter().map(|m| m.position).collect::<Vec<_>>(),
            [Some(0), Some(1)]
        );
        assert!(members.iter().all(|m| m.status == "succeeded"));
        let one = w.hosts_of(members[0].id).await;
        let two = w.hosts_of(members[1].id).await;
        assert_eq!((one.len(), two.len()), (1, 1), "each member ran once");
        // An ANY group stays on one node.
        assert_eq!(one[0].host, two[0].host);
        // Member 2 was created and started only once member 1 had finished.
        let one_done = members[0].finished_at.expect("member 1 finished");
        assert!(members[1].created_at >= one_done);
        let node_done = one[0].finished_at.expect("finished on its node");
        let node_started = two[0].started_at.expect("started on its node");
        assert!(
            node_started >= node_done,
            "member 2 started at {node_started}, before member 1 ended at {node_done}"
        );
        // The group ends with its last member.
        assert!(run.finished_at >= members[1].finished_at);
    }
    assert!(
        m.metric(|m| &m.scheduler_lag_ms) < 1500,
        "scheduler lag gauge"
    );
    m.stop().await;
    w.finish(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_stops_at_the_first_failure_unless_it_continues() {
    let mut w = World::new(Backend::Sqlite).await;
    // A high breaker threshold: these failures must not trip it.
    let fail = json!({ "failure_threshold": 100 });
    w.seed(
        CatalogBuilder::new(&w, &["h1"])
            .ls("demo.fail.a", "fail", "scheduled", fail.clone())
            .ls("demo.fail.b", "fail", "scheduled", fail)
            .sleep("demo.after.a", "200ms")
            .sleep("demo.after.b", "200ms")
            .group(
                "demo.stops",
                "*/2 * * * * *",
                &["demo.fail.a", "demo.after.a"],
                json!({}),
            )
            .group(
                "demo.continues",
                "*/2 * * * * *",
                &["demo.fail.b", "demo.after.b"],
                json!({ "continue_on_failure": true }),
            )
            .build(),
    )
    .await;
    w.start_node("h1");
    let m = w.manager().await;
    w.wait_live(&["h1"]).await;
    let since = Utc::now();

    let first_done = |group: &'static str| {
        let w = &w;
        async move {
            w.wait(&format!("a finished fire of {group}"), LONG, || async {
                w.group_runs(group)
                    .await
                    .into_iter()
                    .find(|r| r.created_at > since && r.status != "running")
            })
            .await
        }
    };

    let stopped = first_done("demo.stops").await;
    assert_eq!(stopped.status, "failed");
    assert!(
        stopped
            .error
            .as_deref()
            .is_some_and(|e| e.contains("demo.fail.a ended failed")),
        "{:?}",
        stopped.error
    );
    let members = w.members_of(stopped.id).await;
    assert_eq!(members.len(), 2);
    assert_eq!(members[0].status, "failed");
    assert_eq!(
        members[1].launch_setting_id.as_deref(),
        Some("demo.after.a")
    );
    assert_eq!(members[1].status, "skipped");
    assert!(
        members[1]
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("skipped:"))
    );
    assert!(
        w.hosts_of(members[1].id).await.is_empty(),
        "a skipped member is never dispatched"
    );

    let continued = first_done("demo.continues").await;
    assert_eq!(
        continued.status, "failed",
        "a failed member fails the group"
    );
    let members = w.members_of(continued.id).await;
    assert_eq!(members.len(), 2);
    assert_eq!(members[0].status, "failed");
    assert_eq!(members[1].status, "succeeded", "{}", w.dump().await);
    assert!(members[1].created_at >= members[0].finished_at.expect("finished"));

    assert_eq!(
        w.group("demo.stops").await.last_result.as_deref(),
        Some("failed")
    );
    assert!(w.group("demo.stops").await.enabled, "no breaker trip");
    m.stop().await;
    w.finish(&[]).await;
}
