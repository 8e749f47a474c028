use super::*;
use crate::{
    catalog::{
        Application, ClassifierValue, DataQueue, DataQueueKind, LaunchKind, LaunchSetting, Pool,
        StreamMode,
    },
    params::ParamType,
    wire::PublishedClassifier,
};
use serde_json::json;

fn base() -> Catalog {
    let mut c = Catalog::new();
    c.pools.push(Pool {
        id: "p".into(),
        title: String::new(),
        hosts: vec!["h1".into()],
    });
    c.applications.push(Application {
        id: "billing".into(),
        title: String::new(),
        default_pool: "p".into(),
        channels: Default::default(),
    });
    c.data_queues.push(DataQueue {
        id: "invoices".into(),
        title: String::new(),
        kind: DataQueueKind::Queue,
        address: None,
        delay: None,
    });
    c
}

fn org_param() -> ParamSpec {
    ParamSpec::new("org", ParamType::Classifier("orgs".into()))
}

fn orgs(codes: &[&str]) -> PublishedClassifier {
    PublishedClassifier {
        name: "orgs".into(),
        title: "Organisations".into(),
        values: codes
            .iter()
            .map(|c| ClassifierValue {
                code: (*c).into(),
                label: c.to_uppercase(),
            })
            .collect(),
    }
}

fn export(parameters: Vec<ParamSpec>) -> PublishedAgent {
    PublishedAgent {
        id: "export".into(),
        title: "Export".into(),
        input: InputKind::Messages,
        parameters,
        suggested_data_queue: Some("invoices".into()),
        suggested_concurrency: Some(Concurrency::Many),
        suggested_overlap: Some(OverlapPolicy::Skip),
    }
}

fn publication(agents: Vec<PublishedAgent>, classifiers: Vec<PublishedClassifier>) -> Publication {
    Publication {
        application: "billing".into(),
        host: "h1".into(),
        version: "1.0".into(),
        capacity: 4,
        protocol: crate::wire::PROTOCOL_VERSION,
        agents,
        classifiers,
    }
}

fn stream(id: &str, parameters: serde_json::Value) -> LaunchSetting {
    let serde_json::Value::Object(parameters) = parameters else {
        panic!("parameters must be an object");
    };
    LaunchSetting {
        id: id.into(),
        title: String::new(),
        application: "billing".into(),
        agent: "export".into(),
        kind: LaunchKind::Stream,
        enabled: true,
        pool: None,
        parameters,
        stream_mode: Some(StreamMode::Asap),
        filter: None,
        failure_threshold: 10,
        retry: Default::default(),
        unavailable_for: crate::catalog::default_unavailable_for(),
        dead_letter: Default::default(),
        recovery: Default::default(),
        idle_timeout: None,
        channels: Default::default(),
        notify_on_failure: false,
    }
}

#[test]
fn a_first_publication_creates_agents_with_the_suggestions_and_the_classifiers() {
    let p = publication(vec![export(vec![org_param()])], vec![orgs(&["acme"])]);
    let m = merge(&base(), &p);
    assert_eq!(m.refused, vec![]);
    let a = m.catalog.agent("billing", "export").expect("created");
    assert_eq!(a.title, "Export");
    assert_eq!(a.data_queue.as_deref(), Some("invoices"));
    assert_eq!(a.concurrency, Concurrency::Many);
    assert_eq!(a.overlap, OverlapPolicy::Skip);
    assert_eq!(a.parameters, vec![org_param()]);
    let c = m.catalog.classifier("billing", "orgs").expect("classifier");
    assert_eq!(c.values.len(), 1);
    assert!(validate_catalog(&m.catalog).is_ok());
    assert_eq!(merge(&m.catalog, &p).catalog, m.catalog, "idempotent");
}

#[test]
fn without_suggestions_a_new_agent_gets_the_defaults() {
    let mut pa = export(vec![]);
    pa.input = InputKind::Standalone;
    pa.suggested_concurrency = None;
    pa.suggested_overlap = None;
    let m = merge(&base(), &publication(vec![pa], vec![]));
    let a = m.catalog.agent("billing", "export").expect("created");
    assert_eq!(
        (a.concurrency, a.overlap, a.data_queue.clone()),
        (DEFAULT_CONCURRENCY, DEFAULT_OVERLAP, None)
    );
}

#[test]
fn later_publications_keep_what_operators_own() {
    let mut c = base();
    c.data_queues.push(DataQueue {
        id: "other".into(),
        title: String::new(),
        kind: DataQueueKind::Topic,
        address: None,
        delay: None,
    });
    let first = merge(&c, &publication(vec![export(vec![])], vec![])).catalog;
    let mut operated = first.clone();
    let a = operated
        .agents
        .iter_mut()
        .find(|a| a.id == "export")
        .expect("agent");
    a.concurrency = Concurrency::Any;
    a.overlap = OverlapPolicy::Interrupt;
    a.data_queue = Some("other".into());

    let mut newer = export(vec![ParamSpec::new("limit", ParamType::Integer)]);
    newer.title = "Export v2".into();
    let m = merge(&operated, &publication(vec![newer], vec![]));
    assert_eq!(m.refused, vec![]);
    let a = m.catalog.agent("billing", "export").expect("agent");
    assert_eq!(a.title, "Export v2");
    assert_eq!(a.parameters.len(), 1);
    assert_eq!(a.concurrency, Concurrency::Any);
    assert_eq!(a.overlap, OverlapPolicy::Interrupt);
    assert_eq!(a.data_queue.as_deref(), Some("other"));
}

#[test]
fn a_schema_that_rejects_saved_parameters_is_refused_and_the_rest_is_taken() {
    let p1 = publication(
        vec![export(vec![org_param()])],
        vec![orgs(&["acme", "globex"])],
    );
    let mut c = merge(&base(), &p1).catalog;
    c.launch_settings
        .push(stream("billing.export.1", json!({"org": "acme"})));
    assert!(validate_catalog(&c).is_ok());

    // v2 renames the parameter and adds a classifier value: the value goes in, the schema not.
    let mut renamed = org_param();
    renamed.name = "organisation".into();
    let mut v2 = export(vec![renamed]);
    v2.title = "Export v2".into();
    let p2 = publication(vec![v2], vec![orgs(&["acme", "globex", "initech"])]);
    let m = merge(&c, &p2);
    assert!(validate_catalog(&m.catalog).is_ok());
    assert_eq!(m.refused.len(), 1, "{:?}", m.refused);
    assert_eq!(m.refused[0].entity, EntityRef::agent("billing", "export"));
    assert!(
        m.refused[0].errors.to_string().contains("org"),
        "{}",
        m.refused[0].errors
    );
    let a = m.catalog.agent("billing", "export").expect("agent");
    assert_eq!(a.parameters, vec![org_param()]);
    assert_eq!(
        a.title, "Export v2",
        "what else the code owns still goes in"
    );
    assert_eq!(
        m.catalog
            .classifier("billing", "orgs")
            .map(|c| c.values.len()),
        Some(3)
    );

    // What it published still shows as drift of the launch setting.
    let schema = [ParamSpec {
        name: "organisation".into(),
        ..org_param()
    }];
    let drift = schema_drift(&m.catalog, &|app, agent| {
        (app == "billing" && agent == "export").then_some(&schema[..])
    });
    assert_eq!(drift.len(), 1);
    assert_eq!(drift[0].launch_setting, "billing.export.1");
    let paths: Vec<&str> = drift[0].errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["org"]);
}

#[test]
fn a_classifier_losing_a_code_in_use_is_refused() {
    let p1 = publication(
        vec![export(vec![org_param()])],
        vec![orgs(&["acme", "globex"])],
    );
    let mut c = merge(&base(), &p1).catalog;
    c.launch_settings
        .push(stream("billing.export.1", json!({"org": "globex"})));
    let m = merge(
        &c,
        &publication(vec![export(vec![org_param()])], vec![orgs(&["acme"])]),
    );
    assert_eq!(m.refused.len(), 1);
    assert_eq!(
        m.refused[0].entity,
        EntityRef::classifier("billing", "orgs")
    );
    assert_eq!(m.catalog, c);
}

#[test]
fn changes_that_only_fit_together_are_taken_in_rounds() {
    let p1 = publication(
        vec![export(vec![org_param()])],
        vec![orgs(&["acme", "globex"])],
    );
    let mut c = merge(&base(), &p1).catalog;
    c.launch_settings
        .push(stream("billing.export.1", json!({"org": "globex"})));
    // The agent's new parameter needs a new classifier, and "globex" goes away from "orgs" while
    // the launch setting still uses it: the classifier "sites" and the agent fit, "orgs" not.
    let site = ParamSpec::new("site", ParamType::Classifier("sites".into()));
    let sites = PublishedClassifier {
        name: "sites".into(),
        title: "Sites".into(),
        values: vec![ClassifierValue {
            code: "par".into(),
            label: "Paris".into(),
        }],
    };
    let m = merge(
        &c,
        &publication(
            vec![export(vec![org_param(), site.clone()])],
            vec![orgs(&["acme"]), sites],
        ),
    );
    assert!(validate_catalog(&m.catalog).is_ok());
    assert_eq!(
        m.refused
            .iter()
            .map(|r| r.entity.clone())
            .collect::<Vec<_>>(),
        vec![EntityRef::classifier("billing", "orgs")]
    );
    assert_eq!(
        m.catalog
            .agent("billing", "export")
            .map(|a| a.parameters.len()),
        Some(2)
    );
}

#[test]
fn a_messages_agent_without_an_existing_data_queue_lands_without_one() {
    let mut pa = export(vec![]);
    pa.suggested_data_queue = Some("nowhere".into());
    let mut standalone = export(vec![]);
    standalone.id = "cleanup".into();
    standalone.input = InputKind::Standalone;
    let p = publication(vec![pa.clone(), standalone], vec![]);
    let m = merge(&base(), &p);
    assert!(m.refused.is_empty(), "{:?}", m.refused);
    let agent = m.catalog.agent("billing", "export").expect("created");
    assert_eq!(agent.data_queue, None);
    assert!(agent.needs_data_queue());
    assert!(m.catalog.agent("billing", "cleanup").is_some());
    // Once the suggested data queue exists, the next publication takes it ...
    let mut with_queue = m.catalog.clone();
    with_queue.data_queues.push(
        serde_json::from_value(serde_json::json!({ "id": "nowhere", "kind": "topic" }))
            .expect("data queue"),
    );
    with_queue.normalize();
    let again = merge(&with_queue, &p);
    assert_eq!(
        again
            .catalog
            .agent("billing", "export")
            .and_then(|a| a.data_queue.clone()),
        Some("nowhere".into())
    );
    // ... and never overrides one an operator picked.
    let mut picked = with_queue.clone();
    if let Some(a) = picked.agents.iter_mut().find(|a| a.id == "export") {
        a.data_queue = Some("invoices".into());
    }
    assert_eq!(
        merge(&picked, &p)
            .catalog
            .agent("billing", "export")
            .and_then(|a| a.data_queue.clone()),
        Some("invoices".into())
    );
}

#[test]
fn agents_not_published_stay() {
    let p1 = publication(vec![export(vec![])], vec![]);
    let c = merge(&base(), &p1).catalog;
    let m = merge(&c, &publication(vec![], vec![]));
    assert!(m.catalog.agent("billing", "export").is_some());
}
