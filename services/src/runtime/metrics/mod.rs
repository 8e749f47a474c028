//! What one manager process counts, for `/metrics` and the dashboard: monotonic counters, the
//! runs' results and times per agent, HTTP requests per route, and a recent report rate.

mod families;
mod rate;

pub use am_domain::exposition::{Exposition, Kind, Value, escape};
pub use families::{Counters, Family, Histograms};
pub use rate::RateWindow;

use am_domain::notify::Channel;
use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($($(#[doc = $doc:literal])* $name:ident),* $(,)?) => {
        /// What one manager process counts. The counters' help text is their doc comment.
        #[derive(Debug)]
        pub struct Metrics {
            $($(#[doc = $doc])* pub $name: AtomicU64,)*
            /// Lag of the latest fire behind its fire time, in milliseconds (a gauge).
            pub scheduler_lag_ms: AtomicU64,
            /// Reports applied per second recently (the report consumer records each batch).
            pub report_rate: RateWindow,
            /// Notification tries per channel kind and outcome.
            pub deliveries: ChannelCounts,
            /// Runs' ends and times, per application and agent.
            pub runs: RunMetrics,
            /// HTTP requests per route.
            pub http: HttpMetrics,
        }

        impl Default for Metrics {
            fn default() -> Self {
                Self {
                    $($name: AtomicU64::new(0),)*
                    scheduler_lag_ms: AtomicU64::new(0),
                    report_rate: RateWindow::default(),
                    deliveries: ChannelCounts::default(),
                    runs: RunMetrics::default(),
                    http: HttpMetrics::default(),
                }
            }
        }

        impl Metrics {
            /// Every counter with its name (without `am_` and `_total`), its help and value.
            pub fn snapshot(&self) -> Vec<(&'static str, &'static str, u64)> {
                vec![$((
                    stringify!($name),
                    concat!($($doc, "\n"),*),
                    self.$name.load(Ordering::Relaxed),
                ),)*]
            }

            /// Adds the counters of `other`, which counted work that has since been committed.
            pub fn absorb(&self, other: &Metrics) {
                $(self.$name.fetch_add(other.$name.load(Ordering::Relaxed), Ordering::Relaxed);)*
                self.runs.absorb(&other.runs);
            }
        }
    };
}

counters! {
    /// Schedule fires recorded.
    fires,
    /// Fires another replica had already recorded (unique fire key).
    duplicate_fires,
    /// Fires recorded as planned before their time (docs/benchmarks.md, P2).
    fires_planned_ahead,
    /// Fires planned ahead whose plan was out of date when due, planned again.
    fires_planned_again,
    /// Missed fires fired late (`fire-once-now`).
    misfires_fired,
    /// Missed fires dropped (`skip`).
    misfires_skipped,
    /// Launch commands written to the outbox.
    launches,
    /// Activations that found no live node and wait.
    waiting,
    /// Waiting activations that failed because no node appeared in time.
    wait_timeouts,
    /// Re-dispatches after a start timeout.
    redispatch_start_timeout,
    /// Host runs declared lost (no heartbeat within the work timeout).
    lost,
    /// Lost runs restarted (policy `restart`).
    restarted_after_lost,
    /// Lost runs failed (policy `fail`).
    failed_after_lost,
    /// Runs interrupted for exceeding their maximum run time.
    interrupted_max_run_time,
    /// Stop commands sent for disabled launch settings.
    stops,
    /// Reports applied (the report ingestion counter; `report_rate` is its recent rate).
    reports,
    /// Reports ignored because they carried an outdated fencing token.
    stale_reports,
    /// Reports dropped because they could not be read, or not stored.
    malformed_reports,
    /// Failure reports stored.
    failures,
    /// Breaker trips received.
    breaker_trips,
    /// Launch settings or groups disabled by the breaker policy.
    breaker_disables,
    /// Hosts a `MANY` launch setting's breaker quarantined.
    quarantines,
    /// Outbox rows published and confirmed by the broker.
    outbox_published,
    /// Outbox publications that failed and will be retried.
    outbox_failures,
    /// Notifications an endpoint accepted.
    notifications_delivered,
    /// Notification deliveries that failed and are tried again later.
    notification_failures,
    /// Notifications given up on after their retry budget.
    notifications_given_up,
    /// Connections to the broker opened again after one was lost.
    broker_reconnects,
}

/// Notification tries per channel kind ([`Channel::index`]): accepted, and failed (to be
/// tried again or given up).
#[derive(Debug, Default)]
pub struct ChannelCounts {
    delivered: [AtomicU64; Channel::ALL.len()],
    failed: [AtomicU64; Channel::ALL.len()],
}

impl ChannelCounts {
    pub fn delivered(&self, channel: Channel) {
        Metrics::inc(&self.delivered[channel.index()]);
    }

    pub fn failed(&self, channel: Channel) {
        Metrics::inc(&self.failed[channel.index()]);
    }

    /// `(channel, delivered, failed)` for every channel kind.
    pub fn snapshot(&self) -> Vec<(Channel, u64, u64)> {
        Channel::ALL
            .iter()
            .map(|c| {
                let i = c.index();
                (
                    *c,
                    self.delivered[i].load(Ordering::Relaxed),
                    self.failed[i].load(Ordering::Relaxed),
                )
            })
            .collect()
    }
}

impl Metrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs' ends and times per application and agent: what an on-call person asks first.
#[derive(Debug)]
pub struct RunMetrics {
    pub finished: Counters,
    pub duration: Histograms,
    pub start_delay: Histograms,
}

/// Runs last from a blink to hours.
const RUN_SECONDS: &[f64] = &[
    0.1, 0.5, 1.0, 5.0, 15.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 10800.0,
];
/// A start follows its fire within milliseconds when a node is live; minutes mean trouble.
const START_SECONDS: &[f64] = &[
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0,
];
const HTTP_SECONDS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

impl Default for RunMetrics {
    fn default() -> Self {
        Self {
            finished: Counters::new(Family {
                name: "am_activations_finished_total",
                help: "runs of a launch setting ended, by application, agent and result \
                       (succeeded, failed, interrupted, skipped: by its nodes, or at once by \
                       the overlap policy)",
                labels: &["application", "agent", "result"],
            }),
            duration: Histograms::new(
                Family {
                    name: "am_run_duration_seconds",
                    help: "time from a run's start to its end, by application, agent and result \
                           (runs that never started are not observed)",
                    labels: &["application", "agent", "result"],
                },
                RUN_SECONDS,
            ),
            start_delay: Histograms::new(
                Family {
                    name: "am_start_delay_seconds",
                    help: "time from an activation's creation (a fire, Run now, a group's next \
                           member) to its first node's start, by application and agent",
                    labels: &["application", "agent"],
                },
                START_SECONDS,
            ),
        }
    }
}

impl RunMetrics {
    fn absorb(&self, other: &RunMetrics) {
        self.finished.absorb(&other.finished);
        self.duration.absorb(&other.duration);
        self.start_delay.absorb(&other.start_delay);
    }

    /// A run ended with `result`; `ran_for` is its time since it started, if it did.
    pub fn ended(&self, application: &str, agent: &str, result: &str, ran_for: Option<f64>) {
        self.finished.inc(&[application, agent, result]);
        if let Some(secs) = ran_for {
            self.duration.observe(&[application, agent, result], secs);
        }
    }

    /// A run started `delay` seconds after its activation was created.
    pub fn started(&self, application: &str, agent: &str, delay: f64) {
        self.start_delay.observe(&[application, agent], delay);
    }
}

/// HTTP requests per method, route (its pattern, never the path) and status.
#[derive(Debug)]
pub struct HttpMetrics {
    pub requests: Counters,
    pub duration: Histograms,
}

impl Default for HttpMetrics {
    fn default() -> Self {
        Self {
            requests: Counters::new(Family {
                name: "am_http_requests_total",
                help: "HTTP requests answered, by method, route pattern and status code",
                labels: &["method", "route", "status"],
            }),
            duration: Histograms::new(
                Family {
                    name: "am_http_request_duration_seconds",
                    help: "time to answer an HTTP request, by method and route pattern",
                    labels: &["method", "route"],
                },
                HTTP_SECONDS,
            ),
        }
    }
}

impl HttpMetrics {
    pub fn record(&self, method: &str, route: &str, status: u16, secs: f64) {
        self.requests.inc(&[method, route, &status.to_string()]);
        self.duration.observe(&[method, route], secs);
    }
}

impl Metrics {
    /// This process's own figures in the text format (the database's are added by `/metrics`).
    pub fn render(&self, e: &mut Exposition) {
        for (name, help, value) in self.snapshot() {
            let name = format!("am_{name}_total");
            e.single(&name, Kind::Counter, help, value);
        }
        e.single(
            "am_scheduler_lag_seconds",
            Kind::Gauge,
            "lag of the latest fire this replica recorded behind its fire time",
            self.scheduler_lag_ms.load(Ordering::Relaxed) as f64 / 1000.0,
        );
        e.single(
            "am_reports_per_second",
            Kind::Gauge,
            &format!(
                "node reports applied per second over the last {} complete seconds (the rate \
                 of am_reports_total)",
                self.report_rate.window().as_secs()
            ),
            self.report_rate.per_second(),
        );
        let name = "am_notification_deliveries_total";
        e.family(
            name,
            Kind::Counter,
            "notification tries by channel kind and outcome",
        );
        for (channel, delivered, failed) in self.deliveries.snapshot() {
            for (outcome, n) in [
                (am_domain::notify::Delivery::Delivered, delivered),
                (am_domain::notify::Delivery::Failed, failed),
            ] {
                e.sample(
                    name,
                    &[("channel", channel.as_str()), ("outcome", outcome.as_str())],
                    n,
                );
            }
        }
        self.runs.finished.render(e);
        self.runs.duration.render(e);
        self.runs.start_delay.render(e);
        self.http.requests.render(e);
        self.http.duration.render(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_has_its_doc_comment_as_help() {
        let m = Metrics::default();
        Metrics::inc(&m.fires);
        let mut e = Exposition::default();
        m.render(&mut e);
        let text = e.into_text();
        assert!(
            text.contains("# HELP am_fires_total Schedule fires recorded.\n# TYPE am_fires_total counter\nam_fires_total 1\n"),
            "{text}"
        );
        for (name, help, _) in m.snapshot() {
            assert!(!help.trim().is_empty(), "{name} has no help");
        }
        let families = text.lines().filter(|l| l.starts_with("# TYPE ")).count();
        let helps = text.lines().filter(|l| l.starts_with("# HELP ")).count();
        assert_eq!(families, helps);
    }

    #[test]
    fn a_run_is_counted_by_result_and_timed_only_when_it_started() {
        let m = Metrics::default();
        m.runs.ended("demo", "echo", "succeeded", Some(2.0));
        m.runs.ended("demo", "echo", "failed", None);
        assert_eq!(m.runs.finished.get(&["demo", "echo", "failed"]), 1);
        assert_eq!(m.runs.duration.count(&["demo", "echo", "succeeded"]), 1);
        assert_eq!(m.runs.duration.count(&["demo", "echo", "failed"]), 0);
    }
}
