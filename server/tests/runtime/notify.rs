//! Notifications end to end: events raised by the real runtime (a real node tripping its
//! breaker, the bulk operation that re-enables it, a node killed) reach a local HTTP receiver
//! signed and with their link; a receiver
//! that fails is tried again; one that hangs holds nobody else up; two replicas and a restart
//! send each notification exactly once.

use crate::harness::{CatalogBuilder, SHORT, World};
use am_domain::{notify::Notice, read::operations::OperationRequest};
use am_services::{
    Principal,
    entity::notifications as rows,
    notifications::{self, delivery::signature, events},
    operations::{self, ReplayBroker, RunEnd, UnroutedBatch},
    runtime::RuntimeConfig,
    testing::Backend,
};
use axum::{
    Router,
    body::Bytes,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    routing::post,
};
use sea_orm::{DatabaseConnection, EntityTrait, QueryOrder};
use serde_json::{Value, json};
use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

const SECRET: &str = "test-secret";
const PUBLIC: &str = "https://manager.example.com";

/// One request: its path, its headers (lower-case names) and its body.
type Request = (String, BTreeMap<String, String>, Bytes);

/// What the receiver got, in order.
#[derive(Clone, Default)]
struct Inbox {
    got: Arc<Mutex<Vec<Request>>>,
    /// Requests to answer 500 before answering 200, per path.
    fail_first: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl Inbox {
    fn of(&self, path: &str) -> Vec<(BTreeMap<String, String>, Value)> {
        self.got
            .lock()
            .expect("inbox")
            .iter()
            .filter(|(p, _, _)| p == path)
            .map(|(_, h, b)| (h.clone(), serde_json::from_slice(b).expect("JSON body")))
            .collect()
    }

    fn raw(&self, path: &str) -> Vec<(BTreeMap<String, String>, Bytes)> {
        self.got
            .lock()
            .expect("inbox")
            .iter()
            .filter(|(p, _, _)| p == path)
            .map(|(_, h, b)| (h.clone(), b.clone()))
            .collect()
    }
}

async fn receive(
    State(inbox): State<Inbox>,
    Path(path): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    if path == "hang" {
        tokio::time::sleep(Duration::from_secs(120)).await;
        return StatusCode::OK;
    }
    let h = headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    inbox
        .got
        .lock()
        .expect("inbox")
        .push((path.clone(), h, body));
    let mut fail = inbox.fail_first.lock().expect("failures");
    match fail.get_mut(&path) {
        Some(n) if *n > 0 => {
            *n -= 1;
            StatusCode::INTERNAL_SERVER_ERROR
        }
        _ => StatusCode::OK,
    }
}

/// A receiver on a free local port; returns its base URL.
async fn receiver(inbox: Inbox) -> String {
    let app = Router::new()
        .route("/{path}", post(receive))
        .with_state(inbox);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

fn config(w: &World) -> RuntimeConfig {
    let mut cfg = w.config();
    cfg.notify.public_url = Some(PUBLIC.into());
    cfg.notify.retry_first = chrono::Duration::milliseconds(200);
    cfg.notify.timeout = Duration::from_secs(1);
    cfg.notify.per_endpoint_per_minute = 10_000;
    cfg
}

async fn rows_of(db: &DatabaseConnection) -> Vec<rows::Model> {
    rows::Entity::find()
        .order_by_asc(rows::Column::Id)
        .all(db)
        .await
        .expect("notifications")
}

/// Raises `n` distinct `node_lost` notices (one per host, `{prefix}-{i}`) for application
/// `demo`.
async fn raise_many(db: &DatabaseConnection, prefix: &str, n: usize) {
    let now = chrono::Utc::now();
    for i in 0..n {
        let notice = events::node(true, "demo", &format!("{prefix}-{i}"), None, now);
        notifications::raise(db, notice, now).await.expect("raises");
    }
}

async fn seed_with_webhook(w: &World, url: &str, secret: Option<&str>) {
    let mut c = CatalogBuilder::new(w, &["h1", "h2"])
        .ls(
            "demo.poison",
            "poison",
            "stream",
            json!({
                "stream_mode": "asap",
                "failure_threshold": 3,
                "retry": { "initial_delay": "100ms", "max_delay": "100ms", "max_deliveries": 1 },
            }),
        )
        .build();
    c.applications[0].channels.webhook_url = Some(url.to_owned());
    c.applications[0].channels.webhook_secret = secret.map(str::to_owned);
    w.seed(c).await;
}

/// The operations here select no dead letters and no unrouted messages.
struct NoReplays;

impl ReplayBroker for NoReplays {
    async fn publish(
        &self,
        rows: &[am_services::entity::dead_letters::Model],
        _by: &str,
    ) -> Vec<Result<(), am_services::operations::ReplayError>> {
        panic!(
            "{} dead letters published by an operation that selected none",
            rows.len()
        )
    }

    async fn replay_unrouted(&self, queue: &str, _: &str, _: u64, _: &str) -> UnroutedBatch {
        panic!("an unrouted replay of {queue} by an operation that selected none")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_breaker_trip_and_a_lost_node_reach_the_webhook_signed_with_their_links() {
    let mut w = World::new(Backend::Sqlite).await;
    let inbox = Inbox::default();
    let base = receiver(inbox.clone()).await;
    seed_with_webhook(&w, &format!("{base}/ops"), Some(SECRET)).await;
    w.start_node("h1");
    w.start_node("h2");
    let m = w
        .manager_with(config(&w), &crate::harness::amqp_url())
        .await;
    w.wait_live(&["h1", "h2"]).await;
    w.wait("demo.poison running", SHORT, || async {
        let run = w.runs_of("demo.poison").await.pop()?;
        w.hosts_of(run.id)
            .await
            .iter()
            .any(|h| h.status == "running")
            .then_some(())
    })
    .await;

    w.publish("some poison").await;
    let tripped = w
        .wait("breaker_tripped at the receiver", SHORT, || async {
            inbox.raw("ops").into_iter().find(|(h, _)| {
                h.get("x-agent-manager-event").map(String::as_str) == Some("breaker_tripped")
            })
        })
        .await;
    let (headers, body) = tripped;
    assert_eq!(
        headers.get("x-agent-manager-signature"),
        Some(&signature(SECRET, &body)),
        "the signature is the HMAC of the body"
    );
    assert!(headers.contains_key("x-agent-manager-timestamp"));
    let notice: Value = serde_json::from_slice(&body).expect("JSON");
    let n: Notice = serde_json::from_value(notice.clone()).expect("a notice");
    let activation = n.activation.clone().expect("the tripped activation");
    let host = n.host.clone().expect("the host");
    assert_eq!(
        n.url,
        format!("{PUBLIC}/failures/demo.poison/{activation}/{host}")
    );
    assert_eq!(n.launch_setting.as_deref(), Some("demo.poison"));
    assert_eq!(n.action.as_deref(), Some("disabled"));
    assert!(n.error_type.is_some(), "{notice}");
    assert!(notice["sent_at"].is_string());

    // An operator re-enables it with a bulk operation: its end is told, with its counts.
    let op = operations::start(
        &m.services,
        &Principal::cli(),
        OperationRequest::EnableLaunchSettings {
            ids: vec!["demo.poison".into()],
        },
    )
    .await
    .expect("starts");
    let end = operations::run(&w.db, &m.services.runtime, op.id, &NoReplays)
        .await
        .expect("runs");
    assert_eq!(end, RunEnd::Finished(operations::status::SUCCEEDED));
    let (headers, finished) = w
        .wait("operation_finished at the receiver", SHORT, || async {
            inbox
                .of("ops")
                .into_iter()
                .find(|(_, b)| b["event"] == "operation_finished")
        })
        .await;
    assert!(headers.contains_key("x-agent-manager-signature"));
    assert_eq!(finished["operation"], op.id.to_string());
    assert_eq!(finished["action"], "succeeded");
    assert_eq!(
        finished["counts"],
        json!({ "total": 1, "done": 1, "failed": 0 })
    );
    assert_eq!(finished["url"], format!("{PUBLIC}/operations/{}", op.id));

    // A node killed: node_lost, with the host.
    w.node("h2").kill().await;
    let (_, lost) = w
        .wait("node_lost at the receiver", SHORT, || async {
            inbox
                .of("ops")
                .into_iter()
                .find(|(_, b)| b["event"] == "node_lost" && b["host"] == "h2")
        })
        .await;
    assert_eq!(lost["url"], format!("{PUBLIC}/nodes#host-h2"));
    // The receiver holds a notice before the deliverer has written what came of it: wait for
    // that write, then check it was the first attempt and it succeeded.
    let told = |r: &rows::Model| r.event == "breaker_tripped" || r.event == "node_lost";
    let stored = w
        .wait("the deliveries written", SHORT, || async {
            let stored = rows_of(&w.db).await;
            stored
                .iter()
                .filter(|r| told(r))
                .all(|r| r.attempts > 0)
                .then_some(stored)
        })
        .await;
    assert!(
        stored
            .iter()
            .filter(|r| told(r))
            .all(|r| r.status == "delivered" && r.attempts == 1),
        "{stored:#?}"
    );
    m.stop().await;
    w.finish(&["demo.poison"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_receiver_is_retried_and_a_hanging_one_holds_nobody_up() {
    let w = World::new(Backend::Sqlite).await;
    let inbox = Inbox::default();
    let base = receiver(inbox.clone()).await;
    inbox
        .fail_first
        .lock()
        .expect("failures")
        .insert("flaky".into(), 2);
    seed_with_webhook(&w, &format!("{base}/flaky"), None).await;
    raise_many(&w.db, "flaky", 1).await;
    let m = w
        .manager_with(config(&w), &crate::harness::amqp_url())
        .await;
    let delivered = w
        .wait("delivered on the third try", SHORT, || async {
            rows_of(&w.db)
                .await
                .into_iter()
                .find(|r| r.status == "delivered")
        })
        .await;
    assert_eq!(delivered.attempts, 3);
    assert_eq!(inbox.of("flaky").len(), 3);
    assert!(
        delivered
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("500"))
    );

    // One endpoint hangs: the others' notifications go out meanwhile.
    seed_with_webhook(&w, &format!("{base}/ok"), None).await;
    let ls_hook = format!("{base}/hang");
    let now = chrono::Utc::now();
    let hanging = am_services::notifications::raise::Endpoint {
        channel: am_domain::notify::Channel::Webhook,
        url: ls_hook,
        secret: None,
    };
    for i in 0..3 {
        let notice = events::node(true, "demo", &format!("stuck-{i}"), None, now);
        am_services::notifications::raise::queue_for(&w.db, &notice, hanging.clone(), now)
            .await
            .expect("queues");
    }
    let started = std::time::Instant::now();
    raise_many(&w.db, "ok", 20).await;
    w.wait(
        "20 delivered beside the hanging endpoint",
        SHORT,
        || async { (inbox.of("ok").len() >= 20).then_some(()) },
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the others waited for the hanging endpoint: {:?}",
        started.elapsed()
    );
    let hung = w
        .wait(
            "the hanging endpoint's first try timed out",
            SHORT,
            || async {
                let rows = rows_of(&w.db).await;
                let stuck: Vec<_> = rows
                    .into_iter()
                    .filter(|r| r.endpoint.ends_with("/hang") && r.attempts > 0)
                    .collect();
                (stuck.len() == 3).then_some(stuck)
            },
        )
        .await;
    assert!(
        hung.iter().all(|r| r.status == "pending"
            && r.last_error
                .as_deref()
                .is_some_and(|e| e.starts_with("no answer"))),
        "{hung:#?}"
    );
    m.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_and_a_restart_send_each_notification_once() {
    let w = World::new(Backend::Postgres).await;
    let inbox = Inbox::default();
    let base = receiver(inbox.clone()).await;
    inbox
        .fail_first
        .lock()
        .expect("failures")
        .insert("ops".into(), 1);
    seed_with_webhook(&w, &format!("{base}/ops"), None).await;
    raise_many(&w.db, "first", 1).await;

    // The first try fails on one replica, which then stops; the next one delivers it.
    let first = w
        .manager_with(config(&w), &crate::harness::amqp_url())
        .await;
    w.wait("the first try failed", SHORT, || async {
        rows_of(&w.db)
            .await
            .first()
            .filter(|r| r.attempts == 1)
            .map(|_| ())
    })
    .await;
    first.stop().await;
    let a = w
        .manager_with(config(&w), &crate::harness::amqp_url())
        .await;
    let b = w
        .manager_with(config(&w), &crate::harness::amqp_url())
        .await;
    raise_many(&w.db, "many", 100).await;
    w.wait("all 101 delivered", SHORT, || async {
        let rows = rows_of(&w.db).await;
        (rows.len() == 101 && rows.iter().all(|r| r.status == "delivered")).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut ids: Vec<i64> = inbox
        .of("ops")
        .iter()
        .map(|(_, b)| b["id"].as_i64().expect("an id"))
        .collect();
    let received = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 101, "every notification arrived");
    assert_eq!(received, 102, "each once, plus the one failed try");
    a.stop().await;
    b.stop().await;
}
