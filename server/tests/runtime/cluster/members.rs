//! The cluster of `scripts/cluster.sh`: three RabbitMQ nodes beside the system broker.

use std::path::{Path, PathBuf};
use uuid::Uuid;

/// The cluster of `scripts/cluster.sh`, stopped (every node by its pid, its directory removed)
/// when dropped, also when the test fails.
pub(super) struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/cluster.sh")
    }

    async fn run(args: &[&str]) -> String {
        let out = tokio::process::Command::new(Self::script())
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

    pub(super) async fn start() -> Cluster {
        let dir = std::env::temp_dir().join(format!("am-cluster-{}", Uuid::new_v4().simple()));
        let cluster = Cluster { dir };
        Self::run(&["start", &cluster.dir()]).await;
        cluster
    }

    fn dir(&self) -> String {
        self.dir.display().to_string()
    }

    pub(super) async fn urls(&self) -> String {
        Self::run(&["urls"]).await
    }

    /// The number (1-3) of the node leading `queue`.
    pub(super) async fn leader(&self, queue: &str) -> String {
        Self::run(&["leader", &self.dir(), queue]).await
    }

    /// The queues of `prefix` as the cluster counts them, and their consumers, for a failure
    /// to show.
    pub(super) async fn queues(&self, prefix: &str) -> String {
        Self::run(&["queues", prefix]).await
    }

    pub(super) async fn kill(&self, node: &str) {
        Self::run(&["kill", &self.dir(), node]).await;
    }

    pub(super) async fn restart(&self, node: &str) {
        Self::run(&["restart", &self.dir(), node]).await;
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new(Self::script())
            .args(["stop", &self.dir()])
            .status();
    }
}
