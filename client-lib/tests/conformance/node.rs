//! The node under test: a process started with the environment of docs/conformance.md, and
//! the record its scripted agents write.

use crate::harness::{APP, Harness, amqp_url};
use agent_client::domain::wire::{Publication, ToManager};
use serde_json::Value;
use std::{path::PathBuf, process::ExitStatus, time::Duration};
use tokio::process::{Child, Command};

/// How long a node may take to start and publish itself (a JVM included, on a busy machine).
pub const START: Duration = Duration::from_secs(30);

pub struct NodeProcess {
    child: Child,
    pub host: String,
    record: PathBuf,
}

/// The command line of the node under test: `AM_CONFORMANCE_NODE`, else the Rust demo node.
fn command() -> Command {
    match std::env::var("AM_CONFORMANCE_NODE") {
        Ok(line) if !line.trim().is_empty() => {
            let mut words = line.split_whitespace();
            let mut cmd = Command::new(words.next().expect("a program"));
            cmd.args(words);
            cmd
        }
        _ => Command::new(env!("CARGO_BIN_EXE_demo-node")),
    }
}

impl NodeProcess {
    /// Starts a node on `host` with `capacity` slots and waits for its publication.
    pub async fn start(h: &Harness, host: &str, capacity: u32) -> (NodeProcess, Publication) {
        Self::start_with(h, host, capacity, &amqp_url()).await
    }

    /// As [`NodeProcess::start`], reaching the broker at `urls` (a member list).
    pub async fn start_with(
        h: &Harness,
        host: &str,
        capacity: u32,
        urls: &str,
    ) -> (NodeProcess, Publication) {
        Self::start_env(h, host, capacity, urls, &[]).await
    }

    /// As [`NodeProcess::start_with`], with `extra` variables (e.g. where to send traces).
    pub async fn start_env(
        h: &Harness,
        host: &str,
        capacity: u32,
        urls: &str,
        extra: &[(&str, &str)],
    ) -> (NodeProcess, Publication) {
        let _ = h.node(host); // the harness deletes the node's control queue at clean-up
        let record =
            std::env::temp_dir().join(format!("am-conformance-{}-{host}.jsonl", h.prefix()));
        let _ = std::fs::remove_file(&record);
        let child = command()
            .env("AM_AMQP_URL", urls)
            .env("AM_APP", APP)
            .env("AM_HOST", host)
            .env("AM_PREFIX", h.prefix())
            .env("AM_QUEUE_EXPIRY", "60s")
            .env("AM_HEARTBEAT", "500ms")
            .env("AM_CAPACITY", capacity.to_string())
            .env("AM_RECORD", &record)
            .env("RUST_LOG", "warn")
            .envs(extra.iter().copied())
            .kill_on_drop(true)
            .spawn()
            .expect("the node under test starts");
        let node = NodeProcess {
            child,
            host: host.to_owned(),
            record,
        };
        let ToManager::Publication(p) = h
            .wait_for(
                &format!("publication of {host}"),
                START,
                |r| matches!(r, ToManager::Publication(p) if p.host == host),
            )
            .await
        else {
            unreachable!()
        };
        (node, p)
    }

    /// What the scripted agents recorded so far.
    pub fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("each record line is JSON"))
            .collect()
    }

    /// The records of `agent`'s deliveries (`script-messages`) of launch setting `ls`.
    pub fn deliveries(&self, ls: &str) -> Vec<Value> {
        self.records()
            .into_iter()
            .filter(|r| r["agent"] == "script-messages" && r["launch_setting"] == ls)
            .collect()
    }

    /// Waits until the records satisfy `done`.
    pub async fn wait_records(
        &self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let records = self.records();
            if done(&records) {
                return records;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what}: not recorded within {timeout:?}; records: {records:#?}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    async fn signal(&self, signal: &str) {
        let pid = self.child.id().expect("still running").to_string();
        let status = Command::new("kill")
            .args([signal, &pid])
            .status()
            .await
            .expect("kill runs");
        assert!(status.success(), "kill {signal} {pid}");
    }

    /// A graceful stop (SIGTERM); the node's exit status.
    pub async fn terminate(mut self) -> ExitStatus {
        self.signal("-TERM").await;
        tokio::time::timeout(START, self.child.wait())
            .await
            .expect("the node exits after SIGTERM")
            .expect("exit status")
    }

    /// A crash (SIGKILL).
    pub async fn kill(mut self) {
        self.signal("-KILL").await;
        let _ = self.child.wait().await;
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_file(&self.record);
    }
}
