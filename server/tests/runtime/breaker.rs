//! The breaker policy with real trips: `poison` choking on poisoned messages and `fail` failing
//! its runs, with a threshold of 1 in a row of one error type (`failure_threshold` 3).

use crate::harness::{CatalogBuilder, LONG, SHORT, World};
use am_domain::usage::EntityRef;
use am_services::testing::Backend;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use uuid::Uuid;

/// A poison stream that trips on its first poisoned message, which goes to the dead letters at
/// once (no retries to muddle which node saw it).
fn poison_stream() -> Value {
    json!({
        "stream_mode": "asap",
        "failure_threshold": 3,
        "retry": { "initial_delay": "100ms", "max_delay": "100ms", "max_deliveries": 1 },
    })
}

/// Waits until a launch setting's stream runs on `n` nodes; returns the activation.
async fn stream_running_on(w: &World, ls: &str, n: usize) -> Uuid {
    w.wait(&format!("{ls} running on {n} node(s)"), SHORT, || async {
        let run = w.runs_of(ls).await.pop()?;
        let running = w
            .hosts_of(run.id)
            .await
            .iter()
            .filter(|h| h.status == "running")
            .count();
        (running == n).then_some(run.id)
    })
    .await
}

/// The breaker's cause is stored just after the disable commits (with a generic reason first),
/// so a reader may see the disable a moment before its reason.
fn by_breaker(reason: &Option<String>) -> bool {
    reason
        .as_deref()
        .is_some_and(|r| r.starts_with("breaker tripped"))
}

/// An audit entry by the breaker about `entity`, with the cause.
async fn breaker_audit(w: &World, entity: &str) -> String {
    let entries = w.audit_of(entity).await;
    let entry = entries
        .iter()
        .rev()
        .find(|e| e.actor == "breaker")
        .unwrap_or_else(|| panic!("an audit entry by the breaker about {entity}: {entries:#?}"));
    entry
        .cause
        .clone()
        .expect("the audit entry names its cause")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_trip_disables_the_launch_setting() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1", "h2"])
            .ls("demo.poison", "poison", "stream", poison_stream())
            .build(),
    )
    .await;
    w.start_node("h1");
    w.start_node("h2");
    let m = w.manager().await;
    w.wait_live(&["h1", "h2"]).await;
    let run = stream_running_on(&w, "demo.poison", 1).await;
    let host = w.hosts_of(run).await[0].host.clone();

    w.publish("good food").await;
    w.publish("some poison").await;
    let ls = w
        .wait("demo.poison disabled by the breaker", SHORT, || async {
            let ls = w.launch_setting("demo.poison").await;
            (!ls.enabled && by_breaker(&ls.disabled_reason)).then_some(ls)
        })
        .await;
    let reason = ls.disabled_reason.expect("a disabled reason");
    assert!(
        reason.starts_with(&format!("breaker tripped on {host} for demo.poison")),
        "{reason}"
    );
    assert!(
        reason.contains("Poisoned"),
        "names the last error: {reason}"
    );
    assert_eq!(breaker_audit(&w, "demo.poison").await, reason);
    let trips = w.trips_of("demo.poison").await;
    assert_eq!(trips.len(), 1);
    assert_eq!(trips[0].host, host);
    assert_eq!(trips[0].activation_id, Some(run));

    // The tripped run ended, and a disabled stream is not started again.
    assert_eq!(w.wait_done(run, SHORT).await.status, "failed");
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(
        w.runs_of("demo.poison").await.len(),
        1,
        "{}",
        w.dump().await
    );
    assert_eq!(m.metric(|m| &m.breaker_disables), 1);
    m.stop().await;
    w.finish(&["demo.poison"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_trip_disables_once_two_hosts_tripped_then_stops_the_rest() {
    let hosts = ["h1", "h2", "h3"];
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &hosts)
            .agent("poison", "MANY", "allow")
            .ls("demo.poison", "poison", "stream", poison_stream())
            .build(),
    )
    .await;
    for h in hosts {
        w.start_node(h);
    }
    let m = w.manager().await;
    w.wait_live(&hosts).await;
    let run = stream_running_on(&w, "demo.poison", 3).await;

    // One poisoned message at a time, each taken by one of the nodes, until two have tripped.
    // A tripped host is quarantined: it gets the stream no more, so the next poisoned message
    // goes to one of the others.
    let mut tripped = BTreeSet::new();
    let mut checked_quarantine = false;
    for i in 0..15 {
        let failures = w.failures_of("demo.poison").await;
        w.publish(&format!("poison number {i}")).await;
        w.wait("the poisoned message to fail", SHORT, || async {
            (w.failures_of("demo.poison").await > failures).then_some(())
        })
        .await;
        w.reports_drained(&hosts).await;
        tripped = w
            .trips_of("demo.poison")
            .await
            .into_iter()
            .map(|t| t.host)
            .collect();
        if tripped.len() >= 2 {
            break;
        }
        assert!(
            w.launch_setting("demo.poison").await.enabled,
            "one tripped host of three live ones does not disable a MANY launch setting"
        );
        if let Some(host) = tripped.first().filter(|_| !checked_quarantine) {
            checked_quarantine = true;
            // No re-dispatch loop: 3 s of watchdog passes, and the quarantined host still had
            // one dispatch while the other two keep running.
            tokio::time::sleep(std::time::Duration::from_secs(3)).await;
            let rows = w.hosts_of(run).await;
            let to_host = rows.iter().filter(|r| &r.host == host).count();
            assert_eq!(to_host, 1, "{}", w.dump().await);
            let running = rows.iter().filter(|r| r.status == "running").count();
            assert_eq!(running, 2, "{}", w.dump().await);
            assert_eq!(m.metric(|m| &m.quarantines), 1);
        }
    }
    assert_eq!(
        tripped.len(),
        2,
        "two hosts tripped within 15 poisoned messages"
    );
    let ls = w
        .wait("demo.poison disabled by the breaker", SHORT, || async {
            let ls = w.launch_setting("demo.poison").await;
            (!ls.enabled && by_breaker(&ls.disabled_reason)).then_some(ls)
        })
        .await;
    let reason = ls.disabled_reason.expect("a disabled reason");
    assert!(reason.starts_with("breaker tripped on "), "{reason}");
    assert_eq!(breaker_audit(&w, "demo.poison").await, reason);

    // The host that never tripped is told to stop, and its run ends interrupted.
    let healthy = hosts
        .iter()
        .find(|h| !tripped.contains(**h))
        .expect("one host never tripped");
    w.wait(&format!("{healthy} stopped"), SHORT, || async {
        let rows = w.hosts_of(run).await;
        let row = rows.iter().find(|r| r.host == *healthy)?;
        (row.status == "interrupted").then(|| assert!(row.stop_requested_at.is_some()))
    })
    .await;
    assert!(
        w.events_of(run)
            .await
            .iter()
            .any(|e| e.kind == "stop-requested" && e.host.as_deref() == Some(*healthy))
    );
    assert_eq!(w.wait_done(run, SHORT).await.status, "failed");
    m.stop().await;
    w.finish(&["demo.poison"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_trip_disables_the_group() {
    let mut w = World::new(Backend::Sqlite).await;
    w.seed(
        CatalogBuilder::new(&w, &["h1"])
            .ls(
                "demo.fail",
                "fail",
                "scheduled",
                json!({ "failure_threshold": 1 }),
            )
            .sleep("demo.after", "200ms")
            // Only run by hand here.
            .group(
                "demo.group",
                "0 0 0 1 1 *",
                &["demo.fail", "demo.after"],
                json!({}),
            )
            .build(),
    )
    .await;
    w.start_node("h1");
    let m = w.manager().await;
    w.wait_live(&["h1"]).await;

    let run = m
        .run_now(EntityRef::ScheduleGroup("demo.group".into()))
        .await;
    let group = w
        .wait("demo.group disabled", SHORT, || async {
            let g = w.group("demo.group").await;
            (!g.enabled && by_breaker(&g.disabled_reason)).then_some(g)
        })
        .await;
    let reason = group.disabled_reason.expect("a disabled reason");
    assert!(
        reason.starts_with("breaker tripped on h1 for demo.fail"),
        "{reason}"
    );
    assert_eq!(breaker_audit(&w, "demo.group").await, reason);
    assert!(
        w.launch_setting("demo.fail").await.enabled,
        "the group is disabled, not its member"
    );

    assert_eq!(w.wait_done(run, LONG).await.status, "failed");
    let members = w.members_of(run).await;
    let statuses: Vec<&str> = members.iter().map(|m| m.status.as_str()).collect();
    assert_eq!(statuses, ["failed", "skipped"]);
    m.stop().await;
    w.finish(&[]).await;
}
