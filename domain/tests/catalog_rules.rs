//! Every catalog rule (docs/concepts.md, Catalog rules, and the production rules beside it),
//! each with a passing and a failing case, on a small valid catalog that each test changes.

use am_domain::{
    FieldError, HumanDuration,
    catalog::{
        Catalog, ClassifierValue, Concurrency, DeadLetterPolicy, InputKind, LaunchKind,
        MessageFilter, StreamMode,
    },
    params::{ParamSpec, ParamType},
    usage::{EntityRef, usages},
    validate::{entity_path, validate_catalog},
};
use serde_json::json;

#[path = "catalog_rules/entities.rs"]
mod entities;
#[path = "catalog_rules/launch.rs"]
mod launch;
#[path = "catalog_rules/limits.rs"]
mod limits;
#[path = "catalog_rules/usage.rs"]
mod usage;

/// Two applications, two pools, two data queues (one with a delay), a classifier, a messages
/// agent with classifier parameters, a standalone agent, stream and scheduled launch settings,
/// and two schedule groups.
fn fixture() -> Catalog {
    serde_json::from_value(json!({
        "version": 1,
        "applications": [
            { "id": "billing", "title": "Billing", "default_pool": "p1",
              "webhook_url": "https://hooks.example.org/billing" },
            { "id": "crm", "default_pool": "p2" }
        ],
        "pools": [
            { "id": "p1", "hosts": ["app-01", "app-02.example.org"] },
            { "id": "p2", "hosts": ["crm-01"] }
        ],
        "data_queues": [
            { "id": "invoices", "kind": "queue" },
            { "id": "events", "kind": "topic", "address": "billing.events", "delay": "5m" }
        ],
        "classifiers": [
            { "application": "billing", "name": "organisations", "values": [
                { "code": "acme", "label": "Acme" },
                { "code": "globex", "label": "Globex" },
                { "code": "initech", "label": "Initech" }
            ] }
        ],
        "agents": [
            { "application": "billing", "id": "invoice-export", "title": "Invoice export",
              "input": "messages", "data_queue": "events", "concurrency": "ANY", "overlap": "skip",
              "parameters": [
                  { "name": "org_id", "type": "classifier(organisations)", "required": true },
                  { "name": "orgs", "type": "classifier(organisations)", "array": true },
                  { "name": "limit", "type": "integer", "min": 1, "max": 1000, "default": 100 }
              ] },
            { "application": "billing", "id": "cleanup", "input": "standalone",
              "concurrency": "ANY", "overlap": "allow",
              "parameters": [ { "name": "older_than", "type": "duration", "default": "7days" } ] },
            { "application": "billing", "id": "reconcile", "input": "standalone",
              "concurrency": "MANY", "overlap": "interrupt" },
            { "application": "crm", "id": "sync", "input": "messages", "data_queue": "invoices",
              "concurrency": "MANY", "overlap": "allow" }
        ],
        "launch_settings": [
            { "id": "billing.invoice-export.stream", "application": "billing", "agent": "invoice-export",
              "kind": "stream", "stream_mode": "delayed", "filter": { "headers": { "type": "invoice" } },
              "parameters": { "org_id": "acme", "orgs": ["acme", "globex"] } },
            { "id": "billing.invoice-export.nightly", "application": "billing", "agent": "invoice-export",
              "kind": "scheduled", "pool": "p1", "idle_timeout": "5m",
              "parameters": { "org_id": "globex", "limit": 10 } },
            { "id": "billing.cleanup.nightly", "application": "billing", "agent": "cleanup",
              "kind": "scheduled", "failure_threshold": 3 },
            { "id": "billing.reconcile.hourly", "application": "billing", "agent": "reconcile",
              "kind": "scheduled" },
            { "id": "crm.sync.1", "application": "crm", "agent": "sync", "kind": "stream",
              "webhook_url": "http://crm.example.org/hook" }
        ],
        "schedule_groups": [
            { "id": "nightly", "application": "billing", "cron": "0 2 * * *", "time_zone": "Europe/Paris", "expect_success_within": "26h",
              "members": ["billing.invoice-export.nightly", "billing.cleanup.nightly"] },
            { "id": "hourly", "application": "billing", "cron": "0 0 * * * ?",
              "members": ["billing.reconcile.hourly"] }
        ]
    }))
    .expect("fixture deserializes")
}

fn errors(catalog: &Catalog) -> Vec<FieldError> {
    validate_catalog(catalog)
        .err()
        .map(|e| e.0)
        .unwrap_or_default()
}

#[track_caller]
fn assert_valid(catalog: &Catalog) {
    let errors = errors(catalog);
    assert!(errors.is_empty(), "expected no errors, got {errors:#?}");
}

/// Asserts an error at exactly `path` whose message contains `needle`.
#[track_caller]
fn assert_error(catalog: &Catalog, path: &str, needle: &str) {
    let errors = errors(catalog);
    assert!(
        errors
            .iter()
            .any(|e| e.path == path && e.message.contains(needle)),
        "expected `{path}: …{needle}…` among {errors:#?}"
    );
}

/// An entity written as JSON, the way an import file would hold it.
fn from_json<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("entity deserializes")
}

/// A scheduled launch setting with no parameters.
fn scheduled(id: &str, application: &str, agent: &str) -> am_domain::catalog::LaunchSetting {
    from_json(json!({ "id": id, "application": application, "agent": agent, "kind": "scheduled" }))
}

fn group(id: &str, application: &str, members: &[&str]) -> am_domain::catalog::ScheduleGroup {
    from_json(
        json!({ "id": id, "application": application, "cron": "0 3 * * SUN", "members": members }),
    )
}

/// Makes `crm/sync` a standalone agent whose launch setting runs in a `crm` group.
fn crm_sync_standalone(c: &mut Catalog) {
    c.agents[3].input = InputKind::Standalone;
    c.agents[3].data_queue = None;
    c.launch_settings[4].kind = LaunchKind::Scheduled;
    c.schedule_groups
        .push(group("crm-weekly", "crm", &["crm.sync.1"]));
}

fn with(change: impl FnOnce(&mut Catalog)) -> Catalog {
    let mut c = fixture();
    change(&mut c);
    c
}

#[test]
fn the_fixture_is_valid() {
    assert_valid(&fixture());
}

// ---- document ----

#[test]
fn version_must_be_the_supported_one() {
    assert_valid(&with(|c| {
        c.version = am_domain::catalog::CATALOG_FORMAT_VERSION
    }));
    assert_error(&with(|c| c.version = 99), "version", "99 is not supported");
}

#[test]
fn serde_round_trip_keeps_the_catalog() {
    let catalog = fixture();
    let text = serde_json::to_string_pretty(&catalog).expect("serializes");
    let back: Catalog = serde_json::from_str(&text).expect("deserializes");
    assert_eq!(back, catalog);
}

#[test]
fn unknown_fields_are_rejected() {
    let mut value = serde_json::to_value(fixture()).expect("serializes");
    assert!(serde_json::from_value::<Catalog>(value.clone()).is_ok());
    value["launch_settings"][0]["paramters"] = json!({});
    let err = serde_json::from_value::<Catalog>(value)
        .expect_err("typo rejected")
        .to_string();
    assert!(err.contains("paramters"), "{err}");
    let top = json!({ "version": 1, "agentz": [] });
    assert!(serde_json::from_value::<Catalog>(top).is_err());
    let nested = json!({ "applications": [{ "id": "a", "default_pool": "p", "colour": "red" }] });
    assert!(serde_json::from_value::<Catalog>(nested).is_err());
}

// ---- reporting ----

#[test]
fn every_mistake_is_reported_with_its_path() {
    let catalog = with(|c| {
        c.applications[1].default_pool = "p9".into();
        c.agents[3].data_queue = None;
        c.launch_settings[0]
            .parameters
            .insert("org_id".into(), json!("x"));
        c.launch_settings[2].failure_threshold = 0;
        c.schedule_groups[0].cron = "0 0 32 * *".into();
        c.schedule_groups[0].members.push("ghost".into());
    });
    let errors = validate_catalog(&catalog).expect_err("invalid");
    let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "applications[1].default_pool: pool 'p9' does not exist",
            "launch_settings[0].parameters.org_id: value 'x' is not in classifier 'organisations'",
            "launch_settings[2].failure_threshold: must be at least 1, got 0",
            "launch_settings[4].agent: agent 'crm/sync' needs a data queue: pick one on the agent before it can have launch settings",
            "schedule_groups[0].cron: `0 0 32 * *`: day of month must be 1–31, got 32",
            "schedule_groups[0].members[2]: launch setting 'ghost' does not exist (in the API, create the group without it, then save the launch setting with `?groups=nightly`)",
        ]
    );
}

#[test]
fn a_dead_mans_switch_window_is_between_a_minute_and_a_year_and_a_day() {
    let c = with(|c| {
        c.schedule_groups[0].expect_success_within = Some("30s".parse().expect("duration"))
    });
    assert_error(
        &c,
        "schedule_groups[0].expect_success_within",
        "at least 1m",
    );
    let c = with(|c| {
        c.schedule_groups[0].expect_success_within = Some("400days".parse().expect("duration"));
    });
    assert_error(
        &c,
        "schedule_groups[0].expect_success_within",
        "at most 366days",
    );
    assert_valid(&with(|c| {
        c.schedule_groups[0].expect_success_within = Some("1m".parse().expect("duration"));
    }));
}

#[test]
fn a_channel_chooses_each_event_once_and_never_test() {
    use am_domain::notify::Event;
    let c = with(|c| {
        c.applications[0].channels.webhook_events =
            vec![Event::BreakerTripped, Event::BreakerTripped];
        c.launch_settings[0].channels.email_events = vec![Event::Test];
    });
    assert_error(
        &c,
        "applications[0].webhook_events[1]",
        "already chosen at applications[0].webhook_events[0]",
    );
    assert_error(&c, "launch_settings[0].email_events[0]", "Send test always");
    assert_valid(&with(|c| {
        c.applications[0].channels.email_events = vec![Event::NodeLost, Event::OperationFinished];
    }));
}
