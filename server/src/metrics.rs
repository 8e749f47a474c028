//! `GET /metrics`: the runtime's counters in the Prometheus text format, plus gauges read from
//! the database (outbox depth, live nodes).

use crate::state::AppState;
use am_services::{
    entity::{nodes, outbox},
    runtime::status,
};
use axum::{extract::State, http::header, response::IntoResponse};
use chrono::Utc;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use std::fmt::Write;

pub async fn metrics(State(s): State<AppState>) -> impl IntoResponse {
    let mut out = String::new();
    for (name, value) in s.services.runtime.metrics.snapshot() {
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
    let db = &s.services.db;
    let depth = outbox::Entity::find()
        .filter(outbox::Column::SentAt.is_null())
        .count(db)
        .await;
    let live = nodes::Entity::find()
        .filter(nodes::Column::Status.eq("live"))
        .filter(nodes::Column::LastHeartbeatAt.gt(Utc::now() - s.services.runtime.node_timeout))
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
        if let Ok(v) = v {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        }
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}
