//! `GET /metrics` in the Prometheus text format: this replica's own figures (counters, runs'
//! results and times per agent, HTTP requests per route, the broker connection), and at each
//! scrape the database's (outbox, waiting activations, live nodes and their slots per
//! application, the dashboard's figures, recoveries, queue depths), the same on every replica.
//! docs/operations.md (*Observe*) lists every family.

use crate::state::AppState;
use am_services::runtime::metrics::{Exposition, Kind};
use am_services::{dashboard, runtime::gauges};
use axum::{
    extract::{MatchedPath, Request, State},
    http::{Method, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use std::time::Instant;

pub async fn metrics(State(s): State<AppState>) -> impl IntoResponse {
    let mut e = Exposition::default();
    let db = &s.services.db;
    let now = Utc::now();
    process(&mut e, &s);
    s.services.runtime.metrics.render(&mut e);
    runtime_gauges(&mut e, db, now, s.services.runtime.node_timeout).await;
    dashboard_gauges(&mut e, db, now).await;
    recovery_counts(&mut e, db).await;
    queue_gauges(&mut e, &s.services.broker_depths);
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        e.into_text(),
    )
}

/// What this process is and whether it holds a broker connection.
fn process(e: &mut Exposition, s: &AppState) {
    let name = "am_build_info";
    e.family(
        name,
        Kind::Gauge,
        "the manager's version and wire protocol version (always 1)",
    );
    e.sample(
        name,
        &[
            ("version", env!("CARGO_PKG_VERSION")),
            (
                "protocol_version",
                &am_domain::wire::PROTOCOL_VERSION.to_string(),
            ),
        ],
        1u64,
    );
    e.single(
        "am_broker_connected",
        Kind::Gauge,
        "1 while this replica holds a connection to the broker with its queues declared",
        u64::from(s.services.broker.get().up),
    );
}

/// Figures of the runtime's tables: the outbox, waiting activations, live nodes and slots.
async fn runtime_gauges(
    e: &mut Exposition,
    db: &DatabaseConnection,
    now: DateTime<Utc>,
    node_timeout: chrono::Duration,
) {
    let g = match gauges::read(db, now, node_timeout).await {
        Ok(g) => g,
        Err(err) => {
            tracing::warn!(error = %err, "runtime gauges not read");
            return;
        }
    };
    e.single(
        "am_outbox_depth",
        Kind::Gauge,
        "broker commands not yet confirmed by the broker",
        g.outbox_depth,
    );
    e.single(
        "am_outbox_oldest_age_seconds",
        Kind::Gauge,
        "age of the oldest broker command not yet confirmed (0 when none)",
        g.outbox_oldest_age,
    );
    e.single(
        "am_waiting_activations",
        Kind::Gauge,
        "activations waiting for a live node",
        g.waiting,
    );
    e.single(
        "am_oldest_waiting_activation_age_seconds",
        Kind::Gauge,
        "age of the oldest activation waiting for a live node (0 when none)",
        g.oldest_waiting_age,
    );
    let live = "am_live_nodes";
    e.family(
        live,
        Kind::Gauge,
        "nodes heard from within the node timeout, for every application of the catalog",
    );
    for (application, n) in &g.nodes {
        e.sample(live, &[("application", application)], n.live);
    }
    let slots = "am_node_slots";
    e.family(
        slots,
        Kind::Gauge,
        "activation slots of an application's live nodes, used (runs they say they run) and \
         free (capacity left)",
    );
    for (application, n) in &g.nodes {
        e.sample(
            slots,
            &[("application", application), ("state", "used")],
            n.used,
        );
        e.sample(
            slots,
            &[("application", application), ("state", "free")],
            n.free,
        );
    }
}

/// The dashboard's figures, read as the dashboard reads them.
async fn dashboard_gauges(e: &mut Exposition, db: &DatabaseConnection, now: DateTime<Utc>) {
    let g = match dashboard::gauges(db, now).await {
        Ok(g) => g,
        Err(err) => {
            tracing::warn!(error = %err, "dashboard gauges not read");
            return;
        }
    };
    let name = "am_activations";
    e.family(
        name,
        Kind::Gauge,
        "activations by status: the active ones (waiting, dispatched, running) whatever their \
         age, the finished ones created in the last 24 h",
    );
    for c in &g.activations {
        e.sample(name, &[("status", &c.status)], c.count);
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
            "real failures reported in the last 60 minutes (an activation failed, a message \
             dead-lettered or parked)",
            g.failures_last_hour,
        ),
        (
            "am_retried_last_hour",
            "failed attempts of the last 60 minutes whose message was sent to be tried again",
            g.retried_last_hour,
        ),
        (
            "am_unavailable_last_hour",
            "\"temporarily unavailable\" answers of the last 60 minutes (redelivered, not \
             counted as failures)",
            g.unavailable_last_hour,
        ),
        (
            "am_failed_notifications",
            "notifications given up on after their retry budget (resend them from the \
             Notifications page)",
            g.failed_notifications,
        ),
    ] {
        e.single(name, Kind::Gauge, help, v);
    }
}

/// Recoveries per launch setting and kind, from the database: the same on every replica.
async fn recovery_counts(e: &mut Exposition, db: &DatabaseConnection) {
    match am_services::recovery::all(db).await {
        Ok(rows) => {
            let name = "am_launch_setting_recoveries_total";
            e.family(
                name,
                Kind::Counter,
                "recoveries of a launch setting by kind (start_timeout, lost, redispatch, \
                 stale_report, quarantine), from the database: the same on every replica",
            );
            for r in rows {
                e.sample(
                    name,
                    &[("launch_setting", &r.launch_setting_id), ("kind", &r.kind)],
                    u64::try_from(r.count).unwrap_or(0),
                );
            }
        }
        Err(err) => tracing::warn!(error = %err, "recovery counts not read"),
    }
}

/// What the consumed and unrouted queues hold, as this replica's reconciler last sampled.
fn queue_gauges(e: &mut Exposition, depths: &am_services::topology::DepthsHandle) {
    let Ok(d) = depths.read() else { return };
    if d.queues.is_empty() {
        return;
    }
    for (name, help, pick) in [
        (
            "am_queue_messages_ready",
            "messages waiting in a queue nodes consume (role subscription or shared) or in a \
             data queue's unrouted queue",
            (|q: &am_domain::read::depths::QueueDepth| q.ready) as fn(&_) -> u32,
        ),
        (
            "am_queue_consumers",
            "nodes consuming a queue",
            |q: &am_domain::read::depths::QueueDepth| q.consumers,
        ),
    ] {
        e.family(name, Kind::Gauge, help);
        for q in &d.queues {
            let role = q.role.to_string();
            e.sample(
                name,
                &[
                    ("queue", &q.queue),
                    ("role", &role),
                    ("launch_setting", q.launch_setting.as_deref().unwrap_or("")),
                    ("data_queue", q.data_queue.as_deref().unwrap_or("")),
                ],
                u64::from(pick(q)),
            );
        }
    }
    if !d.processed_per_minute.is_empty() {
        let name = "am_launch_setting_processed_per_minute";
        e.family(
            name,
            Kind::Gauge,
            "messages a launch setting processed per minute between the last two samples of its \
             nodes' counters",
        );
        for (ls, n) in &d.processed_per_minute {
            e.sample(name, &[("launch_setting", ls)], *n);
        }
    }
}

/// Counts and times every request by method, route pattern and status. The pattern (never the
/// path) and the standard methods keep the labels bounded; a path no route matches is
/// `unmatched`.
pub async fn record_request(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let method = match *req.method() {
        Method::GET
        | Method::HEAD
        | Method::POST
        | Method::PUT
        | Method::DELETE
        | Method::PATCH
        | Method::OPTIONS => req.method().as_str().to_owned(),
        _ => "other".to_owned(),
    };
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
    let started = Instant::now();
    let res = next.run(req).await;
    s.services.runtime.metrics.http.record(
        &method,
        &route,
        res.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    res
}
