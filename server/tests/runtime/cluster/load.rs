//! The load under the faults: schedule groups firing, and producers publishing numbered
//! messages with confirms that the nodes' logs account for one by one.

use crate::harness::connect_to;
use chrono::{DateTime, Utc};
use lapin::{
    BasicProperties,
    options::{BasicPublishOptions, ConfirmSelectOptions},
};
use std::{
    collections::BTreeMap,
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

/// The load. The test command runs the short profile (20 groups firing every second, 2,000
/// messages per data queue, a 15 s partition, ~1.5 minutes); `AM_FAULTS_PROFILE=full` runs the
/// full one (200 groups firing every 5 s, 10,000 messages per data queue, a one-minute
/// partition), docs/benchmarks.md.
#[derive(Debug, Clone, Copy)]
pub(super) struct Profile {
    pub(super) groups: usize,
    /// Seconds between two fires of a group.
    pub(super) every: i64,
    /// Messages each producer publishes.
    pub(super) count: u32,
    /// How long a node stays cut off from the network.
    pub(super) partition: Duration,
}

impl Profile {
    pub(super) fn from_env() -> Self {
        match std::env::var("AM_FAULTS_PROFILE").as_deref() {
            Ok("full") => Profile {
                groups: 200,
                every: 5,
                count: 10_000,
                partition: Duration::from_secs(60),
            },
            Ok("short") | Err(std::env::VarError::NotPresent) => Profile {
                groups: 20,
                every: 1,
                count: 2_000,
                partition: Duration::from_secs(15),
            },
            other => panic!("AM_FAULTS_PROFILE is `short` (the default) or `full`, not {other:?}"),
        }
    }

    pub(super) fn cron(&self) -> String {
        if self.every == 1 {
            "* * * * * *".to_owned()
        } else {
            format!("*/{} * * * * *", self.every)
        }
    }

    /// The fire times of one group within `from..=to`.
    pub(super) fn due(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> usize {
        let (a, b) = (from.timestamp(), to.timestamp());
        (a..=b).filter(|s| s % self.every == 0).count()
    }
}

/// What the producer did: every message `0..count` confirmed, some sent again after a
/// connection died before its confirm came (each such resend may be a second copy).
pub(super) struct Produced {
    pub(super) resent: u32,
}

/// A data queue under load: the marker of its bodies (`<marker>-<n>`) and the message its
/// agent logs for each.
#[derive(Clone, Copy)]
pub(super) struct Feed {
    pub(super) marker: &'static str,
    pub(super) logged: &'static str,
}

/// Publishes `<marker>-<n>` for n in `0..count` to `exchange` with confirms and
/// `mandatory`, one at a time; a publish that fails or is not confirmed within 5 s is sent again
/// on a new connection to the next member. `progress` counts the confirmed ones.
pub(super) async fn produce(
    urls: String,
    exchange: String,
    marker: &'static str,
    count: u32,
    progress: Arc<AtomicU32>,
) -> Produced {
    let members: Vec<String> = urls.split(',').map(str::to_owned).collect();
    let mut next = 0;
    let mut resent = 0;
    let mut channel = None;
    for n in 0..count {
        loop {
            if channel.is_none() {
                let url = &members[next % members.len()];
                next += 1;
                let Ok(conn) = connect_to(url).await else {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                };
                let Ok(ch) = conn.create_channel().await else {
                    continue;
                };
                if ch
                    .confirm_select(ConfirmSelectOptions::default())
                    .await
                    .is_err()
                {
                    continue;
                }
                channel = Some((conn, ch));
            }
            let Some((_, ch)) = channel.as_ref() else {
                continue;
            };
            let body = format!("{marker}-{n}");
            let publish = async {
                ch.basic_publish(
                    exchange.as_str().into(),
                    "".into(),
                    BasicPublishOptions {
                        mandatory: true,
                        ..BasicPublishOptions::default()
                    },
                    body.as_bytes(),
                    BasicProperties::default().with_delivery_mode(2),
                )
                .await?
                .await
            };
            let confirmed = match tokio::time::timeout(Duration::from_secs(5), publish).await {
                Ok(Ok(confirm)) => confirm.is_ack() && confirm.take_message().is_none(),
                _ => false,
            };
            if confirmed {
                progress.store(n + 1, Ordering::SeqCst);
                break;
            }
            // Not confirmed: the broker may or may not have it. Sent again, counted.
            resent += 1;
            channel = None;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    if let Some((conn, _)) = channel {
        agent_client::close(&conn, 200, "produced").await;
    }
    Produced { resent }
}

/// How many times each numbered message of `feed` was handled, from the nodes' logs (its agent
/// logs each message's body).
pub(super) fn seen(logs: &[PathBuf], feed: Feed) -> BTreeMap<u32, u32> {
    let mut out = BTreeMap::new();
    let marker = format!("{}-", feed.marker);
    for log in logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        for line in text.lines().filter(|l| l.contains(feed.logged)) {
            let Some(at) = line.find(&marker) else {
                continue;
            };
            let digits: String = line[at + marker.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = digits.parse::<u32>() {
                *out.entry(n).or_insert(0) += 1;
            }
        }
    }
    out
}
