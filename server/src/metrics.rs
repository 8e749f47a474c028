//! `GET /metrics`: the runtime's counters in the Prometheus text format, the recent report
//! ingestion rate, and gauges read from the database: outbox depth, live nodes, and the
//! dashboard's figures (activations by status, active ones, dead letters, disabled launch
//! settings and groups, failures in the last hour).

use crate::state::AppState;
use am_domain::notify::Delivery;
use am_services::runtime::Metrics;
use am_services::{
    dashboard,
    entity::{nodes, outbox},
    status,
};
use axum::{extract::State, http::header, response::IntoResponse};
use chrono::DateTime;
use chrono::Utc;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter};
use std::fmt::Write;

fn gauge(out: &mut String, name: &str, help: &str, value: impl std::fmt::Display) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
    );
}

pub async fn metrics(State(s): State<AppState>) -> impl IntoResponse {
    let mut out = String::new();
    let db = &s.services.db;
    let now = Utc::now();
    counters(&mut out, &s.services.runtime.metrics);
    table_gauges(&mut out, db, now, s.services.runtime.node_timeout).await;
    dashboard_gauges(&mut out, db, now).await;
    recovery_counts(&mut out, db).await;
    queue_gauges(&mut out, &s.services.broker_depths);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}

/// This replica's counters, its report rate and its notification deliveries.
fn counters(out: &mut String, m: &Metrics) {
    for (name, value) in m.snapshot() {
        let kind = if name.ends_with("_ms") {
            "gauge"
        } else {
            "counter"
        };
        let name = if kind == "counter" {
            format!("am_{name}_total")
        } else {
            format!("am_{name}")
        };
        let _ = writeln!(out, "# TYPE {name} {kind}\n{name} {value}");
    }
    gauge(
        out,
        "am_reports_per_second",
        &format!(
            "node reports applied per second over the last {} complete seconds (the rate of am_reports_total)",
            m.report_rate.window().as_secs()
        ),
        m.report_rate.per_second(),
    );
    let _ = writeln!(
        out,
        "# HELP am_notification_deliveries_total notification tries by channel kind and outcome\n# TYPE am_notification_deliveries_total counter"
    );
    for (channel, delivered, failed) in m.deliveries.snapshot() {
        for (outcome, n) in [(Delivery::Delivered, delivered), (Delivery::Failed, failed)] {
            let outcome = outcome.as_str();
            let _ = writeln!(
                out,
                "am_notification_deliveries_total{{channel=\"{}\",outcome=\"{outcome}\"}} {n}",
                channel.as_str()
            );
        }
    }
}

/// Gauges counted from the runtime's tables: the outbox, live nodes, waiting activations.
async fn table_gauges(
    out: &mut String,
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    node_timeout: chrono::Duration,
) {
    let depth = outbox::Entity::find()
        .filter(outbox::Column::SentAt.is_null())
        .count(db)
        .await;
    let live = nodes::Entity::find()
        .filter(am_services::registry::live_condition(now, node_timeout))
        .count(db)
        .await;
    let waiting = am_services::entity::activations::Entity::find()
        .filter(am_services::entity::activations::Column::Status.eq(status::activation::WAITING))
        .count(db)
        .await;
    for (name, help, v) in [
        (
            "am_outbox_depth",
            "broker commands not yet confirmed by the broker",
            depth,
        ),
        (
            "am_live_nodes",
            "nodes heard from within the node timeout",
            live,
        ),
        (
            "am_waiting_activations",
            "activations waiting for a live node",
            waiting,
        ),
    ] {
        match v {
            Ok(v) => gauge(out, name, help, v),
            Err(e) => tracing::warn!(error = %e, metric = name, "metric not read"),
        }
    }
}

/// The dashboard's figures, read as the dashboard reads them.
async fn dashboard_gauges(out: &mut String, db: &DatabaseConnection, now: DateTime<Utc>) {
    match dashboard::gauges(db, now).await {
        Ok(g) => {
            let _ = writeln!(
                out,
                "# HELP am_activations activations by status: the active ones (waiting, \
                 dispatched, running) whatever their age, the finished ones created in the \
                 last 24 h\n# TYPE am_activations gauge"
            );
            for c in &g.activations {
                let _ = writeln!(out, "am_activations{{status=\"{}\"}} {}", c.status, c.count);
            }
            for (name, help, v) in [
                (
                    "am_running_activations",
                    "active activations (waiting, dispatched or running)",
                    g.running,
                ),
                (
                    "am_dead_letters",
                    "dead letters waiting for an operator",
                    g.dead_letters,
                ),
                (
                    "am_disabled_launch_settings",
                    "launch settings disabled (by an operator or the breaker)",
                    g.disabled_launch_settings,
                ),
                (
                    "am_disabled_schedule_groups",
                    "schedule groups disabled (by an operator or the breaker)",
                    g.disabled_groups,
                ),
                (
                    "am_failures_last_hour",
                    "real failures reported in the last 60 minutes (an activation failed, a message dead-lettered or parked)",
                    g.failures_last_hour,
                ),
                (
                    "am_retried_last_hour",
                    "failed attempts of the last 60 minutes whose message was sent to be tried again",
                    g.retried_last_hour,
                ),
                (
                    "am_unavailable_last_hour",
                    "\"temporarily unavailable\" answers of the last 60 minutes (redelivered, not counted as failures)",
                    g.unavailable_last_hour,
                ),
                (
                    "am_failed_notifications",
                    "notifications given up on after their retry budget (resend them from the Notifications page)",
                    g.failed_notifications,
                ),
            ] {
                gauge(out, name, help, v);
            }
        }
        Err(e) => tracing::warn!(error = %e, "dashboard gauges not read"),
    }
}

/// Recoveries per launch setting and kind, from the database: the same on every replica.
async fn recovery_counts(out: &mut String, db: &DatabaseConnection) {
    match am_services::recovery::all(db).await {
        Ok(rows) => {
            let name = "am_launch_setting_recoveries_total";
            let _ = writeln!(
                out,
                "# HELP {name} recoveries of a launch setting by kind (start_timeout, lost, redispatch, stale_report, quarantine), from the database: the same on every replica\n# TYPE {name} counter"
            );
            for r in rows {
                let _ = writeln!(
                    out,
                    "{name}{{launch_setting=\"{}\",kind=\"{}\"}} {}",
                    label(&r.launch_setting_id),
                    label(&r.kind),
                    r.count
                );
            }
        }
        Err(e) => tracing::warn!(error = %e, "recovery counts not read"),
    }
}

/// Prometheus label value: backslash, quote and newline escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// What the consumed and unrouted queues hold, as this replica's reconciler last sampled.
fn queue_gauges(out: &mut String, depths: &am_services::topology::DepthsHandle) {
    let Ok(d) = depths.read() else { return };
    if d.queues.is_empty() {
        return;
    }
    for (name, help, pick) in [
        (
            "am_queue_messages_ready",
            "messages waiting in a queue nodes consume (role subscription or shared) or in a data queue's unrouted queue",
            (|q: &am_domain::read::depths::QueueDepth| q.ready) as fn(&_) -> u32,
        ),
        (
            "am_queue_consumers",
            "nodes consuming a queue",
            |q: &am_domain::read::depths::QueueDepth| q.consumers,
        ),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for q in &d.queues {
            let _ = writeln!(
                out,
                "{name}{{queue=\"{}\",role=\"{}\",launch_setting=\"{}\",data_queue=\"{}\"}} {}",
                label(&q.queue),
                q.role,
                label(q.launch_setting.as_deref().unwrap_or("")),
                label(q.data_queue.as_deref().unwrap_or("")),
                pick(q)
            );
        }
    }
    if !d.processed_per_minute.is_empty() {
        let name = "am_launch_setting_processed_per_minute";
        let _ = writeln!(
            out,
            "# HELP {name} messages a launch setting processed per minute between the last two samples of its nodes' counters\n# TYPE {name} gauge"
        );
        for (ls, n) in &d.processed_per_minute {
            let _ = writeln!(out, "{name}{{launch_setting=\"{}\"}} {n}", label(ls));
        }
    }
}
