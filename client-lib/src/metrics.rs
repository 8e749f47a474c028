//! The node's own figures in the Prometheus text format: what it already counts for its
//! heartbeats (messages per launch setting, slots in use, reports dropped or waiting,
//! commands quarantined) and whether it holds a broker connection.

use crate::shared::Shared;
use am_domain::exposition::{Exposition, Kind};
use std::sync::{Arc, atomic::Ordering};

/// A handle on a node's figures, for an application's own metrics endpoint; cheap to clone and
/// usable after the node stopped.
///
/// ```no_run
/// # async fn f(node: &agent_client::Node) {
/// let metrics = node.metrics();
/// // e.g. in the application's `GET /metrics` handler:
/// let text: String = metrics.to_text();
/// assert!(text.contains("# TYPE am_node_messages_total counter"));
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct NodeMetrics {
    shared: Arc<Shared>,
}

impl NodeMetrics {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    /// Every family, labelled with the node's application and host.
    pub fn to_text(&self) -> String {
        let s = &self.shared;
        let mut e = Exposition::default();
        let me = [
            ("application", s.application.as_str()),
            ("host", s.host.as_str()),
        ];
        let with = |extra: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
            me.iter()
                .chain(extra)
                .map(|(k, v)| (*k, (*v).to_owned()))
                .collect()
        };
        let sample =
            |e: &mut Exposition, name: &str, labels: Vec<(&'static str, String)>, v: u64| {
                let l: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
                e.sample(name, &l, v);
            };
        e.family(
            "am_node_build_info",
            Kind::Gauge,
            "the node's version (as published) and wire protocol version (always 1)",
        );
        let protocol = am_domain::wire::PROTOCOL_VERSION.to_string();
        sample(
            &mut e,
            "am_node_build_info",
            with(&[("version", &s.version), ("protocol_version", &protocol)]),
            1,
        );
        e.family(
            "am_node_connected",
            Kind::Gauge,
            "1 while the node holds a broker connection",
        );
        sample(
            &mut e,
            "am_node_connected",
            with(&[]),
            u64::from(s.link.is_up()),
        );
        let capacity = u64::from(s.capacity);
        let free = u64::try_from(s.slots.available_permits())
            .unwrap_or(0)
            .min(capacity);
        e.family(
            "am_node_slots",
            Kind::Gauge,
            "activation slots of the node, used and free",
        );
        sample(
            &mut e,
            "am_node_slots",
            with(&[("state", "used")]),
            capacity - free,
        );
        sample(&mut e, "am_node_slots", with(&[("state", "free")]), free);
        e.family(
            "am_node_messages_total",
            Kind::Counter,
            "data messages of a launch setting on this node by outcome: processed, failed \
             (attempts), retried (sent to wait), dead_lettered",
        );
        let mut stats: Vec<(String, Arc<crate::shared::LsStats>)> = s
            .stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, v)| (k.clone(), Arc::clone(v)))
            .collect();
        stats.sort_by(|a, b| a.0.cmp(&b.0));
        for (ls, st) in &stats {
            let c = st.counters();
            for (outcome, n) in [
                ("processed", c.processed),
                ("failed", c.failed),
                ("retried", c.retried),
                ("dead_lettered", c.dead_lettered),
            ] {
                sample(
                    &mut e,
                    "am_node_messages_total",
                    with(&[("launch_setting", ls), ("outcome", outcome)]),
                    n,
                );
            }
        }
        e.family(
            "am_node_dropped_reports_total",
            Kind::Counter,
            "reports dropped because the buffer was full while the broker was away",
        );
        sample(
            &mut e,
            "am_node_dropped_reports_total",
            with(&[]),
            s.outbox.dropped(),
        );
        e.family(
            "am_node_reports_pending",
            Kind::Gauge,
            "reports not yet confirmed by the broker",
        );
        let pending = u64::try_from(s.outbox.pending()).unwrap_or(u64::MAX);
        sample(&mut e, "am_node_reports_pending", with(&[]), pending);
        e.family(
            "am_node_quarantined_commands_total",
            Kind::Counter,
            "commands from the manager this node could not read, sent to the quarantine queue",
        );
        let quarantined = s.quarantined.load(Ordering::Relaxed);
        sample(
            &mut e,
            "am_node_quarantined_commands_total",
            with(&[]),
            quarantined,
        );
        e.into_text()
    }
}
