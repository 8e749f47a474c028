use super::*;
use crate::read::dead_letters::DeadLetterFilter;

fn every_request() -> Vec<OperationRequest> {
    vec![
        OperationRequest::ReplayDeadLetters {
            selection: Selection::default(),
            canary: Some(10),
            rate_per_second: None,
        },
        OperationRequest::DeleteDeadLetters {
            selection: Selection {
                ids: vec![1, 2, 3],
                filter: DeadLetterFilter::default(),
            },
        },
        OperationRequest::RerunActivations {
            ids: vec![],
            filter: ActivationFilter {
                status: Some("failed".into()),
                ..ActivationFilter::default()
            },
            from_where_it_broke: true,
        },
        OperationRequest::InterruptActivations {
            ids: vec![Uuid::nil()],
            filter: ActivationFilter::default(),
        },
        OperationRequest::EnableLaunchSettings {
            ids: (1..=7).map(|i| format!("ls-{i}")).collect(),
        },
        OperationRequest::EnableScheduleGroups {
            ids: vec!["nightly".into()],
        },
        OperationRequest::ReplayUnrouted {
            data_queue: "orders".into(),
        },
        OperationRequest::ConsistencySweep {},
    ]
}

#[test]
fn a_requests_kind_is_the_word_its_tag_is_written_with() {
    let requests = every_request();
    for r in &requests {
        let json = serde_json::to_value(r).expect("serializes");
        assert_eq!(json["kind"], r.kind().as_str(), "{r:?}");
    }
    let kinds: Vec<OperationKind> = requests.iter().map(OperationRequest::kind).collect();
    assert_eq!(kinds, OperationKind::ALL, "one request of every kind");
}

#[test]
fn the_selection_reads_as_words() {
    let words: Vec<String> = every_request()
        .iter()
        .map(OperationRequest::selection)
        .collect();
    assert_eq!(
        words,
        [
            "dead letters matching no filter (all)",
            "3 selected dead letters",
            "activations matching status = failed, each from where it broke",
            "1 selected activations",
            "ls-1, ls-2, ls-3, ls-4, ls-5 and 2 more",
            "nightly",
            "unrouted messages of data queue orders",
            "every activation in progress",
        ]
    );
}

fn view(kind: &str, status: &str) -> OperationView {
    let at = DateTime::<Utc>::UNIX_EPOCH;
    OperationView {
        id: Uuid::nil(),
        kind: kind.into(),
        status: status.into(),
        requested_by: "ops".into(),
        total: 10,
        done: 4,
        failed: 1,
        errors: vec![],
        cancel_requested: false,
        request: None,
        created_at: at,
        started_at: None,
        finished_at: None,
        updated_at: at,
        replay_outcomes: None,
    }
}

#[test]
fn an_operation_is_active_until_it_finishes() {
    let active: Vec<bool> = ["queued", "running", "succeeded", "failed", "cancelled"]
        .iter()
        .map(|s| view("consistency-sweep", s).is_active())
        .collect();
    assert_eq!(active, [true, true, false, false, false]);
}

#[test]
fn the_title_says_what_it_does_and_an_unknown_kind_reads_as_its_word() {
    assert_eq!(
        view("replay-unrouted", "queued").title(),
        "Replay unrouted messages"
    );
    assert_eq!(view("defragment", "queued").title(), "defragment");
    assert_eq!(view("defragment", "queued").selection(), "");
}
