//! Fires missed while no manager ran, handled per group policy when a manager starts again on
//! the same database.

use crate::harness::{CatalogBuilder, LONG, World, amqp_url, fire_time, sleep_until};
use am_services::{entity::activations, runtime::RuntimeConfig, testing::Backend};
use chrono::{DateTime, Duration, DurationRound, Utc};
use serde_json::json;

const EVERY: i64 = 4;

/// The first fire time of `*/4 * * * * *` after `t`.
fn next_fire(t: DateTime<Utc>) -> DateTime<Utc> {
    let floor = t
        .duration_trunc(Duration::seconds(EVERY))
        .expect("truncates");
    floor + Duration::seconds(EVERY)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misfire_policies_after_a_manager_restart() {
    let mut w = World::new(Backend::Sqlite).await;
    let cron = "*/4 * * * * *";
    w.seed(
        CatalogBuilder::new(&w, &["h1"])
            .sleep("demo.once", "100ms")
            .sleep("demo.skip", "100ms")
            .group(
                "demo.fire-once",
                cron,
                &["demo.once"],
                json!({ "misfire": "fire-once-now" }),
            )
            .group(
                "demo.skipping",
                cron,
                &["demo.skip"],
                json!({ "misfire": "skip" }),
            )
            .build(),
    )
    .await;
    // A fire found more than a second late on start-up is a misfire.
    let cfg = RuntimeConfig {
        misfire_threshold: Duration::seconds(1),
        ..w.config()
    };
    w.start_node("h1");
    let first = w.manager_with(cfg.clone(), &amqp_url()).await;
    w.wait_live(&["h1"]).await;
    for group in ["demo.fire-once", "demo.skipping"] {
        w.wait(&format!("a normal fire of {group}"), LONG, || async {
            w.group_runs(group)
                .await
                .into_iter()
                .find(|r| r.trigger == "schedule" && r.status == "succeeded")
        })
        .await;
    }

    // No manager for two fire times; it comes back 1.6 s after the second, well before the
    // third.
    first.stop().await;
    let stopped = Utc::now();
    let missed_first = next_fire(stopped);
    let missed_last = missed_first + Duration::seconds(EVERY);
    sleep_until(missed_last + Duration::milliseconds(1600)).await;
    let second = w.manager_with(cfg, &amqp_url()).await;
    let normal = missed_last + Duration::seconds(EVERY);

    let after_restart = |group: &'static str| {
        let w = &w;
        async move {
            w.wait(
                &format!("the normal fire of {group} after the restart"),
                LONG,
                || async {
                    let runs: Vec<activations::Model> = w
                        .group_runs(group)
                        .await
                        .into_iter()
                        .filter(|r| r.created_at > stopped && fire_time(r) <= normal)
                        .collect();
                    runs.iter()
                        .any(|r| fire_time(r) == normal && r.status == "succeeded")
                        .then_some(runs)
                },
            )
            .await
        }
    };
    let once = after_restart("demo.fire-once").await;
    let fires: Vec<(String, DateTime<Utc>)> = once
        .iter()
        .map(|r| (r.trigger.clone(), fire_time(r)))
        .collect();
    assert_eq!(
        fires,
        [("misfire".into(), missed_last), ("schedule".into(), normal)],
        "fire-once-now: the latest missed time once, then the schedule ({missed_first} is gone)"
    );
    assert_eq!(once[0].status, "succeeded");

    let skipped = after_restart("demo.skipping").await;
    let fires: Vec<(String, DateTime<Utc>)> = skipped
        .iter()
        .map(|r| (r.trigger.clone(), fire_time(r)))
        .collect();
    assert_eq!(
        fires,
        [("schedule".into(), normal)],
        "skip: nothing for the missed times"
    );
    assert_eq!(
        w.group("demo.skipping")
            .await
            .last_fire_at
            .map(|t| t >= normal),
        Some(true)
    );
    assert_eq!(second.metric(|m| &m.misfires_fired), 1);
    assert_eq!(second.metric(|m| &m.misfires_skipped), 1);
    second.stop().await;
    w.finish(&[]).await;
}
