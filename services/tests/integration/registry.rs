use super::actor;
use crate::on_both_backends;
use am_domain::{
    catalog::{
        Agent, Application, Catalog, ClassifierValue, Concurrency, DataQueue, DataQueueKind,
        InputKind, LaunchKind, LaunchSetting, OverlapPolicy, Pool, StreamMode,
    },
    params::{ParamSpec, ParamType},
    read::nodes::NodeFilter,
    roles::Role,
    usage::EntityRef,
    wire::{
        ActivationId, Counters, Heartbeat, Publication, PublishedAgent, PublishedClassifier,
        RunningLaunchSetting,
    },
};
use am_services::{
    catalog,
    entity::{agents, audit_log, catalog_meta, classifiers, node_agents, nodes},
    registry,
};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
};

on_both_backends!(
    a_first_publication_creates_agents_and_classifiers,
    later_publications_keep_what_operators_set,
    the_same_publication_twice_changes_nothing,
    a_schema_that_breaks_saved_parameters_is_kept_aside_and_shown_as_drift,
    a_messages_agent_without_its_data_queue_lands_flagged,
    an_unknown_application_waits_and_is_applied_once_created,
    heartbeats_update_the_node_row,
    nodes_are_live_until_their_heartbeats_stop,
    mark_lost_flips_each_stale_node_once,
);

const APP: &str = "demo";

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2030-01-01T12:00:00Z")
        .expect("time")
        .with_timezone(&Utc)
}

fn timeout() -> Duration {
    Duration::seconds(30)
}

fn base_catalog() -> Catalog {
    let mut c = Catalog::new();
    c.pools.push(Pool {
        id: "demo-pool".into(),
        title: String::new(),
        hosts: vec!["demo-a".into(), "demo-b".into()],
    });
    c.applications.push(Application {
        id: APP.into(),
        title: "Demo".into(),
        default_pool: "demo-pool".into(),
        channels: Default::default(),
    });
    for id in ["demo.events", "demo.other"] {
        c.data_queues.push(DataQueue {
            id: id.into(),
            title: String::new(),
            kind: DataQueueKind::Queue,
            address: None,
            delay: None,
        });
    }
    c
}

async fn seed(db: &DatabaseConnection) {
    catalog::import(db, &actor(Role::Admin), base_catalog())
        .await
        .expect("seed");
}

fn echo(parameters: Vec<ParamSpec>) -> PublishedAgent {
    PublishedAgent {
        id: "echo".into(),
        title: "Echo".into(),
        input: InputKind::Messages,
        parameters,
        suggested_data_queue: Some("demo.events".into()),
        suggested_concurrency: Some(Concurrency::Many),
        suggested_overlap: Some(OverlapPolicy::Skip),
    }
}

fn sleep() -> PublishedAgent {
    PublishedAgent {
        id: "sleep".into(),
        title: "Sleep".into(),
        input: InputKind::Standalone,
        parameters: vec![ParamSpec::new("duration", ParamType::Duration)],
        suggested_data_queue: None,
        suggested_concurrency: None,
        suggested_overlap: None,
    }
}

fn org_param(name: &str) -> ParamSpec {
    ParamSpec::new(name, ParamType::Classifier("orgs".into()))
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

fn publication(host: &str, version: &str, agents: Vec<PublishedAgent>) -> Publication {
    Publication {
        application: APP.into(),
        host: host.into(),
        version: version.into(),
        capacity: 4,
        protocol: am_domain::wire::PROTOCOL_VERSION,
        agents,
        classifiers: vec![orgs(&["acme", "globex"])],
    }
}

fn heartbeat(host: &str, activations: &[&[&str]], load: Option<f64>) -> Heartbeat {
    Heartbeat {
        application: APP.into(),
        host: host.into(),
        capacity: 6,
        running: activations
            .iter()
            .enumerate()
            .map(|(i, ids)| RunningLaunchSetting {
                launch_setting: format!("demo.ls.{i}"),
                activations: ids.iter().map(|a| ActivationId::from(*a)).collect(),
                counters: Counters::default(),
                by_activation: vec![],
            })
            .collect(),
        load,
        dropped_reports: 0,
        quarantined: 0,
        at: t0(),
    }
}

async fn agent_row(db: &DatabaseConnection, id: &str) -> agents::Model {
    agents::Entity::find_by_id((APP.to_owned(), id.to_owned()))
        .one(db)
        .await
        .expect("query")
        .expect("agent row")
}

async fn revision(db: &DatabaseConnection) -> i64 {
    catalog_meta::Entity::find_by_id(1)
        .one(db)
        .await
        .expect("query")
        .expect("meta")
        .revision
}

async fn audit_count(db: &DatabaseConnection) -> u64 {
    audit_log::Entity::find().count(db).await.expect("count")
}

async fn a_first_publication_creates_agents_and_classifiers(db: &DatabaseConnection) {
    seed(db).await;
    let rev = revision(db).await;
    let p = publication("demo-a", "1.0", vec![echo(vec![org_param("org")]), sleep()]);
    registry::record_publication(db, &p, t0())
        .await
        .expect("publish");

    let c = catalog::export(db, &actor(Role::Viewer))
        .await
        .expect("export");
    let echo = c.agent(APP, "echo").expect("echo created");
    assert_eq!(echo.data_queue.as_deref(), Some("demo.events"));
    assert_eq!(
        (echo.concurrency, echo.overlap),
        (Concurrency::Many, OverlapPolicy::Skip)
    );
    assert_eq!(echo.parameters, vec![org_param("org")]);
    assert!(c.agent(APP, "sleep").is_some());
    assert_eq!(c.classifier(APP, "orgs").map(|c| c.values.len()), Some(2));
    assert!(revision(db).await > rev, "readers can notice the change");

    let row = agent_row(db, "echo").await;
    assert_eq!(row.declared_by, "node");
    assert_eq!(row.published_version.as_deref(), Some("1.0"));
    assert_eq!(row.published_by_host.as_deref(), Some("demo-a"));
    assert_eq!(row.published_at, Some(t0()));
    assert_eq!(
        row.suggested_defaults,
        Some(
            serde_json::json!({"data_queue": "demo.events", "concurrency": "MANY", "overlap": "skip"})
        )
    );
    let classifier = classifiers::Entity::find_by_id((APP.to_owned(), "orgs".to_owned()))
        .one(db)
        .await
        .expect("query")
        .expect("row");
    assert_eq!(classifier.published_at, Some(t0()));

    let audits = audit_log::Entity::find()
        .filter(audit_log::Column::Actor.eq("node demo/demo-a"))
        .all(db)
        .await
        .expect("audit");
    let mut entities: Vec<String> = audits
        .iter()
        .map(|a| format!("{} {}", a.action, a.entity_id))
        .collect();
    entities.sort();
    assert_eq!(
        entities,
        ["create demo/echo", "create demo/orgs", "create demo/sleep"]
    );
    assert!(
        audits[0]
            .cause
            .as_deref()
            .is_some_and(|c| c.contains("version 1.0")),
        "{audits:?}"
    );

    let node = nodes::Entity::find_by_id((APP.to_owned(), "demo-a".to_owned()))
        .one(db)
        .await
        .expect("query")
        .expect("node");
    assert_eq!(
        (node.version.as_str(), node.capacity, node.status.as_str()),
        ("1.0", 4, "live")
    );
    let offered: Vec<String> = node_agents::Entity::find()
        .order_by_asc(node_agents::Column::AgentId)
        .all(db)
        .await
        .expect("offered")
        .into_iter()
        .map(|o| o.agent_id)
        .collect();
    assert_eq!(offered, ["echo", "sleep"]);
}

async fn later_publications_keep_what_operators_set(db: &DatabaseConnection) {
    seed(db).await;
    registry::record_publication(db, &publication("demo-a", "1.0", vec![echo(vec![])]), t0())
        .await
        .expect("publish");
    let key = EntityRef::agent(APP, "echo");
    let admin = actor(Role::Admin);
    let mut a: Agent = catalog::get(db, &admin, &key).await.expect("get");
    a.concurrency = Concurrency::Any;
    a.overlap = OverlapPolicy::Interrupt;
    a.data_queue = Some("demo.other".into());
    a.title = "Echo (operators' title)".into();
    catalog::update(db, &admin, &key, a).await.expect("update");

    let mut v2 = echo(vec![ParamSpec::new("limit", ParamType::Integer)]);
    v2.title = "Echo v2".into();
    v2.suggested_data_queue = Some("demo.events".into());
    let mut p = publication("demo-b", "2.0", vec![v2, sleep()]);
    p.classifiers = vec![orgs(&["acme", "globex", "initech"])];
    registry::record_publication(db, &p, t0() + Duration::minutes(1))
        .await
        .expect("publish again");

    let a: Agent = catalog::get(db, &admin, &key).await.expect("get");
    assert_eq!(a.title, "Echo v2", "the code owns the title");
    assert_eq!(a.parameters.len(), 1, "and the schema");
    assert_eq!(a.concurrency, Concurrency::Any);
    assert_eq!(a.overlap, OverlapPolicy::Interrupt);
    assert_eq!(a.data_queue.as_deref(), Some("demo.other"));
    let c = catalog::export(db, &admin).await.expect("export");
    assert_eq!(
        c.classifier(APP, "orgs").map(|c| c.values.len()),
        Some(3),
        "values replaced whole"
    );
    let row = agent_row(db, "echo").await;
    assert_eq!(row.declared_by, "node");
    assert_eq!(row.published_version.as_deref(), Some("2.0"));
    assert_eq!(row.published_by_host.as_deref(), Some("demo-b"));
}

async fn the_same_publication_twice_changes_nothing(db: &DatabaseConnection) {
    seed(db).await;
    let p = publication("demo-a", "1.0", vec![echo(vec![org_param("org")]), sleep()]);
    registry::record_publication(db, &p, t0())
        .await
        .expect("publish");
    let (rev, audits) = (revision(db).await, audit_count(db).await);
    let before = agent_row(db, "echo").await;
    registry::record_publication(db, &p, t0() + Duration::minutes(5))
        .await
        .expect("again");
    // Another node of the same version publishing the same code changes nothing either.
    let mut other = p.clone();
    other.host = "demo-b".into();
    registry::record_publication(db, &other, t0() + Duration::minutes(6))
        .await
        .expect("other node");
    assert_eq!(revision(db).await, rev);
    assert_eq!(audit_count(db).await, audits);
    assert_eq!(agent_row(db, "echo").await, before);
    // The node row itself is refreshed: it restarted.
    let node = nodes::Entity::find_by_id((APP.to_owned(), "demo-a".to_owned()))
        .one(db)
        .await
        .expect("query")
        .expect("node");
    assert_eq!(node.started_at, t0() + Duration::minutes(5));

    // A catalog that already holds an agent as published (declared by an operator) only gets
    // the publication columns, once.
    let admin = actor(Role::Admin);
    let mut declared = base_catalog();
    declared.agents.push(Agent {
        application: APP.into(),
        id: "cleanup".into(),
        title: "Cleanup".into(),
        input: InputKind::Standalone,
        data_queue: None,
        concurrency: Concurrency::Any,
        overlap: OverlapPolicy::Allow,
        parameters: vec![],
    });
    let mut current = catalog::export(db, &admin).await.expect("export");
    current.agents.extend(declared.agents);
    catalog::import(db, &admin, current).await.expect("import");
    let cleanup = PublishedAgent {
        id: "cleanup".into(),
        title: "Cleanup".into(),
        input: InputKind::Standalone,
        parameters: vec![],
        suggested_data_queue: None,
        suggested_concurrency: None,
        suggested_overlap: None,
    };
    let mut with_cleanup = p.clone();
    with_cleanup.agents.push(cleanup);
    let audits = audit_count(db).await;
    registry::record_publication(db, &with_cleanup, t0() + Duration::minutes(7))
        .await
        .expect("publish declared");
    let row = agent_row(db, "cleanup").await;
    assert_eq!(row.declared_by, "operator");
    assert_eq!(row.published_version.as_deref(), Some("1.0"));
    assert_eq!(
        audit_count(db).await,
        audits,
        "no catalog change, no audit entry"
    );
    let rev = revision(db).await;
    registry::record_publication(db, &with_cleanup, t0() + Duration::minutes(8))
        .await
        .expect("again");
    assert_eq!(revision(db).await, rev);
}

async fn a_schema_that_breaks_saved_parameters_is_kept_aside_and_shown_as_drift(
    db: &DatabaseConnection,
) {
    seed(db).await;
    let admin = actor(Role::Admin);
    registry::record_publication(
        db,
        &publication("demo-a", "1.0", vec![echo(vec![org_param("org")])]),
        t0(),
    )
    .await
    .expect("publish");
    let mut parameters = serde_json::Map::new();
    parameters.insert("org".into(), "acme".into());
    let ls = LaunchSetting {
        id: "demo.echo.1".into(),
        title: String::new(),
        application: APP.into(),
        agent: "echo".into(),
        kind: LaunchKind::Stream,
        enabled: true,
        pool: None,
        parameters,
        stream_mode: Some(StreamMode::Asap),
        filter: None,
        failure_threshold: 10,
        retry: Default::default(),
        unavailable_for: am_domain::catalog::default_unavailable_for(),
        dead_letter: Default::default(),
        recovery: Default::default(),
        idle_timeout: None,
        channels: Default::default(),
        notify_on_failure: false,
    };
    catalog::save_launch_setting(db, &admin, ls, None, true)
        .await
        .expect("save");
    assert_eq!(
        registry::drift(db, &admin).await.expect("drift"),
        vec![],
        "no drift while the schema fits"
    );

    // Version 2 renamed the parameter: the catalog keeps the old schema, the row remembers the
    // new one, and the launch setting shows as drifting.
    let mut v2 = echo(vec![org_param("organisation")]);
    v2.title = "Echo v2".into();
    registry::record_publication(db, &publication("demo-a", "2.0", vec![v2]), t0())
        .await
        .expect("publish v2");
    let a: Agent = catalog::get(db, &admin, &EntityRef::agent(APP, "echo"))
        .await
        .expect("get");
    assert_eq!(a.parameters, vec![org_param("org")]);
    assert_eq!(a.title, "Echo v2", "what else the code owns still goes in");
    let row = agent_row(db, "echo").await;
    assert_eq!(row.published_version.as_deref(), Some("2.0"));
    let drift = registry::drift(db, &actor(Role::Viewer))
        .await
        .expect("drift");
    assert_eq!(drift.len(), 1);
    assert_eq!(drift[0].launch_setting, "demo.echo.1");
    assert_eq!(
        drift[0]
            .errors
            .iter()
            .map(|e| e.path.as_str())
            .collect::<Vec<_>>(),
        ["org"]
    );
    let view = registry::application_publication(db, &admin, APP, t0(), timeout())
        .await
        .expect("view");
    let echo = view.agents.iter().find(|a| a.id == "echo").expect("echo");
    assert!(echo.schema_differs);
    assert_eq!(echo.offered_by, ["demo-a"]);
    // What the catalog did not take is listed with why, not only logged.
    let refused = registry::refused_publications(db, &actor(Role::Viewer))
        .await
        .expect("refused");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(
        (refused[0].application.as_str(), refused[0].host.as_str()),
        (APP, "demo-a")
    );
    assert_eq!(refused[0].refused[0].entity, EntityRef::agent(APP, "echo"));
    assert!(
        refused[0].refused[0].errors.to_string().contains("org"),
        "{}",
        refused[0].refused[0].errors
    );
    // The code fixed: the refusal is gone with the next publication.
    registry::record_publication(db, &publication("demo-a", "2.1", vec![echo_v1()]), t0())
        .await
        .expect("publish v2.1");
    assert_eq!(
        registry::refused_publications(db, &admin)
            .await
            .expect("refused"),
        vec![]
    );
}

fn echo_v1() -> PublishedAgent {
    echo(vec![org_param("org")])
}

/// A messages agent whose suggested data queue is not in the catalog lands without one,
/// flagged, instead of being left out; the next publication after the data queue is created
/// takes the suggestion.
async fn a_messages_agent_without_its_data_queue_lands_flagged(db: &DatabaseConnection) {
    seed(db).await;
    let admin = actor(Role::Admin);
    let mut ghost = echo(vec![]);
    ghost.id = "ghost".into();
    ghost.suggested_data_queue = Some("demo.missing".into());
    let p = publication("demo-a", "1.0", vec![ghost, sleep()]);
    registry::record_publication(db, &p, t0())
        .await
        .expect("publish");
    let a: Agent = catalog::get(db, &admin, &EntityRef::agent(APP, "ghost"))
        .await
        .expect("the agent landed");
    assert_eq!(a.data_queue, None);
    assert_eq!(
        registry::agents_needing_data_queue(db, &admin)
            .await
            .expect("flagged"),
        [(APP.to_owned(), "ghost".to_owned())]
    );
    let view = registry::application_publication(db, &admin, APP, t0(), timeout())
        .await
        .expect("view");
    assert!(
        view.agents
            .iter()
            .any(|a| a.id == "ghost" && a.in_catalog && a.needs_data_queue)
    );
    assert_eq!(
        registry::refused_publications(db, &admin)
            .await
            .expect("refused"),
        vec![]
    );

    let mut c = catalog::export(db, &admin).await.expect("export");
    c.data_queues.push(DataQueue {
        id: "demo.missing".into(),
        title: String::new(),
        kind: DataQueueKind::Topic,
        address: None,
        delay: None,
    });
    catalog::import(db, &admin, c)
        .await
        .expect("data queue created");
    registry::record_publication(db, &p, t0())
        .await
        .expect("publish again");
    let a: Agent = catalog::get(db, &admin, &EntityRef::agent(APP, "ghost"))
        .await
        .expect("get");
    assert_eq!(a.data_queue.as_deref(), Some("demo.missing"));
    assert!(
        registry::agents_needing_data_queue(db, &admin)
            .await
            .expect("flagged")
            .is_empty()
    );
}

/// A node that publishes before its application is in the catalog: recorded, its publication
/// kept (not applied), then applied by the watchdog's pass once the application is created —
/// without the node publishing again.
async fn an_unknown_application_waits_and_is_applied_once_created(db: &DatabaseConnection) {
    seed(db).await;
    let (rev, audits) = (revision(db).await, audit_count(db).await);
    let mut p = publication("elsewhere-1", "1.0", vec![echo(vec![])]);
    p.application = "unknown-app".into();
    registry::record_publication(db, &p, t0())
        .await
        .expect("publish");
    let nodes = registry::list(
        db,
        &actor(Role::Viewer),
        &NodeFilter {
            application: Some("unknown-app".into()),
            include_lost: false,
        },
        t0(),
        timeout(),
    )
    .await
    .expect("list");
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].agents, ["echo"]);
    assert_eq!(agents::Entity::find().count(db).await.expect("count"), 0);
    assert_eq!(
        classifiers::Entity::find().count(db).await.expect("count"),
        0
    );
    assert_eq!((revision(db).await, audit_count(db).await), (rev, audits));
    assert!(nodes[0].waiting_for_application);
    assert_eq!(
        registry::apply_waiting_publications(db, t0())
            .await
            .expect("pass"),
        0,
        "still no application"
    );

    catalog::create(
        db,
        &actor(Role::Admin),
        Application {
            id: "unknown-app".into(),
            title: String::new(),
            default_pool: "demo-pool".into(),
            channels: Default::default(),
        },
    )
    .await
    .expect("application created");
    assert_eq!(
        registry::apply_waiting_publications(db, t0())
            .await
            .expect("pass"),
        1
    );
    let created = agents::Entity::find()
        .filter(agents::Column::ApplicationId.eq("unknown-app"))
        .all(db)
        .await
        .expect("agents");
    assert_eq!(created.len(), 1, "the waiting publication's agent");
    assert_eq!(created[0].id, "echo");
    let node = nodes::Entity::find_by_id(("unknown-app".to_owned(), "elsewhere-1".to_owned()))
        .one(db)
        .await
        .expect("query")
        .expect("node");
    assert!(node.waiting_publication.is_none(), "applied once");
    assert_eq!(
        registry::apply_waiting_publications(db, t0())
            .await
            .expect("pass"),
        0
    );
}

async fn heartbeats_update_the_node_row(db: &DatabaseConnection) {
    // Before any publication: the row is created with an unknown version.
    let hb = heartbeat("demo-a", &[&["a1", "a2"], &["a3"]], None);
    registry::record_heartbeat(db, &hb, t0())
        .await
        .expect("heartbeat");
    let key = (APP.to_owned(), "demo-a".to_owned());
    let node = nodes::Entity::find_by_id(key.clone())
        .one(db)
        .await
        .expect("query")
        .expect("node");
    assert_eq!(node.version, "unknown");
    assert_eq!((node.running, node.capacity, node.load), (3, 6, 0.0));
    assert_eq!(node.started_at, t0());

    registry::record_publication(db, &publication("demo-a", "1.0", vec![]), t0())
        .await
        .expect("publish");
    let later = t0() + Duration::seconds(10);
    registry::record_heartbeat(db, &heartbeat("demo-a", &[&["a1"]], Some(1.5)), later)
        .await
        .expect("heartbeat");
    let node = nodes::Entity::find_by_id(key)
        .one(db)
        .await
        .expect("query")
        .expect("node");
    assert_eq!(
        node.version, "1.0",
        "a heartbeat keeps the published version"
    );
    assert_eq!((node.running, node.load), (1, 1.5));
    assert_eq!((node.started_at, node.last_heartbeat_at), (t0(), later));
    assert_eq!(node.status, "live");
}

async fn nodes_are_live_until_their_heartbeats_stop(db: &DatabaseConnection) {
    seed(db).await;
    registry::record_publication(db, &publication("demo-a", "1.0", vec![echo(vec![])]), t0())
        .await
        .expect("publish a");
    registry::record_publication(db, &publication("demo-b", "1.0", vec![sleep()]), t0())
        .await
        .expect("publish b");
    let later = t0() + Duration::seconds(25);
    registry::record_heartbeat(db, &heartbeat("demo-b", &[], Some(0.2)), later)
        .await
        .expect("heartbeat");

    let now = t0() + Duration::seconds(40);
    let live = registry::live_nodes(db, APP, now, timeout())
        .await
        .expect("live");
    assert_eq!(
        live.iter().map(|n| n.host.as_str()).collect::<Vec<_>>(),
        ["demo-b"]
    );
    let viewer = actor(Role::Viewer);
    let listed = registry::list(db, &viewer, &NodeFilter::default(), now, timeout())
        .await
        .expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].status.as_str(), "live");
    let all = registry::list(
        db,
        &viewer,
        &NodeFilter {
            application: Some(APP.into()),
            include_lost: true,
        },
        now,
        timeout(),
    )
    .await
    .expect("list");
    assert_eq!(
        all.iter()
            .map(|n| (n.host.as_str(), n.status.as_str()))
            .collect::<Vec<_>>(),
        [("demo-a", "lost"), ("demo-b", "live")],
        "liveness is computed at read time"
    );
    let offered = registry::offered_agents(db, &viewer, APP, now, timeout())
        .await
        .expect("offered");
    assert_eq!(offered.keys().collect::<Vec<_>>(), ["sleep"]);
    let view = registry::application_publication(db, &viewer, APP, now, timeout())
        .await
        .expect("view");
    let flags: Vec<(&str, bool)> = view
        .agents
        .iter()
        .map(|a| (a.id.as_str(), a.offered_by.is_empty()))
        .collect();
    assert_eq!(flags, [("echo", true), ("sleep", false)]);
    assert_eq!(view.live_hosts, ["demo-b"]);
    assert_eq!(view.classifiers.len(), 1);
    assert_eq!(view.classifiers[0].values, 2);
}

async fn mark_lost_flips_each_stale_node_once(db: &DatabaseConnection) {
    for host in ["demo-a", "demo-b"] {
        registry::record_heartbeat(db, &heartbeat(host, &[], None), t0())
            .await
            .expect("heartbeat");
    }
    let later = t0() + Duration::seconds(20);
    registry::record_heartbeat(db, &heartbeat("demo-b", &[], None), later)
        .await
        .expect("heartbeat");

    let now = t0() + Duration::seconds(35);
    let flipped = registry::mark_lost(db, now, timeout()).await.expect("mark");
    assert_eq!(flipped, [(APP.to_owned(), "demo-a".to_owned())]);
    // A second watchdog pass (or another replica) flips nothing again.
    assert_eq!(
        registry::mark_lost(db, now, timeout()).await.expect("mark"),
        []
    );
    let a = nodes::Entity::find_by_id((APP.to_owned(), "demo-a".to_owned()))
        .one(db)
        .await
        .expect("query")
        .expect("node");
    assert_eq!(a.status, "lost");

    // A heartbeat brings a lost node back.
    registry::record_heartbeat(db, &heartbeat("demo-a", &[], None), now)
        .await
        .expect("heartbeat");
    assert_eq!(
        registry::live_nodes(db, APP, now, timeout())
            .await
            .expect("live")
            .len(),
        2
    );
}
