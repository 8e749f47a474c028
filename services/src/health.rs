//! Health of the manager's dependencies, as `/readyz` and the dashboard show it.

use sea_orm::DatabaseConnection;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, RwLock};

/// What is known about the broker connection; written by the broker supervisor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerState {
    pub up: bool,
    /// The last connection error, with credentials removed.
    pub detail: String,
    /// RFC 3339 time of the last change.
    pub since: String,
}

/// Shared, cheaply cloned view of the broker's state.
#[derive(Debug, Clone)]
pub struct BrokerStatus(Arc<RwLock<BrokerState>>);

impl Default for BrokerStatus {
    fn default() -> Self {
        Self(Arc::new(RwLock::new(BrokerState {
            up: false,
            detail: "not connected yet".into(),
            since: chrono::Utc::now().to_rfc3339(),
        })))
    }
}

impl BrokerStatus {
    pub fn get(&self) -> BrokerState {
        match self.0.read() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn set(&self, up: bool, detail: impl Into<String>) {
        let mut guard = match self.0.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let detail = detail.into();
        if guard.up != up || guard.detail != detail {
            *guard = BrokerState {
                up,
                detail,
                since: chrono::Utc::now().to_rfc3339(),
            };
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentHealth {
    pub up: bool,
    pub detail: String,
}

/// Health of the DB and the broker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    pub database: ComponentHealth,
    pub broker: ComponentHealth,
}

impl Health {
    pub fn ready(&self) -> bool {
        self.database.up && self.broker.up
    }
}

pub async fn check(db: &DatabaseConnection, broker: &BrokerStatus) -> Health {
    let database = match db.ping().await {
        Ok(()) => ComponentHealth {
            up: true,
            detail: format!("{:?} reachable", db.get_database_backend()),
        },
        Err(e) => {
            tracing::warn!(error = %e, "database ping failed");
            ComponentHealth {
                up: false,
                detail: "database unreachable".into(),
            }
        }
    };
    let b = broker.get();
    Health {
        database,
        broker: ComponentHealth {
            up: b.up,
            detail: b.detail,
        },
    }
}
