//! What is broken and needs an operator, at the top of the dashboard (docs/concepts.md, The
//! dashboard): from the database, launches never accepted long past their start timeout, lost
//! nodes, bulk operations that failed lately and notifications given up on; from what this
//! replica knows of the broker, its connection and where it differs from what was applied.

use crate::{
    Services,
    entity::{activation_hosts, nodes, operations},
    error::ServiceResult,
    operations::status as op_status,
    registry, status, topology,
};
use am_domain::{
    dashboard::{Alarm, AlarmKind, WINDOW_HOURS},
    links,
    notify::Delivery,
};
use chrono::{DateTime, Duration, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter};

/// How long past its start timeout a launch may stay unaccepted before it is an alarm: the
/// watchdog moves such a launch within a second or two unless it cannot (no broker, no node).
const OVERDUE: Duration = Duration::seconds(15);

fn alarm(kind: AlarmKind, summary: String, link: &str) -> Alarm {
    Alarm {
        kind,
        summary,
        link: link.to_owned(),
    }
}

/// `n` of a noun: "1 node", "3 nodes".
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The alarms the database shows at `now`; `failed_notifications` is the dashboard's count.
pub(super) async fn of_database(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    failed_notifications: u64,
) -> ServiceResult<Vec<Alarm>> {
    let mut out = Vec::new();
    let overdue = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::Status.eq(status::host::DISPATCHED))
        .filter(activation_hosts::Column::RecoveryDeadline.lt(now - OVERDUE))
        .count(db)
        .await?;
    if overdue > 0 {
        out.push(alarm(
            AlarmKind::NotAccepted,
            format!(
                "{} dispatched and never accepted, past their start timeout: the watchdog \
                 cannot move them (is the broker up, is a node of their pool live?)",
                count(overdue, "launch", "launches")
            ),
            &links::href(
                "/activations",
                &[("status", status::activation::DISPATCHED)],
            ),
        ));
    }
    let lost = nodes::Entity::find()
        .filter(nodes::Column::Status.eq(registry::LOST))
        .count(db)
        .await?;
    if lost > 0 {
        out.push(alarm(
            AlarmKind::NodesLost,
            format!(
                "{} lost: no heartbeat within the node timeout",
                count(lost, "node", "nodes")
            ),
            "/nodes",
        ));
    }
    let failed_ops = operations::Entity::find()
        .filter(operations::Column::Status.eq(op_status::FAILED))
        .filter(operations::Column::FinishedAt.gte(now - Duration::hours(WINDOW_HOURS)))
        .count(db)
        .await?;
    if failed_ops > 0 {
        out.push(alarm(
            AlarmKind::OperationsFailed,
            format!(
                "{} ended with failed items in the last {WINDOW_HOURS} h",
                count(failed_ops, "bulk operation", "bulk operations")
            ),
            "/operations",
        ));
    }
    if failed_notifications > 0 {
        out.push(alarm(
            AlarmKind::NotificationsFailed,
            format!(
                "{} given up on after their retries",
                count(failed_notifications, "notification", "notifications")
            ),
            &links::href("/notifications", &[("status", Delivery::Failed.as_str())]),
        ));
    }
    Ok(out)
}

/// The alarms of the broker as this replica knows it: no connection, or objects that differ
/// from what the reconciler applied (its last sample of the broker against the applied state).
pub(super) async fn of_broker(
    s: &Services,
    depths: &am_domain::read::depths::Depths,
) -> ServiceResult<Vec<Alarm>> {
    let mut out = Vec::new();
    let broker = s.broker.get();
    if !broker.up {
        out.push(alarm(
            AlarmKind::BrokerDown,
            format!("The broker is unreachable: {}", broker.detail),
            links::BROKER,
        ));
    }
    let differences = topology::differences(&s.db, depths).await?;
    if let Some(first) = differences.first() {
        let n = u64::try_from(differences.len()).unwrap_or(u64::MAX);
        out.push(alarm(
            AlarmKind::BrokerDrift,
            format!(
                "{} on the broker {} from what the catalog needs (first: {} {}: {})",
                count(n, "object", "objects"),
                if n == 1 { "differs" } else { "differ" },
                first.object.label(),
                first.name,
                first.state.describe()
            ),
            links::BROKER,
        ));
    }
    Ok(out)
}
