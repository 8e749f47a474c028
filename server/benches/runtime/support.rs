//! What every scenario needs: a temporary database and broker prefix, the manager's runtime,
//! a publisher, and the process's memory.

use agent_client::Topology;
use am_services::{Services, Settings, health::BrokerStatus, runtime::RuntimeConfig};
use anyhow::{Context, Result, bail};
use chrono::Duration as ChronoDuration;
use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties,
    options::{
        BasicPublishOptions, ConfirmSelectOptions, ExchangeDeleteOptions, QueueDeclareOptions,
        QueueDeleteOptions,
    },
    types::FieldTable,
};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use std::{path::PathBuf, time::Duration};
use tokio_util::sync::CancellationToken;

/// The application every scenario's catalog and reports name.
pub const APP: &str = "bench";

pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub fn amqp_url() -> String {
    std::env::var("AM_TEST_AMQP_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

/// A temporary SQLite database and broker prefix, removed on drop (and by [`Round::cleanup`]
/// on the broker).
pub struct Round {
    dir: PathBuf,
    pub url: String,
    pub prefix: String,
    pub topology: Topology,
}

impl Round {
    pub fn new() -> Result<Self> {
        let unique = uuid::Uuid::new_v4().simple().to_string();
        let dir = std::env::temp_dir().join(format!("am-bench-{unique}"));
        std::fs::create_dir_all(&dir)?;
        let url = format!("sqlite://{}/bench.sqlite?mode=rwc", dir.display());
        let prefix = format!("bench-{}", &unique[..12]);
        // The expiry only catches what a crashed round leaves behind; a round deletes its own.
        let topology = Topology::new(prefix.clone()).ephemeral(Duration::from_secs(600));
        Ok(Self {
            dir,
            url,
            prefix,
            topology,
        })
    }

    pub async fn cleanup(&self, conn: &Connection, hosts: &[String]) {
        let Ok(channel) = conn.create_channel().await else {
            return;
        };
        let names = self.topology.names();
        let mut queues = vec![
            names.reports_queue(),
            names.quarantine_queue(),
            names.dead_letter_queue(),
        ];
        queues.extend(hosts.iter().map(|h| names.node_queue(APP, h)));
        for q in queues {
            let _ = channel
                .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                .await;
        }
        let _ = channel
            .exchange_delete(
                names.control_exchange().as_str().into(),
                ExchangeDeleteOptions::default(),
            )
            .await;
        let _ = channel.close(200, "bench done".into()).await;
    }
}

impl Drop for Round {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `VmRSS` and `VmHWM` of this process, in MB.
pub fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Resets the peak RSS (`VmHWM`) to the current RSS, so set-up does not count.
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

pub async fn count(db: &DatabaseConnection, sql: &str) -> Result<i64> {
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await?
        .context("count returned no row")?;
    Ok(row.try_get_by_index::<i64>(0)?)
}

pub fn ms(d: ChronoDuration) -> f64 {
    d.num_microseconds()
        .map_or(f64::NAN, |us| us as f64 / 1000.0)
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn hosts(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("h{i}")).collect()
}

/// Starts the manager's broker connection and runtime, as `serve` does.
pub fn start_manager(
    round: &Round,
    db: &DatabaseConnection,
    stop: &CancellationToken,
) -> (tokio::task::JoinHandle<()>, tokio::task::JoinSet<()>) {
    let status = BrokerStatus::default();
    let services = Services::new(db.clone(), status.clone(), Settings::default())
        .with_runtime(RuntimeConfig::new(&round.prefix));
    let (link_tx, link) = server::broker::link();
    let broker = tokio::spawn(server::broker::supervise(
        agent_client::BrokerAddresses::parse(&amqp_url()).expect("the bench broker's address"),
        round.topology.clone(),
        status,
        link_tx,
        std::sync::Arc::clone(&services.runtime.metrics),
        stop.clone(),
    ));
    let tasks = server::runtime::spawn(&services, round.topology.clone(), link, stop.clone());
    (broker, tasks)
}

pub async fn stop_manager(
    stop: &CancellationToken,
    broker: tokio::task::JoinHandle<()>,
    mut tasks: tokio::task::JoinSet<()>,
) {
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while tasks.join_next().await.is_some() {}
        let _ = broker.await;
    })
    .await;
}

pub async fn publisher(url: &str) -> Result<(Connection, Channel)> {
    let conn = Connection::connect(url, ConnectionProperties::default()).await?;
    let channel = conn.create_channel().await?;
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await?;
    Ok((conn, channel))
}

/// Publishes `n` bodies made by `body` to a queue through the default exchange, at most 1,000
/// unconfirmed at a time, as the client library's report outbox does; fails on any refusal.
/// Bodies are made as they go, so the publisher's memory does not count as the manager's.
pub async fn publish_all(
    channel: &Channel,
    queue: &str,
    n: usize,
    body: impl Fn(usize) -> Vec<u8>,
) -> Result<()> {
    let mut next = 0;
    while next < n {
        let end = (next + 1000).min(n);
        let mut confirms = Vec::with_capacity(end - next);
        for i in next..end {
            confirms.push(
                channel
                    .basic_publish(
                        "".into(),
                        queue.into(),
                        BasicPublishOptions {
                            mandatory: true,
                            ..BasicPublishOptions::default()
                        },
                        &body(i),
                        BasicProperties::default()
                            .with_delivery_mode(2)
                            .with_content_type("application/json".into()),
                    )
                    .await?,
            );
        }
        for c in confirms {
            let c = c.await?;
            if !c.is_ack() || c.take_message().is_some() {
                bail!("the broker refused or returned a publication to {queue}");
            }
        }
        next = end;
    }
    Ok(())
}

pub async fn queue_depth(channel: &Channel, queue: &str) -> Result<u32> {
    let q = channel
        .queue_declare(
            queue.into(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
    Ok(q.message_count())
}
