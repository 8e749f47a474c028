use super::*;
use serde_json::json;

fn launch() -> Launch {
    Launch {
        activation_id: "0b8f6c1e-7d8a-4c1e-9d7a-2f1e3c4b5a69".into(),
        launch_setting: "billing.export.1".into(),
        agent: "export".into(),
        kind: LaunchKind::Stream,
        parameters: serde_json::Map::from_iter([("limit".to_owned(), json!(5))]),
        fencing_token: 3,
        overlap: OverlapPolicy::Skip,
        retry: RetryPolicy::default(),
        retry_steps: crate::policy::retry_ladder(&RetryPolicy::default()),
        unavailable_for: crate::catalog::default_unavailable_for(),
        dead_letter: DeadLetterSettings::default(),
        failure_threshold: 10,
        subscription: Some(Subscription {
            data_queue: "invoices".into(),
            address: "invoices".into(),
            kind: DataQueueKind::Queue,
            filter: MessageFilter::default(),
            delay: None,
        }),
        idle_timeout: None,
        max_run_time: None,
    }
}

#[test]
fn commands_round_trip_with_version_and_type() {
    let msg = ToNode::Launch(launch());
    let bytes = encode_command(&msg);
    let value: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(value["v"], json!(COMMAND_VERSION));
    assert_eq!(value["type"], json!("launch"));
    assert_eq!(value["retry"]["initial_delay"], json!("1s"));
    assert_eq!(decode::<ToNode>(&bytes), Ok(msg));
}

#[test]
fn minimal_launch_gets_defaults() {
    let bytes = br#"{"v":1,"type":"launch","activation_id":"a1","launch_setting":"x.1",
        "agent":"sleep","kind":"scheduled","fencing_token":1}"#;
    let ToNode::Launch(l) = decode::<ToNode>(bytes).expect("valid") else {
        panic!("not a launch");
    };
    assert_eq!(l.overlap, OverlapPolicy::Allow);
    assert_eq!(l.failure_threshold, 10);
    assert_eq!(l.retry.max_deliveries, 10);
    assert!(l.subscription.is_none());
}

#[test]
fn reports_round_trip() {
    let at = DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
        .expect("time")
        .with_timezone(&Utc);
    let reports = [
        ToManager::Activation(ActivationReport {
            application: "billing".into(),
            host: "h1".into(),
            activation_id: "a1".into(),
            launch_setting: "x.1".into(),
            fencing_token: 2,
            event: ActivationEvent::Finished {
                result: ActivationResult::Failed,
                error: Some("boom".into()),
                counters: None,
            },
            at,
        }),
        ToManager::BreakerTripped(BreakerTripped {
            application: "billing".into(),
            host: "h1".into(),
            activation_id: "a1".into(),
            launch_setting: "x.1".into(),
            consecutive_failures: 3,
            same_type_failures: 3,
            last_errors: vec![ErrorSummary {
                error_type: "Io".into(),
                message: "disk".into(),
            }],
            at,
        }),
        ToManager::Heartbeat(Heartbeat {
            application: "billing".into(),
            host: "h1".into(),
            capacity: 4,
            running: vec![RunningLaunchSetting {
                launch_setting: "x.1".into(),
                activations: vec!["a1".into()],
                counters: Counters {
                    processed: 5,
                    ..Counters::default()
                },
                by_activation: vec![ActivationCounters {
                    activation_id: "a1".into(),
                    counters: Counters {
                        processed: 2,
                        ..Counters::default()
                    },
                }],
            }],
            load: Some(0.5),
            dropped_reports: 0,
            quarantined: 1,
            at,
        }),
    ];
    for r in reports {
        let bytes = encode(&r);
        assert_eq!(decode::<ToManager>(&bytes).as_ref(), Ok(&r));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&encode(&ToManager::Activation(ActivationReport {
            application: "a".into(),
            host: "h".into(),
            activation_id: "a1".into(),
            launch_setting: "x.1".into(),
            fencing_token: 1,
            event: ActivationEvent::Skipped {
                reason: "overlap".into(),
            },
            at,
        })))
        .expect("json");
    assert_eq!(v["type"], json!("activation"));
    assert_eq!(v["event"]["event"], json!("skipped"));
}

#[test]
fn bad_input_is_classified() {
    assert!(matches!(
        decode::<ToNode>(b"not json"),
        Err(WireError::Malformed(_))
    ));
    assert!(matches!(
        decode::<ToNode>(b"[1]"),
        Err(WireError::Malformed(_))
    ));
    assert!(matches!(
        decode::<ToNode>(br#"{"type":"stop","launch_setting":"x"}"#),
        Err(WireError::Malformed(_))
    ));
    assert_eq!(
        decode::<ToNode>(br#"{"v":40,"type":"stop","launch_setting":"x","why":{"a":1}}"#),
        Ok(ToNode::Stop(Stop {
            launch_setting: "x".into(),
            reason: String::new()
        })),
        "a newer version is read as far as it is known"
    );
    assert_eq!(
        decode::<ToNode>(br#"{"v":0,"type":"stop","launch_setting":"x"}"#),
        Err(WireError::UnsupportedVersion { found: 0 })
    );
    assert!(matches!(
        decode::<ToNode>(br#"{"v":1,"type":"explode"}"#),
        Err(WireError::Invalid(_))
    ));
    assert!(matches!(
        decode::<ToNode>(br#"{"v":1,"type":"interrupt"}"#),
        Err(WireError::Invalid(_))
    ));
}

#[test]
fn names_are_prefixed() {
    let n = names::Names::new("t-1");
    assert_eq!(n.control_exchange(), "t-1.control");
    assert_eq!(n.node_queue("billing", "h1"), "t-1.node.billing.h1");
    assert_eq!(n.reports_queue(), "t-1.reports");
    assert_eq!(n.dead_letter_queue(), "t-1.dead-letters");
    assert_eq!(
        n.delay_queue("x.1", std::time::Duration::from_secs(30)),
        "t-1.ls.x.1.delay.30000ms"
    );
    assert_eq!(n.legacy_delay_queue("x.1"), "t-1.ls.x.1.delay");
    assert_eq!(n.shared_queue("jobs"), "t-1.dq.jobs");
    assert_eq!(n.unrouted("jobs"), "t-1.dq.jobs.unrouted");
    assert_eq!(names::Names::default().prefix(), "am");
}

/// Version 2 nodes and managers still talk to version 1 ones: commands are written as version
/// 1, both versions are read, and what version 1 did not send takes its default.
#[test]
fn version_one_peers_keep_working() {
    let stop = ToNode::Stop(Stop {
        launch_setting: "x".into(),
        reason: "r".into(),
    });
    let bytes = encode_command(&stop);
    let value: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(value["v"], 1, "commands stay readable by version-1 nodes");
    assert_eq!(decode::<ToNode>(&bytes), Ok(stop));

    let v1_failure = br#"{"v":1,"type":"failure","application":"a","host":"h",
        "activation_id":"00000000-0000-0000-0000-000000000001","launch_setting":"ls",
        "agent":"ag","error_type":"E","message":"m","attempt":1,"at":"2026-11-24T00:00:00Z"}"#;
    match decode::<ToManager>(v1_failure) {
        Ok(ToManager::Failure(f)) => {
            assert_eq!(f.report_id, None);
            assert!(!f.temporary);
        }
        other => panic!("a version-1 failure report decodes: {other:?}"),
    }
    let v1_publication = br#"{"v":1,"type":"publication","application":"a","host":"h",
        "version":"1.0","capacity":2,"agents":[],"classifiers":[]}"#;
    match decode::<ToManager>(v1_publication) {
        Ok(ToManager::Publication(p)) => assert_eq!(p.protocol, 1),
        other => panic!("a version-1 publication decodes: {other:?}"),
    }
    let written: serde_json::Value =
        serde_json::from_slice(&encode_report(&ToManager::Heartbeat(Heartbeat {
            application: "a".into(),
            host: "h".into(),
            capacity: 1,
            running: vec![],
            load: None,
            dropped_reports: 0,
            quarantined: 0,
            at: chrono::Utc::now(),
        })))
        .expect("json");
    assert_eq!(
        written["v"], REPORT_VERSION,
        "reports stay readable by version-2 managers, which refuse a newer `v`"
    );
}

/// A launch whose words this node does not know (a policy of a later release) cannot be run,
/// but its head still says which activation to answer.
#[test]
fn a_launch_this_side_cannot_read_still_has_a_head() {
    let mut value: serde_json::Value =
        serde_json::from_slice(&encode_command(&ToNode::Launch(launch()))).expect("json");
    value["overlap"] = "queue-behind".into();
    let bytes = value.to_string().into_bytes();
    assert!(matches!(
        decode::<ToNode>(&bytes),
        Err(WireError::Invalid(_))
    ));
    let head = LaunchHead::of(&bytes).expect("a launch");
    assert_eq!(head.activation_id, launch().activation_id);
    assert_eq!(head.fencing_token, 3);
}

#[test]
fn a_launch_retries_through_the_managers_ladder_else_the_formula() {
    let mut l = launch();
    l.retry_steps = vec![crate::policy::RetryStep {
        attempt: 1,
        delay_ms: 1234,
    }];
    assert_eq!(
        l.retry_delay(5),
        std::time::Duration::from_millis(1234),
        "the manager's ladder wins"
    );
    l.retry_steps.clear();
    assert_eq!(
        l.retry_delay(3),
        crate::policy::retry_delay(&l.retry, 3),
        "an older manager sends none"
    );
}
