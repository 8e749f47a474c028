//! The cluster of `scripts/cluster.sh`: three RabbitMQ nodes beside the system broker.

use std::path::{Path, PathBuf};
use uuid::Uuid;

/// The cluster of `scripts/cluster.sh`, stopped (every node by its pid, its directory removed)
/// when dropped, also when the test fails.
pub(crate) struct Cluster {
    dir: PathBuf,
    /// `AM_CLUSTER_PORT` and `AM_CLUSTER_NAME` of a cluster beside the default one.
    env: Vec<(&'static str, String)>,
}

impl Cluster {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/cluster.sh")
    }

    fn command(&self) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(Self::script());
        cmd.envs(self.env.iter().map(|(k, v)| (*k, v.as_str())));
        cmd
    }

    async fn run(&self, args: &[&str]) -> String {
        let out = self
            .command()
            .args(args)
            .output()
            .await
            .expect("scripts/cluster.sh runs");
        assert!(
            out.status.success(),
            "scripts/cluster.sh {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    pub(crate) async fn start() -> Cluster {
        Self::start_with(Vec::new()).await
    }

    /// A cluster beside the default one, so two tests may each have theirs: its AMQP ports are
    /// `port_base + 1..3`, its nodes `<name>1@localhost`… (scripts/cluster.sh).
    pub(crate) async fn start_beside(port_base: u16, name: &str) -> Cluster {
        Self::start_with(vec![
            ("AM_CLUSTER_PORT", port_base.to_string()),
            ("AM_CLUSTER_NAME", name.to_owned()),
        ])
        .await
    }

    async fn start_with(env: Vec<(&'static str, String)>) -> Cluster {
        let dir = std::env::temp_dir().join(format!("am-cluster-{}", Uuid::new_v4().simple()));
        let cluster = Cluster { dir, env };
        cluster.run(&["start", &cluster.dir()]).await;
        cluster
    }

    fn dir(&self) -> String {
        self.dir.display().to_string()
    }

    pub(crate) async fn urls(&self) -> String {
        self.run(&["urls"]).await
    }

    /// The number (1-3) of the node leading `queue`.
    pub(crate) async fn leader(&self, queue: &str) -> String {
        self.run(&["leader", &self.dir(), queue]).await
    }

    /// The queues of `prefix` as the cluster counts them, and their consumers, for a failure
    /// to show.
    pub(crate) async fn queues(&self, prefix: &str) -> String {
        self.run(&["queues", prefix]).await
    }

    pub(crate) async fn kill(&self, node: &str) {
        self.run(&["kill", &self.dir(), node]).await;
    }

    pub(crate) async fn restart(&self, node: &str) {
        self.run(&["restart", &self.dir(), node]).await;
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new(Self::script())
            .envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .args(["stop", &self.dir()])
            .status();
    }
}
