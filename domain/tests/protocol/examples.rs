//! Golden example messages (`protocol/examples/<type>[-<case>].json`): one or more of every
//! message type, as this side writes them. Each must read back as the same message, so a
//! change of the wire format shows up here as a changed file.

use crate::{agrees, bless, pretty, protocol_dir};
use am_domain::{
    HumanDuration,
    catalog::{
        ClassifierValue, Concurrency, DataQueueKind, DeadLetterPolicy, DeadLetterSettings,
        InputKind, LaunchKind, MessageFilter, OverlapPolicy, RetryPolicy,
    },
    params::{ParamSpec, ParamType},
    policy::retry_ladder,
    wire::{
        self, ActivationCounters, ActivationEvent, ActivationReport, ActivationResult,
        BreakerTripped, Counters, ErrorSummary, FailureReport, Heartbeat, Interrupt, Launch,
        Publication, PublishedAgent, PublishedClassifier, RunningLaunchSetting, Stop, Subscription,
        ToManager, ToNode, replay::ReplayProcessed, replay::ReplayToken,
    },
};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

fn at() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-06T10:15:30.250Z")
        .expect("time")
        .with_timezone(&Utc)
}

const ACTIVATION: &str = "0193a5f2-7c1e-7d8a-9c1e-2f1e3c4b5a69";

fn standalone_launch() -> Launch {
    Launch {
        activation_id: ACTIVATION.into(),
        launch_setting: "billing.export.nightly".into(),
        agent: "export".into(),
        kind: LaunchKind::Scheduled,
        parameters: serde_json::Map::from_iter([
            ("limit".to_owned(), json!(500)),
            ("since".to_owned(), json!("2026-12-01")),
            ("sites".to_owned(), json!(["par", "lyo"])),
        ]),
        fencing_token: 1,
        overlap: OverlapPolicy::Skip,
        retry: RetryPolicy::default(),
        retry_steps: Vec::new(),
        unavailable_for: HumanDuration::from_secs(24 * 3600),
        dead_letter: DeadLetterSettings::default(),
        failure_threshold: 10,
        subscription: None,
        idle_timeout: None,
        max_run_time: Some(HumanDuration::from_secs(3600)),
    }
}

fn stream_launch() -> Launch {
    let retry = RetryPolicy {
        initial_delay: HumanDuration::from_millis(500),
        multiplier: 3.0,
        max_delay: HumanDuration::from_secs(60),
        max_deliveries: 5,
    };
    Launch {
        activation_id: "0193a5f2-8d2f-7e9b-8a0d-3a2b4c5d6e7f".into(),
        launch_setting: "billing.invoices.mail".into(),
        agent: "mail-invoice".into(),
        kind: LaunchKind::Stream,
        parameters: serde_json::Map::new(),
        fencing_token: 3,
        overlap: OverlapPolicy::Allow,
        retry_steps: retry_ladder(&retry),
        retry,
        unavailable_for: HumanDuration::from_secs(2 * 3600),
        dead_letter: DeadLetterSettings {
            policy: DeadLetterPolicy::Park,
            park_cooldown: HumanDuration::from_secs(600),
            notify_threshold: None,
            forward_to: None,
        },
        failure_threshold: 6,
        subscription: Some(Subscription {
            data_queue: "invoices".into(),
            address: "billing.invoices".into(),
            kind: DataQueueKind::Topic,
            filter: MessageFilter {
                headers: [("country".to_owned(), "fr".to_owned())].into(),
            },
            delay: None,
        }),
        idle_timeout: None,
        max_run_time: None,
    }
}

fn activation(event: ActivationEvent) -> ToManager {
    ToManager::Activation(ActivationReport {
        application: "billing".into(),
        host: "app-01".into(),
        activation_id: ACTIVATION.into(),
        launch_setting: "billing.export.nightly".into(),
        fencing_token: 1,
        event,
        at: at(),
    })
}

fn commands() -> Vec<(&'static str, ToNode)> {
    vec![
        ("launch", ToNode::Launch(standalone_launch())),
        ("launch-stream", ToNode::Launch(stream_launch())),
        (
            "stop",
            ToNode::Stop(Stop {
                launch_setting: "billing.invoices.mail".into(),
                reason: "disabled by operator alice".into(),
            }),
        ),
        (
            "interrupt",
            ToNode::Interrupt(Interrupt {
                activation_id: ACTIVATION.into(),
                reason: "max run time 1h exceeded".into(),
                up_to_token: Some(1),
            }),
        ),
    ]
}

fn publication() -> ToManager {
    let mut limit = ParamSpec::new("limit", ParamType::Integer)
        .title("Rows per batch")
        .required();
    limit.default = Some(json!(500));
    limit.min = Some(json!(1));
    ToManager::Publication(Publication {
        application: "billing".into(),
        host: "app-01".into(),
        version: "4.2.0".into(),
        capacity: 8,
        agents: vec![
            PublishedAgent {
                id: "export".into(),
                title: "Nightly export".into(),
                input: InputKind::Standalone,
                parameters: vec![
                    limit,
                    ParamSpec::new("since", ParamType::Date),
                    ParamSpec::classifier("sites", "sites").array(),
                ],
                suggested_data_queue: None,
                suggested_concurrency: Some(Concurrency::Any),
                suggested_overlap: Some(OverlapPolicy::Skip),
            },
            PublishedAgent {
                id: "mail-invoice".into(),
                title: "Mail an invoice".into(),
                input: InputKind::Messages,
                parameters: Vec::new(),
                suggested_data_queue: Some("invoices".into()),
                suggested_concurrency: Some(Concurrency::Many),
                suggested_overlap: None,
            },
        ],
        classifiers: vec![PublishedClassifier {
            name: "sites".into(),
            title: "Sites".into(),
            values: vec![
                ClassifierValue {
                    code: "par".into(),
                    label: "Paris".into(),
                },
                ClassifierValue {
                    code: "lyo".into(),
                    label: "Lyon".into(),
                },
            ],
        }],
        protocol: wire::PROTOCOL_VERSION,
    })
}

fn reports() -> Vec<(&'static str, ToManager)> {
    let counters = Counters {
        processed: 120,
        failed: 3,
        retried: 2,
        dead_lettered: 1,
    };
    vec![
        ("publication", publication()),
        (
            "heartbeat",
            ToManager::Heartbeat(Heartbeat {
                application: "billing".into(),
                host: "app-01".into(),
                capacity: 8,
                running: vec![RunningLaunchSetting {
                    launch_setting: "billing.invoices.mail".into(),
                    activations: vec!["0193a5f2-8d2f-7e9b-8a0d-3a2b4c5d6e7f".into()],
                    counters,
                    by_activation: vec![ActivationCounters {
                        activation_id: "0193a5f2-8d2f-7e9b-8a0d-3a2b4c5d6e7f".into(),
                        counters,
                    }],
                }],
                load: Some(0.42),
                dropped_reports: 0,
                quarantined: 0,
                at: at(),
            }),
        ),
        ("activation-accepted", activation(ActivationEvent::Accepted)),
        (
            "activation-skipped",
            activation(ActivationEvent::Skipped {
                reason: "overlap skip: activation 0193a5f2-6b0d is still running".into(),
            }),
        ),
        ("activation-started", activation(ActivationEvent::Started)),
        (
            "activation-progress",
            activation(ActivationEvent::Progress {
                done: Some(200),
                total: Some(500),
                message: "exported 200 of 500 rows".into(),
            }),
        ),
        (
            "activation",
            activation(ActivationEvent::Finished {
                result: ActivationResult::Failed,
                error: Some("database timeout after 30s".into()),
                counters: Some(Counters::default()),
            }),
        ),
        (
            "failure",
            ToManager::Failure(FailureReport {
                application: "billing".into(),
                host: "app-01".into(),
                activation_id: "0193a5f2-8d2f-7e9b-8a0d-3a2b4c5d6e7f".into(),
                launch_setting: "billing.invoices.mail".into(),
                agent: "mail-invoice".into(),
                error_type: "SmtpError".into(),
                message: "550 mailbox unavailable".into(),
                details: "at mail::send (mail.rs:42)".into(),
                data_message_id: Some("inv-2026-0042".into()),
                attempt: 2,
                temporary: false,
                disposition: Some(wire::disposition::RETRY.into()),
                at: at(),
                report_id: Some("0193a5f2-9e30-7f0c-b1e2-4b3c5d6e7f80".into()),
                replay: Some(ReplayToken {
                    dead_letter: 42,
                    replay: 1,
                }),
            }),
        ),
        (
            "breaker-tripped",
            ToManager::BreakerTripped(BreakerTripped {
                application: "billing".into(),
                host: "app-01".into(),
                activation_id: "0193a5f2-8d2f-7e9b-8a0d-3a2b4c5d6e7f".into(),
                launch_setting: "billing.invoices.mail".into(),
                consecutive_failures: 6,
                same_type_failures: 2,
                last_errors: vec![ErrorSummary {
                    error_type: "SmtpError".into(),
                    message: "550 mailbox unavailable".into(),
                }],
                at: at(),
            }),
        ),
        (
            "replay-processed",
            ToManager::ReplayProcessed(ReplayProcessed {
                application: "billing".into(),
                host: "app-01".into(),
                activation_id: "0193a5f2-8d2f-7e9b-8a0d-3a2b4c5d6e7f".into(),
                launch_setting: "billing.invoices.mail".into(),
                replay: ReplayToken {
                    dead_letter: 42,
                    replay: 1,
                },
                at: at(),
            }),
        ),
    ]
}

fn as_json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("JSON")
}

#[test]
fn the_golden_examples_are_what_this_side_writes_and_reads() {
    let dir = protocol_dir().join("examples");
    let mut mismatches = Vec::new();
    let mut names = Vec::new();
    for (name, command) in commands() {
        let written = as_json(&wire::encode_command(&command));
        agrees(
            &dir.join(format!("{name}.json")),
            &pretty(&written),
            &mut mismatches,
        );
        let read: ToNode = wire::decode(written.to_string().as_bytes()).expect(name);
        assert_eq!(read, command, "{name} reads back as written");
        names.push(name);
    }
    for (name, report) in reports() {
        let written = as_json(&wire::encode_report(&report));
        agrees(
            &dir.join(format!("{name}.json")),
            &pretty(&written),
            &mut mismatches,
        );
        let read: ToManager = wire::decode(written.to_string().as_bytes()).expect(name);
        assert_eq!(read, report, "{name} reads back as written");
        names.push(name);
    }
    if !bless() {
        for entry in std::fs::read_dir(&dir).expect("protocol/examples exists") {
            let file = entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned();
            assert!(
                names.iter().any(|n| format!("{n}.json") == file),
                "protocol/examples/{file} is no example any more"
            );
        }
    }
    assert!(
        mismatches.is_empty(),
        "the wire format changed for {mismatches:?}; if deliberate, run with AM_BLESS=1"
    );
}

/// Every object of `value` gets a field nobody knows, whose value is itself an object with one:
/// what a manager or node of a later release may send. Free-form maps (a launch's parameters,
/// a filter's headers, a parameter's default and bounds) are left alone: any key is data there.
fn with_unknown_fields(value: &mut Value) {
    const DATA: [&str; 5] = ["parameters", "headers", "default", "min", "max"];
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if !DATA.contains(&key.as_str()) {
                    with_unknown_fields(child);
                }
            }
            map.insert(
                "x_later_release".into(),
                json!({"nested": {"deeper": [1, 2]}}),
            );
        }
        Value::Array(items) => items.iter_mut().for_each(with_unknown_fields),
        _ => {}
    }
}

#[test]
fn a_later_release_adding_fields_at_any_depth_and_a_newer_version_is_still_read() {
    for (name, command) in commands() {
        let mut newer = as_json(&wire::encode_command(&command));
        with_unknown_fields(&mut newer);
        newer["v"] = json!(wire::PROTOCOL_VERSION + 7);
        let read: ToNode = wire::decode(newer.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("{name} from a later release: {e}"));
        assert_eq!(read, command, "{name}");
    }
    for (name, report) in reports() {
        let mut newer = as_json(&wire::encode_report(&report));
        with_unknown_fields(&mut newer);
        newer["v"] = json!(wire::PROTOCOL_VERSION + 7);
        let read: ToManager = wire::decode(newer.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("{name} from a later release: {e}"));
        assert_eq!(read, report, "{name}");
    }
}
