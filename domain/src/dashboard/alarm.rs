//! What is broken and needs an operator: the alarms the dashboard shows above everything.

use serde::{Deserialize, Serialize};

/// Something broken that needs an operator, with the page that shows its cause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Alarm {
    pub kind: AlarmKind,
    /// One sentence with the count, readable without opening anything.
    pub summary: String,
    /// The page that shows what it is about.
    pub link: String,
}

/// The kinds of [`Alarm`], in the order the dashboard shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AlarmKind {
    /// This replica has no broker connection: nothing is dispatched or consumed.
    BrokerDown,
    /// The broker lacks or differs from objects the reconciler applied (removed by hand,
    /// refused, held by another installation).
    BrokerDrift,
    /// Launches a node never accepted, long past their start timeout: the watchdog cannot move
    /// them (no broker, no live node).
    NotAccepted,
    /// Nodes that stopped sending heartbeats and have not come back.
    NodesLost,
    /// Bulk operations that ended with failed items in the last
    /// [`WINDOW_HOURS`](super::WINDOW_HOURS) hours.
    OperationsFailed,
    /// Notifications given up on after their retry budget.
    NotificationsFailed,
}

impl AlarmKind {
    pub const ALL: [AlarmKind; 6] = [
        AlarmKind::BrokerDown,
        AlarmKind::BrokerDrift,
        AlarmKind::NotAccepted,
        AlarmKind::NodesLost,
        AlarmKind::OperationsFailed,
        AlarmKind::NotificationsFailed,
    ];

    /// The serde name: the alarm's `data-kind` on the page.
    pub fn as_str(self) -> &'static str {
        match self {
            AlarmKind::BrokerDown => "broker_down",
            AlarmKind::BrokerDrift => "broker_drift",
            AlarmKind::NotAccepted => "not_accepted",
            AlarmKind::NodesLost => "nodes_lost",
            AlarmKind::OperationsFailed => "operations_failed",
            AlarmKind::NotificationsFailed => "notifications_failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alarm_kinds_are_named_by_their_serde_names() {
        for k in AlarmKind::ALL {
            assert_eq!(
                serde_json::to_string(&k).expect("json"),
                format!("\"{}\"", k.as_str())
            );
        }
    }
}
