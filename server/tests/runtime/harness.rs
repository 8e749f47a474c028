//! The world of one runtime test: a unique broker prefix, its own database, in-process managers
//! (started, stopped and started again on that database) and `demo-node` processes.
//!
//! Nothing is shared between tests: broker objects live under the test's prefix (queues expire
//! and exchanges auto-delete once unused, and [`World::finish`] deletes the main ones), the
//! database is dropped with the world, and node processes die with it (`kill_on_drop`).

use agent_client::Topology;
use am_domain::catalog::Catalog;
use am_domain::usage::EntityRef;
use am_services::{
    Principal, Services, Settings,
    entity::{
        activation_events, activation_hosts, activations, audit_log, breaker_trips, failure_logs,
        launch_settings, nodes, outbox, schedule_groups,
    },
    health::BrokerStatus,
    runtime::{Metrics, RuntimeConfig, run},
    testing::{Backend, TestDb},
};
use chrono::{DateTime, Utc};
use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    options::{
        BasicPublishOptions, ConfirmSelectOptions, ExchangeDeleteOptions, QueueDeleteOptions,
    },
};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use serde_json::{Value, json};
use server::{broker, runtime};
use std::{
    collections::BTreeMap,
    future::Future,
    path::PathBuf,
    process::Stdio,
    sync::{Arc, atomic::Ordering},
    time::Duration,
};
use tokio::{net::TcpListener, process::Child, task::JoinSet};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// The application every test catalog declares and every node serves.
pub const APP: &str = "demo";

/// Deadline for things that take a round trip or two (dispatch, a short run, a report).
pub const SHORT: Duration = Duration::from_secs(20);
/// Deadline for things that wait on a watchdog timeout or a schedule on top of that.
pub const LONG: Duration = Duration::from_secs(40);

/// How often nodes heartbeat in these tests (`AM_HEARTBEAT`).
const NODE_HEARTBEAT: &str = "500ms";

pub fn amqp_url() -> String {
    std::env::var("AM_TEST_AMQP_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned())
}

fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_test_writer()
        .try_init();
}

/// Polls `check` every 100 ms until it returns `Some`.
async fn poll<T, F, Fut>(mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    loop {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Polls `check` until it returns `Some`, or panics after `timeout` naming `what`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    match tokio::time::timeout(timeout, poll(check)).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {timeout:?} waiting for {what}"),
    }
}

/// Awaits `fut` for at most [`SHORT`], or panics naming `what`: a broker call that never
/// answers fails its test instead of holding the whole run.
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(SHORT, fut).await {
        Ok(v) => v,
        Err(_) => panic!("no answer within {SHORT:?} to {what}"),
    }
}

/// A new connection to the test broker (bounded by [`within`]).
pub async fn connect() -> Result<Connection, lapin::Error> {
    connect_to(&amqp_url()).await
}

/// A new connection to the first member of `urls` (one AMQP URL or a comma-separated list of a
/// cluster's members) that answers, each try bounded by [`within`].
pub async fn connect_to(urls: &str) -> Result<Connection, lapin::Error> {
    let urls: Vec<&str> = urls.split(',').map(str::trim).collect();
    let (last, others) = urls.split_last().expect("at least one broker URL");
    async fn attempt(url: &str) -> Result<Connection, lapin::Error> {
        within(
            "a connection to the test broker",
            Connection::connect(url, ConnectionProperties::default()),
        )
        .await
    }
    for url in others {
        if let Ok(conn) = attempt(url).await {
            return Ok(conn);
        }
    }
    attempt(last).await
}

/// Sleeps until the wall clock reaches `at` (no-op when it has passed).
pub async fn sleep_until(at: DateTime<Utc>) {
    if let Ok(d) = (at - Utc::now()).to_std() {
        tokio::time::sleep(d).await;
    }
}

// ---------------------------------------------------------------------------------------------
// The world

pub struct World {
    pub prefix: String,
    /// The broker the test's own connections, its managers and nodes use by default (one
    /// URL, or a cluster's members separated by commas).
    pub broker: String,
    /// The test's own connection to the database (managers open their own).
    pub db: DatabaseConnection,
    /// The data exchange of the catalog's data queue `events` (unique per test).
    pub address: String,
    nodes: BTreeMap<String, Node>,
    test_db: TestDb,
    /// The managers' queues expire when unused this long: on the shared broker, so that a
    /// test stopped midway leaves nothing behind for long.
    queue_expiry: Option<Duration>,
    /// Variables the test's nodes start with besides their own (e.g. where to send traces).
    pub node_env: Vec<(String, String)>,
}

impl World {
    pub async fn new(backend: Backend) -> World {
        let mut w = Self::on(backend, &amqp_url()).await;
        w.queue_expiry = Some(Duration::from_secs(60));
        w
    }

    /// A world whose managers, nodes and connections use `broker` (a cluster's members). Its
    /// queues do not expire: a broker would delete an unused queue with its messages, and a
    /// node cut off for a minute leaves its queue unused that long; the cluster goes with its
    /// test anyway.
    pub async fn on(backend: Backend, broker: &str) -> World {
        init_tracing();
        let id = Uuid::new_v4().simple().to_string();
        let prefix = format!("rt-{}", &id[..12]);
        let test_db = TestDb::new(backend).await;
        World {
            address: format!("{prefix}.events"),
            prefix,
            broker: broker.to_owned(),
            db: test_db.db.clone(),
            nodes: BTreeMap::new(),
            test_db,
            queue_expiry: None,
            node_env: Vec::new(),
        }
    }

    /// Runtime tunables for tests: nodes are lost 5 s after their last heartbeat (they
    /// heartbeat every 500 ms), streams restart after 1 s.
    pub fn config(&self) -> RuntimeConfig {
        RuntimeConfig {
            node_timeout: chrono::Duration::seconds(5),
            wait_timeout: chrono::Duration::seconds(60),
            stream_restart_delay: chrono::Duration::seconds(1),
            ..RuntimeConfig::new(&self.prefix)
        }
    }

    /// A manager with [`World::config`] connected to the test broker.
    pub async fn manager(&self) -> Manager {
        self.manager_with(self.config(), &self.broker).await
    }

    /// A manager with its own database connection, as a separate process would have.
    pub async fn manager_with(&self, cfg: RuntimeConfig, amqp_url: &str) -> Manager {
        let db = am_services::db::connect(&self.test_db.url)
            .await
            .expect("the manager connects to the test database");
        Manager::start(db, cfg, amqp_url, self.queue_expiry).await
    }

    /// Replaces the catalog.
    pub async fn seed(&self, catalog: Catalog) {
        am_services::catalog::import(&self.db, &Principal::cli(), catalog)
            .await
            .expect("the test catalog is valid");
    }

    /// Starts a `demo-node` process for `host` (capacity 8).
    pub fn start_node(&mut self, host: &str) {
        self.start_node_with(host, 8);
    }

    pub fn start_node_with(&mut self, host: &str, capacity: u32) {
        let broker = self.broker.clone();
        self.start_node_via(host, capacity, &broker);
    }

    /// Starts a `demo-node` process for `host` connecting through `amqp_url` (one URL, or a
    /// comma-separated list of a cluster's members).
    pub fn start_node_via(&mut self, host: &str, capacity: u32, amqp_url: &str) {
        let node = Node::spawn(self, host, capacity, amqp_url, None, None);
        self.nodes.insert(host.to_owned(), node);
    }

    /// Starts a `demo-node` process for `host` whose log, with every message its `echo` agent
    /// handles, goes to `log`: how a test counts each message it sent.
    pub fn start_node_logged(&mut self, host: &str, capacity: u32, log: &std::path::Path) {
        let node = Node::spawn(self, host, capacity, &self.broker, Some(log), None);
        self.nodes.insert(host.to_owned(), node);
    }

    /// [`World::start_node_logged`] for a node inside network namespace `netns`, reaching the
    /// broker through `amqp_url` (addresses as the namespace sees them).
    pub fn start_node_apart(
        &mut self,
        host: &str,
        capacity: u32,
        log: &std::path::Path,
        netns: &str,
        amqp_url: &str,
    ) {
        let node = Node::spawn(self, host, capacity, amqp_url, Some(log), Some(netns));
        self.nodes.insert(host.to_owned(), node);
    }

    pub fn node(&mut self, host: &str) -> &mut Node {
        self.nodes
            .get_mut(host)
            .unwrap_or_else(|| panic!("no node {host} in this test"))
    }

    /// Starts a node on each host and a manager, and waits until the nodes are live.
    pub async fn start_pool(&mut self, hosts: &[&str]) -> Manager {
        for h in hosts {
            self.start_node(h);
        }
        let m = self.manager().await;
        self.wait_live(hosts).await;
        m
    }

    /// Waits until every host has a live node heard from within the last 2 s.
    pub async fn wait_live(&self, hosts: &[&str]) {
        self.wait_live_within(hosts, SHORT).await;
    }

    pub async fn wait_live_within(&self, hosts: &[&str], timeout: Duration) {
        eventually(&format!("live nodes {hosts:?}"), timeout, || async {
            let cutoff = Utc::now() - chrono::Duration::seconds(2);
            let live = nodes::Entity::find()
                .filter(nodes::Column::ApplicationId.eq(APP))
                .filter(nodes::Column::Status.eq("live"))
                .filter(nodes::Column::LastHeartbeatAt.gt(cutoff))
                .all(&self.db)
                .await
                .ok()?;
            hosts
                .iter()
                .all(|h| live.iter().any(|n| n.host == *h))
                .then_some(())
        })
        .await;
    }

    // --- reading the database --------------------------------------------------------------

    pub async fn activation(&self, id: Uuid) -> activations::Model {
        activations::Entity::find_by_id(id)
            .one(&self.db)
            .await
            .expect("query")
            .unwrap_or_else(|| panic!("activation {id} exists"))
    }

    /// Host rows of an activation, in dispatch order.
    pub async fn hosts_of(&self, id: Uuid) -> Vec<activation_hosts::Model> {
        activation_hosts::Entity::find()
            .filter(activation_hosts::Column::ActivationId.eq(id))
            .order_by_asc(activation_hosts::Column::Id)
            .all(&self.db)
            .await
            .expect("query")
    }

    pub async fn events_of(&self, id: Uuid) -> Vec<activation_events::Model> {
        activation_events::Entity::find()
            .filter(activation_events::Column::ActivationId.eq(id))
            .order_by_asc(activation_events::Column::Id)
            .all(&self.db)
            .await
            .expect("query")
    }

    /// Activations of a launch setting run on its own (not as a group member), oldest first.
    pub async fn runs_of(&self, ls: &str) -> Vec<activations::Model> {
        activations::Entity::find()
            .filter(activations::Column::LaunchSettingId.eq(ls))
            .filter(activations::Column::ParentId.is_null())
            .order_by_asc(activations::Column::CreatedAt)
            .order_by_asc(activations::Column::Id)
            .all(&self.db)
            .await
            .expect("query")
    }

    /// Messages launch setting `ls` processed, over every dispatch of every activation of it
    /// (from the heartbeats' and final reports' counters).
    pub async fn processed_by(&self, ls: &str) -> i64 {
        let ids: Vec<Uuid> = self.runs_of(ls).await.into_iter().map(|a| a.id).collect();
        activation_hosts::Entity::find()
            .filter(activation_hosts::Column::ActivationId.is_in(ids))
            .all(&self.db)
            .await
            .expect("query")
            .iter()
            .map(|h| h.processed)
            .sum()
    }

    /// Group activations of a group, oldest first.
    pub async fn group_runs(&self, group: &str) -> Vec<activations::Model> {
        activations::Entity::find()
            .filter(activations::Column::GroupId.eq(group))
            .filter(activations::Column::ParentId.is_null())
            .order_by_asc(activations::Column::CreatedAt)
            .order_by_asc(activations::Column::Id)
            .all(&self.db)
            .await
            .expect("query")
    }

    /// Member runs of a group activation, by position.
    pub async fn members_of(&self, parent: Uuid) -> Vec<activations::Model> {
        activations::Entity::find()
            .filter(activations::Column::ParentId.eq(parent))
            .order_by_asc(activations::Column::Position)
            .all(&self.db)
            .await
            .expect("query")
    }

    pub async fn launch_setting(&self, id: &str) -> launch_settings::Model {
        launch_settings::Entity::find_by_id(id.to_owned())
            .one(&self.db)
            .await
            .expect("query")
            .unwrap_or_else(|| panic!("launch setting {id} exists"))
    }

    pub async fn group(&self, id: &str) -> schedule_groups::Model {
        schedule_groups::Entity::find_by_id(id.to_owned())
            .one(&self.db)
            .await
            .expect("query")
            .unwrap_or_else(|| panic!("group {id} exists"))
    }

    pub async fn trips_of(&self, ls: &str) -> Vec<breaker_trips::Model> {
        breaker_trips::Entity::find()
            .filter(breaker_trips::Column::LaunchSettingId.eq(ls))
            .order_by_asc(breaker_trips::Column::Id)
            .all(&self.db)
            .await
            .expect("query")
    }

    /// Failure reports stored for a launch setting.
    pub async fn failures_of(&self, ls: &str) -> usize {
        failure_logs::Entity::find()
            .filter(failure_logs::Column::LaunchSettingId.eq(ls))
            .all(&self.db)
            .await
            .expect("query")
            .len()
    }

    /// Waits until every report the nodes sent so far has been applied, breaker policy
    /// included: the manager applies report batches one after another in queue order, so two
    /// rounds of heartbeats from every node stored after now come after them.
    pub async fn reports_drained(&self, hosts: &[&str]) {
        for _ in 0..2 {
            let since = Utc::now();
            self.wait("fresh heartbeats from every node", SHORT, || async {
                let rows = nodes::Entity::find()
                    .filter(nodes::Column::ApplicationId.eq(APP))
                    .filter(nodes::Column::LastHeartbeatAt.gt(since))
                    .all(&self.db)
                    .await
                    .ok()?;
                hosts
                    .iter()
                    .all(|h| rows.iter().any(|n| n.host == *h))
                    .then_some(())
            })
            .await;
        }
    }

    /// Audit entries about one entity, oldest first.
    pub async fn audit_of(&self, entity_id: &str) -> Vec<audit_log::Model> {
        audit_log::Entity::find()
            .filter(audit_log::Column::EntityId.eq(entity_id))
            .order_by_asc(audit_log::Column::Id)
            .all(&self.db)
            .await
            .expect("query")
    }

    pub async fn outbox(&self) -> Vec<outbox::Model> {
        outbox::Entity::find()
            .order_by_asc(outbox::Column::Id)
            .all(&self.db)
            .await
            .expect("query")
    }

    /// Waits until the activation is in one of `statuses`.
    pub async fn wait_status(
        &self,
        id: Uuid,
        statuses: &[&str],
        timeout: Duration,
    ) -> activations::Model {
        let found = tokio::time::timeout(
            timeout,
            poll(|| async {
                let a = activations::Entity::find_by_id(id)
                    .one(&self.db)
                    .await
                    .ok()??;
                statuses.contains(&a.status.as_str()).then_some(a)
            }),
        )
        .await;
        match found {
            Ok(a) => a,
            Err(_) => panic!(
                "activation {id} not {statuses:?} within {timeout:?}\n{}",
                self.dump().await
            ),
        }
    }

    /// Waits until the activation has ended (any final state).
    pub async fn wait_done(&self, id: Uuid, timeout: Duration) -> activations::Model {
        self.wait_status(
            id,
            &["succeeded", "failed", "interrupted", "skipped"],
            timeout,
        )
        .await
    }

    /// Waits for `check` on the database, dumping the runtime tables when it never holds.
    pub async fn wait<T, F, Fut>(&self, what: &str, timeout: Duration, check: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        match tokio::time::timeout(timeout, poll(check)).await {
            Ok(v) => v,
            Err(_) => panic!(
                "timed out after {timeout:?} waiting for {what}\n{}",
                self.dump().await
            ),
        }
    }

    /// The runtime tables in a few lines, for failure messages.
    pub async fn dump(&self) -> String {
        let mut out = String::from("--- activations (oldest first) ---\n");
        let all = activations::Entity::find()
            .order_by_asc(activations::Column::CreatedAt)
            .all(&self.db)
            .await
            .unwrap_or_default();
        for a in all {
            out += &format!(
                "{} ls={:?} group={:?} parent={:?} pos={:?} trigger={} status={} token={} error={:?} created={}\n",
                a.id,
                a.launch_setting_id,
                a.group_id,
                a.parent_id,
                a.position,
                a.trigger,
                a.status,
                a.fencing_token,
                a.error,
                a.created_at.format("%H:%M:%S%.3f"),
            );
            for h in self.hosts_of(a.id).await {
                out += &format!(
                    "    host {} token={} status={} error={:?}\n",
                    h.host, h.fencing_token, h.status, h.error
                );
            }
            for e in self.events_of(a.id).await {
                out += &format!(
                    "    {} {} {:?} {:?}\n",
                    e.at.format("%H:%M:%S%.3f"),
                    e.kind,
                    e.host,
                    e.detail
                );
            }
        }
        out += "--- nodes ---\n";
        for n in nodes::Entity::find()
            .all(&self.db)
            .await
            .unwrap_or_default()
        {
            out += &format!(
                "{} {} last heartbeat {}\n",
                n.host,
                n.status,
                n.last_heartbeat_at.format("%H:%M:%S%.3f")
            );
        }
        let unsent = self
            .outbox()
            .await
            .into_iter()
            .filter(|o| o.sent_at.is_none())
            .count();
        out += &format!("--- outbox: {unsent} unsent ---\nnow {}\n", Utc::now());
        out
    }

    // --- the broker ------------------------------------------------------------------------

    /// Publishes a data message to the catalog's data exchange once a manager's reconciler has
    /// declared the catalog's topology.
    pub async fn publish(&self, body: &str) {
        self.publish_to(&self.address.clone(), body).await;
    }

    /// Publishes a data message to `exchange`, as [`World::publish`] does to the catalog's.
    pub async fn publish_to(&self, exchange: &str, body: &str) {
        eventually("the broker reconciled to the catalog", SHORT, || async {
            am_services::topology::revisions(&self.db)
                .await
                .ok()?
                .in_sync()
                .then_some(())
        })
        .await;
        let conn = connect_to(&self.broker)
            .await
            .expect("the test broker is reachable");
        let channel = conn.create_channel().await.expect("channel");
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .expect("confirms");
        eventually(
            &format!("a subscription bound to {exchange}"),
            SHORT,
            || async {
                let confirm = channel
                    .basic_publish(
                        exchange.into(),
                        "".into(),
                        BasicPublishOptions {
                            mandatory: true,
                            ..BasicPublishOptions::default()
                        },
                        body.as_bytes(),
                        BasicProperties::default()
                            .with_delivery_mode(2)
                            .with_message_id(Uuid::new_v4().to_string().into()),
                    )
                    .await
                    .ok()?
                    .await
                    .ok()?;
                confirm.take_message().is_none().then_some(())
            },
        )
        .await;
        agent_client::close(&conn, 200, "published").await;
    }

    /// Stops the nodes and deletes the broker objects this test's catalog names.
    pub async fn finish(mut self, launch_settings: &[&str]) {
        let hosts: Vec<String> = self.nodes.keys().cloned().collect();
        for node in self.nodes.values_mut() {
            node.kill().await;
        }
        let names = Topology::new(self.prefix.clone()).names().clone();
        let Ok(conn) = connect_to(&self.broker).await else {
            return;
        };
        let mut queues = vec![
            names.reports_queue(),
            names.quarantine_queue(),
            names.dead_letter_queue(),
        ];
        queues.extend(hosts.iter().map(|h| names.node_queue(APP, h)));
        queues.extend(launch_settings.iter().map(|ls| names.subscription(ls)));
        // A delete of something absent may close the channel: one channel per delete.
        for q in queues {
            if let Ok(ch) = conn.create_channel().await {
                let _ = ch
                    .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                    .await;
                let _ = ch.close(200, "".into()).await;
            }
        }
        for e in [names.control_exchange(), self.address.clone()] {
            if let Ok(ch) = conn.create_channel().await {
                let _ = ch
                    .exchange_delete(e.as_str().into(), ExchangeDeleteOptions::default())
                    .await;
                let _ = ch.close(200, "".into()).await;
            }
        }
        agent_client::close(&conn, 200, "test done").await;
    }
}

// ---------------------------------------------------------------------------------------------
// The manager

/// One manager replica in-process: the broker supervisor and the runtime tasks of `serve`.
pub struct Manager {
    pub services: Services,
    stop: CancellationToken,
    tasks: JoinSet<()>,
    broker: tokio::task::JoinHandle<()>,
}

impl Manager {
    async fn start(
        db: DatabaseConnection,
        cfg: RuntimeConfig,
        amqp_url: &str,
        queue_expiry: Option<Duration>,
    ) -> Manager {
        let settings = Settings {
            node_timeout: cfg.node_timeout,
            ..Settings::default()
        };
        let mut topology = Topology::new(cfg.names.prefix().to_owned());
        if let Some(expiry) = queue_expiry {
            topology = topology.ephemeral(expiry);
        }
        let services = Services::new(db, BrokerStatus::default(), settings).with_runtime(cfg);
        let stop = CancellationToken::new();
        let (link_tx, link) = broker::link();
        let broker = tokio::spawn(broker::supervise(
            agent_client::BrokerAddresses::parse(amqp_url).expect("the test broker's address"),
            topology.clone(),
            services.broker.clone(),
            link_tx,
            Arc::clone(&services.runtime.metrics),
            stop.clone(),
        ));
        let tasks = runtime::spawn(&services, topology, link, stop.clone());
        Manager {
            services,
            stop,
            tasks,
            broker,
        }
    }

    /// This replica's counters (they outlive [`Manager::stop`]).
    pub fn metrics(&self) -> Arc<Metrics> {
        Arc::clone(&self.services.runtime.metrics)
    }

    /// One counter of this replica.
    pub fn metric(&self, pick: impl Fn(&Metrics) -> &std::sync::atomic::AtomicU64) -> u64 {
        pick(&self.services.runtime.metrics).load(Ordering::Relaxed)
    }

    pub fn broker_up(&self) -> bool {
        self.services.broker.get().up
    }

    /// *Run now* as an operator would press it.
    pub async fn run_now(&self, what: EntityRef) -> Uuid {
        run::run_now(
            &self.services.db,
            &self.services.runtime,
            &Principal::cli(),
            &what,
        )
        .await
        .unwrap_or_else(|e| panic!("run now of {what}: {e}"))
    }

    pub async fn run_ls(&self, id: &str) -> Uuid {
        self.run_now(EntityRef::LaunchSetting(id.to_owned())).await
    }

    /// As `kill -9` of a replica's process: every task dropped where it is (an open
    /// transaction rolls back, leases and claims are left to expire), nothing handed over.
    pub async fn kill(mut self) {
        self.tasks.abort_all();
        self.broker.abort();
        while self.tasks.join_next().await.is_some() {}
        let _ = (&mut self.broker).await;
        // A dead process's connections close, and the database rolls back what they held
        // open; a dropped in-process transaction would roll back only when its pooled
        // connection is next used.
        // Bounded: closing waits for every checked-out connection to come back.
        let _ = tokio::time::timeout(SHORT, self.services.db.clone().close()).await;
    }

    /// Stops every task and waits for them, as `serve` does on shutdown.
    pub async fn stop(mut self) {
        self.stop.cancel();
        while self.tasks.join_next().await.is_some() {}
        let _ = (&mut self.broker).await;
    }
}

impl Drop for Manager {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

// ---------------------------------------------------------------------------------------------
// Nodes

/// `target/debug/demo-node`, next to the directory holding this test binary.
fn demo_node_binary() -> PathBuf {
    if let Ok(p) = std::env::var("AM_TEST_DEMO_NODE") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/debug/deps/runtime-<hash> → target/debug/demo-node
    let bin = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join("demo-node"))
        .expect("the test binary lives in target/<profile>/deps");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build -p agent-client --features demo --bin demo-node` first (a \
         workspace-wide test run, as scripts/test.sh's, builds it), or point AM_TEST_DEMO_NODE \
         at it",
        bin.display()
    );
    bin
}

/// A `demo-node` process serving application `demo` on one host name.
pub struct Node {
    child: Child,
}

impl Node {
    fn spawn(
        w: &World,
        host: &str,
        capacity: u32,
        amqp_url: &str,
        log: Option<&std::path::Path>,
        netns: Option<&str>,
    ) -> Node {
        let rust_log = match log {
            // What a node says of its broker connection and subscriptions is part of its story.
            Some(_) => "warn,demo_node=info,agent_client=info".to_owned(),
            None => std::env::var("AM_TEST_NODE_LOG").unwrap_or_else(|_| "warn".to_owned()),
        };
        let stdout = match log {
            Some(path) => Stdio::from(std::fs::File::create(path).expect("the node's log file")),
            None => Stdio::inherit(),
        };
        // `ip netns exec` enters the namespace and execs the node: the child's pid is the
        // node's, for the signals of `freeze` and `kill`.
        let mut command = match netns {
            Some(ns) => {
                let mut c = tokio::process::Command::new("ip");
                c.args(["netns", "exec", ns]).arg(demo_node_binary());
                c
            }
            None => tokio::process::Command::new(demo_node_binary()),
        };
        match w.queue_expiry {
            Some(expiry) => command.env("AM_QUEUE_EXPIRY", format!("{}s", expiry.as_secs())),
            None => command.env_remove("AM_QUEUE_EXPIRY"),
        };
        let child = command
            .env("AM_AMQP_URL", amqp_url)
            .env("AM_APP", APP)
            .env("AM_HOST", host)
            .env("AM_PREFIX", &w.prefix)
            .env("AM_CAPACITY", capacity.to_string())
            .env("AM_HEARTBEAT", NODE_HEARTBEAT)
            .env("RUST_LOG", rust_log)
            .env_remove("AM_DEMO_PRODUCE")
            .envs(w.node_env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(stdout)
            .kill_on_drop(true)
            .spawn()
            .expect("demo-node starts");
        Node { child }
    }

    /// SIGKILL, as a crash or a power cut: no goodbye, no report.
    pub async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }

    /// SIGSTOP: the process freezes (no heartbeat, no answer) until [`Node::thaw`].
    pub async fn freeze(&self) {
        self.signal("-STOP").await;
    }

    /// SIGCONT after [`Node::freeze`].
    pub async fn thaw(&self) {
        self.signal("-CONT").await;
    }

    async fn signal(&self, sig: &str) {
        let pid = self.child.id().expect("the node still runs");
        let status = tokio::process::Command::new("kill")
            .arg(sig)
            .arg(pid.to_string())
            .status()
            .await
            .expect("kill runs");
        assert!(status.success(), "kill {sig} {pid} failed");
    }
}

// ---------------------------------------------------------------------------------------------
// A cuttable TCP proxy in front of the broker

/// Forwards TCP connections to the broker; [`Proxy::cut`] closes its listener and every
/// connection (the broker seems gone), [`Proxy::restore`] listens again on the same port.
pub struct Proxy {
    port: u16,
    upstream: String,
    running: Option<CancellationToken>,
}

impl Proxy {
    pub async fn start() -> Proxy {
        let url = url::Url::parse(&amqp_url()).expect("AMQP URL");
        let upstream = format!(
            "{}:{}",
            url.host_str().unwrap_or("127.0.0.1"),
            url.port().unwrap_or(5672)
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let mut proxy = Proxy {
            port,
            upstream,
            running: None,
        };
        proxy.serve(listener);
        proxy
    }

    /// The broker URL through the proxy.
    pub fn url(&self) -> String {
        let mut url = url::Url::parse(&amqp_url()).expect("AMQP URL");
        url.set_host(Some("127.0.0.1")).expect("host");
        url.set_port(Some(self.port)).expect("port");
        url.to_string()
    }

    fn serve(&mut self, listener: TcpListener) {
        let stop = CancellationToken::new();
        self.running = Some(stop.clone());
        let upstream = self.upstream.clone();
        tokio::spawn(async move {
            loop {
                let (mut inbound, _) = tokio::select! {
                    r = listener.accept() => match r {
                        Ok(c) => c,
                        Err(_) => continue,
                    },
                    () = stop.cancelled() => return,
                };
                let upstream = upstream.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(&upstream).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        () = stop.cancelled() => {}
                    }
                });
            }
        });
    }

    /// Closes the listener and every connection through it.
    pub fn cut(&mut self) {
        if let Some(stop) = self.running.take() {
            stop.cancel();
        }
    }

    /// Listens again on the same port.
    pub async fn restore(&mut self) {
        let addr = format!("127.0.0.1:{}", self.port);
        let listener = eventually("the proxy port to be free again", SHORT, || async {
            TcpListener::bind(&addr).await.ok()
        })
        .await;
        self.serve(listener);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
    }
}

// ---------------------------------------------------------------------------------------------
// Catalogs

/// A catalog of application `demo` on `hosts`, with the agents `demo-node` offers, the data
/// queue `events` on the test's own exchange, and the launch settings and groups a test adds.
pub struct CatalogBuilder {
    doc: Value,
}

impl CatalogBuilder {
    pub fn new(w: &World, hosts: &[&str]) -> Self {
        // Titles and schemas as `demo-node` publishes them, so its publication changes little.
        let agent = |id: &str, title: &str, input: &str, queue: Option<&str>, params: Value| {
            let mut a = json!({
                "application": APP, "id": id, "title": title, "input": input,
                "concurrency": "ANY", "overlap": "allow", "parameters": params,
            });
            if let Some(q) = queue {
                a["data_queue"] = json!(q);
            }
            a
        };
        let rate = |name: &str, title: &str| json!({ "name": name, "title": title, "type": "decimal", "default": 0, "min": 0, "max": 1 });
        let doc = json!({
            "version": 1,
            "applications": [{ "id": APP, "title": "Demo", "default_pool": "pool" }],
            "pools": [{ "id": "pool", "hosts": hosts }],
            "data_queues": [{ "id": "events", "kind": "topic", "address": w.address }],
            "classifiers": [{
                "application": APP, "name": "organisations", "title": "Organisations",
                "values": [{ "code": "acme", "label": "ACME Corporation" }],
            }],
            "agents": [
                agent("echo", "Echo", "messages", Some("events"), json!([{
                    "name": "organisations", "title": "Organisations",
                    "type": "classifier(organisations)", "array": true,
                }])),
                agent("flaky", "Flaky", "messages", Some("events"), json!([
                    rate("temporary_rate", "Share of temporary failures"),
                    rate("failure_rate", "Share of failures"),
                ])),
                agent("poison", "Poison", "messages", Some("events"), json!([])),
                agent("sleep", "Sleep", "standalone", None, json!([{
                    "name": "duration", "title": "Duration", "type": "duration", "default": "10s",
                }])),
                agent("fail", "Fail", "standalone", None, json!([])),
            ],
            "launch_settings": [],
            "schedule_groups": [],
        });
        Self { doc }
    }

    /// Sets an agent's operator-owned policies.
    pub fn agent(mut self, id: &str, concurrency: &str, overlap: &str) -> Self {
        let agents = self.doc["agents"].as_array_mut().expect("agents");
        let a = agents
            .iter_mut()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("agent {id}"));
        a["concurrency"] = json!(concurrency);
        a["overlap"] = json!(overlap);
        self
    }

    /// A launch setting `{id, agent, kind}` plus `extra` fields.
    pub fn ls(mut self, id: &str, agent: &str, kind: &str, extra: Value) -> Self {
        let mut ls = json!({ "id": id, "application": APP, "agent": agent, "kind": kind });
        merge(&mut ls, extra);
        self.doc["launch_settings"]
            .as_array_mut()
            .expect("launch settings")
            .push(ls);
        self
    }

    /// A scheduled `sleep` launch setting sleeping `duration`.
    pub fn sleep(self, id: &str, duration: &str) -> Self {
        self.sleep_with(id, duration, json!({}))
    }

    pub fn sleep_with(self, id: &str, duration: &str, extra: Value) -> Self {
        let mut e = json!({ "parameters": { "duration": duration } });
        merge(&mut e, extra);
        self.ls(id, "sleep", "scheduled", e)
    }

    /// A schedule group in UTC.
    pub fn group(mut self, id: &str, cron: &str, members: &[&str], extra: Value) -> Self {
        let mut g = json!({
            "id": id, "application": APP, "cron": cron, "time_zone": "UTC", "members": members,
        });
        merge(&mut g, extra);
        self.doc["schedule_groups"]
            .as_array_mut()
            .expect("groups")
            .push(g);
        self
    }

    /// The catalog; scheduled launch settings in no group go to a disabled group (the catalog
    /// wants every scheduled launch setting in one), so tests run them by hand.
    pub fn build(mut self) -> Catalog {
        let grouped: Vec<Value> = self.doc["schedule_groups"]
            .as_array()
            .expect("groups")
            .iter()
            .flat_map(|g| g["members"].as_array().cloned().unwrap_or_default())
            .collect();
        let loose: Vec<Value> = self.doc["launch_settings"]
            .as_array()
            .expect("launch settings")
            .iter()
            .filter(|l| l["kind"] == "scheduled" && !grouped.contains(&l["id"]))
            .map(|l| l["id"].clone())
            .collect();
        if !loose.is_empty() {
            self.doc["schedule_groups"]
                .as_array_mut()
                .expect("groups")
                .push(json!({
                    "id": "demo.by-hand", "application": APP, "cron": "0 0 0 1 1 *",
                    "enabled": false, "members": loose,
                }));
        }
        serde_json::from_value(self.doc).expect("a well-formed catalog document")
    }
}

fn merge(into: &mut Value, extra: Value) {
    if let (Some(into), Value::Object(extra)) = (into.as_object_mut(), extra) {
        for (k, v) in extra {
            match (into.get_mut(&k), v) {
                (Some(existing @ Value::Object(_)), v @ Value::Object(_)) => merge(existing, v),
                (_, v) => {
                    into.insert(k, v);
                }
            }
        }
    }
}

/// When a run held a slot by its host rows: from its first host's start to its last host's end
/// (still running: until now); `None` if no host started it. The rule every overlap check uses.
pub fn held<'a>(
    hosts: impl IntoIterator<Item = &'a activation_hosts::Model>,
) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    let hosts: Vec<_> = hosts.into_iter().collect();
    let start = hosts.iter().filter_map(|h| h.started_at).min()?;
    let end = if hosts.iter().all(|h| h.finished_at.is_some()) {
        hosts.iter().filter_map(|h| h.finished_at).max()
    } else {
        None
    };
    Some((start, end.unwrap_or_else(Utc::now)))
}

/// The fire time a cron fire's key names (`group:<id>:<RFC 3339 second>`).
pub fn fire_time(a: &activations::Model) -> DateTime<Utc> {
    let key = a.fire_key.as_deref().expect("a scheduled fire has a key");
    let at = key.rsplitn(4, ':').collect::<Vec<_>>();
    // The time itself contains two colons: take the last three pieces back together.
    let text = format!("{}:{}:{}", at[2], at[1], at[0]);
    chrono::NaiveDateTime::parse_from_str(&text, "%Y-%m-%dT%H:%M:%SZ")
        .unwrap_or_else(|e| panic!("fire key {key}: {e}"))
        .and_utc()
}
