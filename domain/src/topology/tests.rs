use super::*;
use crate::{
    catalog::{Catalog, DeadLetterPolicy, DeadLetterSettings, RetryPolicy},
    wire::names::Names,
};

fn catalog(extra: impl FnOnce(&mut serde_json::Value)) -> Catalog {
    let mut doc = serde_json::json!({
        "applications": [{ "id": "app", "default_pool": "pool" }],
        "pools": [{ "id": "pool", "hosts": ["h1"] }],
        "data_queues": [
            { "id": "events", "kind": "topic", "delay": "30s" },
            { "id": "jobs", "kind": "queue" }
        ],
        "agents": [
            { "application": "app", "id": "reader", "input": "messages", "data_queue": "events",
              "concurrency": "ANY", "overlap": "allow" },
            { "application": "app", "id": "worker", "input": "messages", "data_queue": "jobs",
              "concurrency": "ANY", "overlap": "allow" },
            { "application": "app", "id": "batch", "input": "standalone",
              "concurrency": "ANY", "overlap": "skip" }
        ],
        "launch_settings": [
            { "id": "app.reader.asap", "application": "app", "agent": "reader", "kind": "stream",
              "stream_mode": "asap", "filter": { "headers": { "tenant": "acme" } } },
            { "id": "app.reader.late", "application": "app", "agent": "reader", "kind": "stream",
              "stream_mode": "delayed" },
            { "id": "app.worker.1", "application": "app", "agent": "worker", "kind": "stream" },
            { "id": "app.worker.2", "application": "app", "agent": "worker", "kind": "stream" },
            { "id": "app.batch.1", "application": "app", "agent": "batch", "kind": "scheduled" }
        ],
        "schedule_groups": [
            { "id": "nightly", "application": "app", "cron": "0 0 2 * * *", "time_zone": "UTC",
              "members": ["app.batch.1"] }
        ]
    });
    extra(&mut doc);
    serde_json::from_value(doc).expect("catalog")
}

fn layout() -> Layout {
    Layout::new(Names::new("am"))
}

fn ls_index(doc: &serde_json::Value, id: &str) -> usize {
    doc["launch_settings"]
        .as_array()
        .and_then(|a| a.iter().position(|ls| ls["id"] == id))
        .expect("launch setting")
}

fn binding(queue: &str, exchange: &str, headers: &[(&str, &str)]) -> Binding {
    let mut args = Args::new();
    args.insert(arg::MATCH.into(), "all".into());
    for (k, v) in headers {
        args.insert((*k).into(), (*v).into());
    }
    Binding {
        queue: queue.into(),
        exchange: exchange.into(),
        args,
    }
}

#[test]
fn default_policy_waits_double_up_to_the_last_retry() {
    let delays = wait_delays(&RetryPolicy::default(), &DeadLetterSettings::default());
    let secs: Vec<u64> = delays.iter().map(|ms| ms / 1000).collect();
    // The whole ladder, 1 s doubling up to the 5 min cap: answers "temporarily unavailable"
    // climb it beyond the 9 retries of 10 deliveries.
    assert_eq!(secs, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300]);
}

#[test]
fn retry_forever_reaches_its_cap_and_park_adds_the_cooldown() {
    let forever = DeadLetterSettings {
        policy: DeadLetterPolicy::RetryForever,
        ..DeadLetterSettings::default()
    };
    let delays = wait_delays(&RetryPolicy::default(), &forever);
    assert_eq!(delays.last(), Some(&300_000));
    assert_eq!(delays.len(), 10);
    let park = DeadLetterSettings {
        policy: DeadLetterPolicy::Park,
        park_cooldown: crate::HumanDuration::from_secs(3600),
        ..DeadLetterSettings::default()
    };
    assert_eq!(
        wait_delays(&RetryPolicy::default(), &park).last(),
        Some(&3_600_000)
    );
}

#[test]
fn desired_objects_follow_the_catalog() {
    let d = layout().desired(&catalog(|_| {}));
    // One headers exchange per data queue, its alternate and the unrouted queue behind it.
    assert_eq!(d.exchanges["events"].kind, ExchangeType::Headers);
    assert_eq!(
        d.exchanges["events"].args[arg::ALTERNATE_EXCHANGE],
        Arg::from("am.dq.events.unrouted")
    );
    assert!(d.queues.contains_key("am.dq.events.unrouted"));
    assert!(d.bindings.contains(&Binding {
        queue: "am.dq.events.unrouted".into(),
        exchange: "am.dq.events.unrouted".into(),
        args: Args::new(),
    }));
    // topic: a subscription per launch setting, bound with its filter or through its delay.
    assert!(d.bindings.contains(&binding(
        "am.ls.app.reader.asap",
        "events",
        &[("tenant", "acme")]
    )));
    let delay = &d.queues["am.ls.app.reader.late.delay.30000ms"];
    assert_eq!(delay.dead_letter_target(), Some("am.ls.app.reader.late"));
    assert!(d.bindings.contains(&binding(
        "am.ls.app.reader.late.delay.30000ms",
        "events",
        &[]
    )));
    assert!(d.queues.contains_key("am.ls.app.reader.late"));
    // queue: one shared queue for both launch settings, no subscription of their own.
    assert!(d.queues.contains_key("am.dq.jobs"));
    assert!(!d.queues.contains_key("am.ls.app.worker.1"));
    assert!(d.bindings.contains(&binding("am.dq.jobs", "jobs", &[])));
    // Standalone agents have no queue; wait queues are shared by delay.
    assert!(!d.queues.keys().any(|q| q.contains("batch")));
    assert_eq!(
        d.queues
            .values()
            .filter(|q| q.role == QueueRole::Wait)
            .count(),
        10
    );
    assert_eq!(
        d.queues["am.wait.2000ms"].args[arg::MESSAGE_TTL],
        Arg::Int(2000)
    );
    assert_eq!(d.queues["am.wait.2000ms"].dead_letter_target(), None);
    assert_eq!(
        layout().consumed_queue("app.worker.1", crate::catalog::DataQueueKind::Queue, "jobs"),
        "am.dq.jobs"
    );
}

#[test]
fn nothing_to_do_when_nothing_changed() {
    let d = layout().desired(&catalog(|_| {}));
    assert!(plan(&d, &d, false).is_empty());
    let full = plan(&d, &d, true);
    assert_eq!(full.declare_queues.len(), d.queues.len());
    assert_eq!(full.bind.len(), d.bindings.len());
    assert!(full.unbind.is_empty() && full.leaving.is_empty());
    // From nothing: fanout exchanges are declared before the data exchanges.
    let first = plan(&d, &BrokerObjects::default(), false);
    let kinds: Vec<_> = first.declare_exchanges.iter().map(|e| e.kind).collect();
    let mut sorted = kinds.clone();
    sorted.sort();
    assert_eq!(kinds, sorted);
}

#[test]
fn a_changed_filter_binds_the_new_before_unbinding_the_old() {
    let before = layout().desired(&catalog(|_| {}));
    let after = layout().desired(&catalog(|doc| {
        let i = ls_index(doc, "app.reader.asap");
        doc["launch_settings"][i]["filter"] = serde_json::json!({"headers": {"tenant": "globex"}});
    }));
    let p = plan(&after, &before, false);
    assert_eq!(
        p.bind,
        [binding(
            "am.ls.app.reader.asap",
            "events",
            &[("tenant", "globex")]
        )]
    );
    assert_eq!(
        p.unbind,
        [binding(
            "am.ls.app.reader.asap",
            "events",
            &[("tenant", "acme")]
        )]
    );
    assert!(p.leaving.is_empty() && p.declare_queues.is_empty());
}

#[test]
fn asap_to_delayed_and_back_moves_the_binding_and_drains_the_delay_queue() {
    let asap = layout().desired(&catalog(|doc| {
        let i = ls_index(doc, "app.reader.late");
        doc["launch_settings"][i]["stream_mode"] = "asap".into();
    }));
    let delayed = layout().desired(&catalog(|_| {}));
    let p = plan(&delayed, &asap, false);
    assert_eq!(
        p.declare_queues[0].name,
        "am.ls.app.reader.late.delay.30000ms"
    );
    assert_eq!(p.bind[0].queue, "am.ls.app.reader.late.delay.30000ms");
    assert_eq!(p.unbind[0].queue, "am.ls.app.reader.late");
    assert!(p.leaving.is_empty());

    let back = plan(&asap, &delayed, false);
    assert_eq!(back.bind[0].queue, "am.ls.app.reader.late");
    assert_eq!(back.leaving.len(), 1);
    assert_eq!(back.leaving[0].departure, Departure::Drain);
}

#[test]
fn a_changed_delay_gets_a_new_queue_and_the_old_one_drains() {
    let before = layout().desired(&catalog(|_| {}));
    let after = layout().desired(&catalog(|doc| doc["data_queues"][0]["delay"] = "1m".into()));
    let p = plan(&after, &before, false);
    assert!(
        p.declare_queues
            .iter()
            .any(|q| q.name == "am.ls.app.reader.late.delay.60000ms")
    );
    assert_eq!(p.leaving.len(), 1);
    assert_eq!(
        p.leaving[0].queue.name,
        "am.ls.app.reader.late.delay.30000ms"
    );
    assert_eq!(p.leaving[0].departure, Departure::Drain);
}

#[test]
fn a_deleted_launch_setting_is_unbound_and_retired_after_its_hold() {
    let before = layout().desired(&catalog(|_| {}));
    let after = layout().desired(&catalog(|doc| {
        let i = ls_index(doc, "app.reader.asap");
        if let Some(a) = doc["launch_settings"].as_array_mut() {
            a.remove(i);
        }
    }));
    let p = plan(&after, &before, false);
    assert_eq!(
        p.unbind,
        [binding(
            "am.ls.app.reader.asap",
            "events",
            &[("tenant", "acme")]
        )]
    );
    assert_eq!(p.leaving.len(), 1);
    let leaving = &p.leaving[0];
    assert!(
        matches!(&leaving.departure, Departure::Retire { reason } if reason.contains("app.reader.asap"))
    );
    // Its retries may still be waiting (longest retry delay: 256 s).
    assert_eq!(leaving.queue.hold_ms(), 300_000);
}

#[test]
fn an_agent_moved_to_another_data_queue_leaves_no_binding_behind() {
    let before = layout().desired(&catalog(|_| {}));
    let after = layout().desired(&catalog(|doc| {
        if let Some(a) = doc["data_queues"].as_array_mut() {
            a.push(serde_json::json!({ "id": "other", "kind": "topic" }));
        }
        doc["agents"][0]["data_queue"] = "other".into();
    }));
    let p = plan(&after, &before, false);
    assert!(p.bind.contains(&binding(
        "am.ls.app.reader.asap",
        "other",
        &[("tenant", "acme")]
    )));
    assert!(p.unbind.contains(&binding(
        "am.ls.app.reader.asap",
        "events",
        &[("tenant", "acme")]
    )));
    // The subscription stays (same name), the Delayed one's old delay queue drains into it.
    assert!(
        !p.leaving
            .iter()
            .any(|l| l.queue.name == "am.ls.app.reader.asap")
    );
}

#[test]
fn a_deleted_data_queue_takes_its_exchanges_and_retires_its_queues() {
    let before = layout().desired(&catalog(|_| {}));
    let after = layout().desired(&catalog(|doc| {
        if let Some(a) = doc["data_queues"].as_array_mut() {
            a.remove(1);
        }
        if let Some(a) = doc["agents"].as_array_mut() {
            a.remove(1);
        }
        for id in ["app.worker.2", "app.worker.1"] {
            let i = ls_index(doc, id);
            if let Some(a) = doc["launch_settings"].as_array_mut() {
                a.remove(i);
            }
        }
    }));
    let p = plan(&after, &before, false);
    let deleted: Vec<&str> = p.delete_exchanges.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(deleted, ["am.dq.jobs.unrouted", "jobs"]);
    // Bindings of a deleted exchange go with it.
    assert!(p.unbind.is_empty());
    let mut leaving: Vec<&str> = p.leaving.iter().map(|l| l.queue.name.as_str()).collect();
    leaving.sort_unstable();
    assert_eq!(leaving, ["am.dq.jobs", "am.dq.jobs.unrouted"]);
    assert!(
        p.leaving
            .iter()
            .all(|l| matches!(l.departure, Departure::Retire { .. }))
    );
}

#[test]
fn an_exchange_declared_without_its_alternate_is_replaced_and_rebound() {
    let desired = layout().desired(&catalog(|_| {}));
    let mut old = desired.clone();
    if let Some(ex) = old.exchanges.get_mut("events") {
        ex.args.clear();
    }
    let p = plan(&desired, &old, false);
    assert_eq!(p.replace_exchanges.len(), 1);
    assert!(p.bind.iter().all(|b| b.exchange == "events"));
    assert_eq!(p.bind.len(), 2);
}

#[test]
fn objects_survive_a_json_round_trip() {
    let d = layout()
        .ephemeral(std::time::Duration::from_secs(60))
        .desired(&catalog(|_| {}));
    let text = serde_json::to_string(&d).expect("json");
    let back: BrokerObjects = serde_json::from_str(&text).expect("parse");
    assert_eq!(back, d);
    assert!(d.queues.values().all(|q| q.args.contains_key(arg::EXPIRES)));
}

#[test]
fn an_installation_of_version_1_nodes_loses_its_old_delay_queues() {
    let c = catalog(|_| {});
    let legacy = layout().legacy(&c);
    assert_eq!(
        legacy.queues.keys().collect::<Vec<_>>(),
        ["am.ls.app.reader.late.delay"]
    );
    let p = plan(&layout().desired(&c), &legacy, true);
    assert_eq!(
        p.unbind,
        [binding("am.ls.app.reader.late.delay", "events", &[])]
    );
    assert_eq!(p.leaving.len(), 1);
    assert_eq!(p.leaving[0].departure, Departure::Drain);
}
