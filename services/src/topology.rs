//! The database side of broker reconciliation (docs/protocol.md, "Broker topology"): what the
//! catalog wants on the broker, what the reconciler last applied, and the lease that lets one
//! manager replica at a time change the broker.
//!
//! A pass is [`begin_pass`] (take the lease, read the catalog and the applied state, plan),
//! the broker I/O of the plan (the server's reconciler), then [`finish_pass`] (record what is
//! now applied, fenced by the lease). With the lease, a replica that read an older catalog can
//! never undo what a replica with a newer one applied.

use crate::{
    catalog,
    entity::{broker_topology, catalog_meta},
    error::{ServiceError, ServiceResult},
};
use am_domain::topology::{Binding, BrokerObjects, Exchange, Layout, Leaving, Plan, plan};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter,
    QuerySelect, sea_query::Expr,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A queue on its way out, since when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeavingSince {
    pub leaving: Leaving,
    pub since: DateTime<Utc>,
}

impl LeavingSince {
    /// Whether a retiring queue has been held long enough for messages still waiting in wait
    /// queues to have come back to it.
    pub fn hold_over(&self, now: DateTime<Utc>) -> bool {
        let hold = i64::try_from(self.leaving.queue.hold_ms()).unwrap_or(i64::MAX);
        now.signed_duration_since(self.since).num_milliseconds() >= hold
    }
}

/// What the reconciler has applied to the broker.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    #[serde(default)]
    pub objects: BrokerObjects,
    /// Queues no longer wanted that still exist, by name.
    #[serde(default)]
    pub leaving: BTreeMap<String, LeavingSince>,
}

/// One reconciliation pass, planned.
#[derive(Debug, Clone)]
pub struct Pass {
    pub revision: i64,
    pub desired: BrokerObjects,
    pub plan: Plan,
    /// Every queue on its way out after this pass's plan (older ones and new ones), unless
    /// the catalog wants it again.
    pub leaving: BTreeMap<String, LeavingSince>,
}

/// What the broker I/O of a pass achieved.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Leaving queues that are gone now.
    pub gone: Vec<String>,
    /// Objects the broker refused (named in `errors`): left out of the applied state so the
    /// next pass tries again.
    pub failed_queues: Vec<String>,
    pub failed_exchanges: Vec<String>,
    /// Bindings and exchanges the broker did not let go of: kept in the applied state, so the
    /// next pass removes them again.
    pub kept_bindings: Vec<Binding>,
    pub kept_exchanges: Vec<Exchange>,
    pub errors: Vec<String>,
}

/// The catalog's revision, bumped by every catalog write of any replica.
pub async fn catalog_revision(db: &DatabaseConnection) -> ServiceResult<i64> {
    Ok(catalog_meta::Entity::find_by_id(1)
        .one(db)
        .await?
        .map_or(0, |m| m.revision))
}

/// The catalog's revision and the one the broker was last reconciled to; cheap enough to
/// poll (the applied state itself is not read).
pub async fn revisions(db: &DatabaseConnection) -> ServiceResult<(i64, Option<i64>)> {
    let applied: Option<Option<i64>> = broker_topology::Entity::find_by_id(1)
        .select_only()
        .column(broker_topology::Column::AppliedRevision)
        .into_tuple()
        .one(db)
        .await?;
    Ok((catalog_revision(db).await?, applied.flatten()))
}

/// Takes (or extends) the reconciler's lease for `ttl`; false while another replica holds it.
pub async fn take_lease(
    db: &DatabaseConnection,
    holder: &str,
    ttl: chrono::Duration,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    let taken = broker_topology::Entity::update_many()
        .col_expr(
            broker_topology::Column::Holder,
            Expr::value(holder.to_owned()),
        )
        .col_expr(broker_topology::Column::LeaseUntil, Expr::value(now + ttl))
        .filter(broker_topology::Column::Id.eq(1))
        .filter(
            Condition::any()
                .add(broker_topology::Column::Holder.is_null())
                .add(broker_topology::Column::Holder.eq(holder))
                .add(broker_topology::Column::LeaseUntil.is_null())
                .add(broker_topology::Column::LeaseUntil.lt(now)),
        )
        .exec(db)
        .await?;
    Ok(taken.rows_affected == 1)
}

/// Gives the lease up, so another replica need not wait for it to expire.
pub async fn release_lease(db: &DatabaseConnection, holder: &str) -> ServiceResult<()> {
    broker_topology::Entity::update_many()
        .col_expr(
            broker_topology::Column::LeaseUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(
            broker_topology::Column::Holder,
            Expr::value(Option::<String>::None),
        )
        .filter(broker_topology::Column::Id.eq(1))
        .filter(broker_topology::Column::Holder.eq(holder))
        .exec(db)
        .await?;
    Ok(())
}

async fn row(db: &DatabaseConnection) -> ServiceResult<broker_topology::Model> {
    broker_topology::Entity::find_by_id(1)
        .one(db)
        .await?
        .ok_or_else(|| ServiceError::Internal("broker_topology has no row 1".into()))
}

/// The applied state and the catalog revision it came from (`None` before the first pass).
pub async fn applied(db: &DatabaseConnection) -> ServiceResult<(Applied, Option<i64>)> {
    let row = row(db).await?;
    let applied = serde_json::from_str(&row.applied).map_err(|e| {
        ServiceError::Internal(format!("broker_topology.applied is unreadable: {e}"))
    })?;
    Ok((applied, row.applied_revision))
}

/// Plans a pass for `holder`, who must hold the lease. `full` declares and binds everything
/// wanted again (start-up, periodic repair, *Reconcile now*); the first pass ever also unbinds
/// and drains the delay queues nodes of protocol version 1 declared themselves.
pub async fn begin_pass(
    db: &DatabaseConnection,
    layout: &Layout,
    full: bool,
    now: DateTime<Utc>,
) -> ServiceResult<Pass> {
    let revision = catalog_revision(db).await?;
    let catalog = catalog::load_with(db, false).await?;
    let desired = layout.desired(&catalog);
    let (applied, applied_revision) = applied(db).await?;
    let first = applied_revision.is_none();
    let mut before = applied.objects.clone();
    if first {
        let legacy = layout.legacy(&catalog);
        before.queues.extend(legacy.queues);
        before.bindings.extend(legacy.bindings);
    }
    let plan = plan(&desired, &before, full || first);
    let mut leaving = applied.leaving;
    leaving.retain(|name, _| !desired.queues.contains_key(name));
    for l in &plan.leaving {
        leaving
            .entry(l.queue.name.clone())
            .or_insert_with(|| LeavingSince {
                leaving: l.clone(),
                since: now,
            });
    }
    Ok(Pass {
        revision,
        desired,
        plan,
        leaving,
    })
}

/// Records what a pass applied, if `holder` still holds the lease (false otherwise: another
/// replica took over, and this pass's record would be stale).
pub async fn finish_pass(
    db: &DatabaseConnection,
    holder: &str,
    pass: Pass,
    outcome: &Outcome,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    let Pass {
        revision,
        mut desired,
        mut leaving,
        ..
    } = pass;
    for name in &outcome.gone {
        leaving.remove(name);
    }
    for name in &outcome.failed_queues {
        desired.queues.remove(name);
        desired.bindings.retain(|b| &b.queue != name);
    }
    for name in &outcome.failed_exchanges {
        desired.exchanges.remove(name);
        desired.bindings.retain(|b| &b.exchange != name);
    }
    desired
        .bindings
        .extend(outcome.kept_bindings.iter().cloned());
    for ex in &outcome.kept_exchanges {
        desired.add_exchange(ex.clone());
    }
    let applied = Applied {
        objects: desired,
        leaving,
    };
    let json = serde_json::to_string(&applied)
        .map_err(|e| ServiceError::Internal(format!("broker state not serializable: {e}")))?;
    let error = (!outcome.errors.is_empty()).then(|| outcome.errors.join("\n"));
    let done = broker_topology::Entity::update_many()
        .set(broker_topology::ActiveModel {
            applied: Set(json),
            applied_revision: Set(Some(revision)),
            reconciled_at: Set(Some(now)),
            last_error: Set(error),
            ..Default::default()
        })
        .filter(broker_topology::Column::Id.eq(1))
        .filter(broker_topology::Column::Holder.eq(holder))
        .filter(broker_topology::Column::LeaseUntil.gte(now))
        .exec(db)
        .await?;
    Ok(done.rows_affected == 1)
}

/// When the broker was last reconciled, from which catalog revision, and its last error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub applied_revision: Option<i64>,
    pub catalog_revision: i64,
    pub reconciled_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
}

pub async fn status(db: &DatabaseConnection) -> ServiceResult<Status> {
    let row = row(db).await?;
    Ok(Status {
        applied_revision: row.applied_revision,
        catalog_revision: catalog_revision(db).await?,
        reconciled_at: row.reconciled_at,
        last_error: row.last_error,
    })
}
