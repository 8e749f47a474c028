//! The database side of broker reconciliation (docs/protocol.md, "Broker topology"): what the
//! catalog wants on the broker, what the reconciler last applied, and the lease that lets one
//! manager replica at a time change the broker.
//!
//! A pass is [`begin_pass`] (take the lease, read the catalog and the applied state, plan),
//! the broker I/O of the plan (the server's reconciler), then [`finish_pass`] (record what is
//! now applied, fenced by the lease). With the lease, a replica that read an older catalog can
//! never undo what a replica with a newer one applied.

use crate::{
    Principal,
    audit::{self, AuditEntry},
    catalog,
    entity::broker_topology,
    error::{ServiceError, ServiceResult},
};
use am_domain::{
    read::{
        broker::{BrokerView, Drift, LeavingView},
        depths::Depths,
    },
    roles::Operation,
    topology::{Binding, BrokerObjects, Departure, Exchange, Layout, Leaving, Plan, plan},
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait,
    QueryFilter, QuerySelect, TransactionTrait, sea_query::Expr,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

mod conflicts;
mod drift;

pub use conflicts::conflicts;
pub use drift::{Refusal, drift};

/// The sample a replica's reconciler task keeps up to date, read by the API, pages and
/// `/metrics` of that replica.
pub type DepthsHandle = std::sync::Arc<std::sync::RwLock<Depths>>;

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
    /// What the broker refused on the last pass (left out of `objects`, tried again).
    #[serde(default)]
    pub refused: Vec<Refusal>,
}

/// One reconciliation pass, planned.
#[derive(Debug, Clone)]
pub struct Pass {
    pub revision: i64,
    pub desired: BrokerObjects,
    pub plan: Plan,
    /// Exchanges this installation declared before (its applied state): the only ones a pass
    /// may replace when the broker holds them with other arguments. Any other exchange of that
    /// name belongs to someone else (another manager on the broker) and is left alone.
    pub owned_exchanges: BTreeSet<String>,
    /// Every queue on its way out after this pass's plan (older ones and new ones), unless
    /// the catalog wants it again.
    pub leaving: BTreeMap<String, LeavingSince>,
    /// What the broker refused on the pass before (no other replica writes it while this one
    /// holds the lease): the conflicts this pass meets anew are told.
    pub refused_before: Vec<Refusal>,
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
    /// The refused objects of `failed_queues` and `failed_exchanges`, and refused bindings.
    pub refusals: Vec<Refusal>,
    pub errors: Vec<String>,
}

/// What the reconciler polls: cheap (the applied state itself is not read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revisions {
    pub catalog: i64,
    /// The catalog revision the broker was last reconciled to (`None` before the first pass).
    pub applied: Option<i64>,
    /// When an operator last asked for a full pass.
    pub full_requested_at: Option<DateTime<Utc>>,
}

impl Revisions {
    pub fn in_sync(&self) -> bool {
        self.applied == Some(self.catalog)
    }
}

pub async fn revisions(db: &DatabaseConnection) -> ServiceResult<Revisions> {
    let row: Option<(Option<i64>, Option<DateTime<Utc>>)> = broker_topology::Entity::find_by_id(1)
        .select_only()
        .column(broker_topology::Column::AppliedRevision)
        .column(broker_topology::Column::FullRequestedAt)
        .into_tuple()
        .one(db)
        .await?;
    let (applied, full_requested_at) = row.unwrap_or((None, None));
    Ok(Revisions {
        catalog: catalog::revision(db).await?,
        applied,
        full_requested_at,
    })
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

async fn row(db: &impl ConnectionTrait) -> ServiceResult<broker_topology::Model> {
    broker_topology::Entity::find_by_id(1)
        .one(db)
        .await?
        .ok_or_else(|| ServiceError::Internal("broker_topology has no row 1".into()))
}

/// The applied state and the catalog revision it came from (`None` before the first pass).
pub async fn applied(db: &DatabaseConnection) -> ServiceResult<(Applied, Option<i64>)> {
    let row = row(db).await?;
    Ok((parse_applied(&row)?, row.applied_revision))
}

/// Where the broker differs from what the reconciler keeps, against this replica's last
/// sample of the broker (as the Broker page lists it).
pub async fn differences(db: &impl ConnectionTrait, depths: &Depths) -> ServiceResult<Vec<Drift>> {
    let row = row(db).await?;
    Ok(drift(&parse_applied(&row)?, row.reconciled_at, depths))
}

fn parse_applied(row: &broker_topology::Model) -> ServiceResult<Applied> {
    serde_json::from_str(&row.applied)
        .map_err(|e| ServiceError::Internal(format!("broker_topology.applied is unreadable: {e}")))
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
    let revision = catalog::revision(db).await?;
    let catalog = catalog::load_with(db, false).await?;
    let desired = layout.desired(&catalog);
    let (applied, applied_revision) = applied(db).await?;
    let first = applied_revision.is_none();
    let owned_exchanges = applied.objects.exchanges.keys().cloned().collect();
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
        owned_exchanges,
        leaving,
        refused_before: applied.refused,
    })
}

/// Records what a pass applied, if `holder` still holds the lease (false otherwise: another
/// replica took over, and this pass's record would be stale), and tells, in the same
/// transaction, the exchanges held by someone else that the pass met for the first time.
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
        refused_before,
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
        refused: outcome.refusals.clone(),
    };
    let json = serde_json::to_string(&applied)
        .map_err(|e| ServiceError::Internal(format!("broker state not serializable: {e}")))?;
    let error = (!outcome.errors.is_empty()).then(|| outcome.errors.join("\n"));
    let txn = crate::db::begin_write(db).await?;
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
        .exec(&txn)
        .await?;
    if done.rows_affected != 1 {
        return Ok(false);
    }
    conflicts::tell_new(&txn, &refused_before, &applied.refused, now).await?;
    txn.commit().await?;
    Ok(true)
}

pub async fn view(
    db: &DatabaseConnection,
    who: &Principal,
    depths: &DepthsHandle,
) -> ServiceResult<BrokerView> {
    who.require(Operation::Read)?;
    let row = row(db).await?;
    let applied = parse_applied(&row)?;
    let catalog_revision = catalog::revision(db).await?;
    let depths = depths.read().map(|d| d.clone()).unwrap_or_default();
    let drift = drift(&applied, row.reconciled_at, &depths);
    Ok(BrokerView {
        catalog_revision,
        applied_revision: row.applied_revision,
        in_sync: row.applied_revision == Some(catalog_revision),
        reconciled_at: row.reconciled_at,
        full_requested_at: row.full_requested_at,
        last_error: row.last_error,
        exchanges: applied.objects.exchanges.len(),
        queues: applied.objects.queues.len(),
        bindings: applied.objects.bindings.len(),
        leaving: applied
            .leaving
            .into_values()
            .map(|l| {
                let (how, reason) = match l.leaving.departure {
                    Departure::Drain => ("drain", None),
                    Departure::Retire { reason } => ("retire", Some(reason)),
                };
                LeavingView {
                    queue: l.leaving.queue.name,
                    how: how.to_owned(),
                    reason,
                    since: l.since,
                }
            })
            .collect(),
        depths,
        drift,
    })
}

/// Messages processed by the running activations of each launch setting, summed over their
/// hosts as the nodes' last heartbeats said (the base of [`rates`]).
pub async fn processed_by_launch_setting(
    db: &DatabaseConnection,
) -> ServiceResult<BTreeMap<String, i64>> {
    use crate::entity::{activation_hosts as h, activations as a};
    use crate::status;
    use sea_orm::{JoinType, RelationTrait};
    // Summed here: one row per running host is few, and SQL's SUM of a BIGINT is NUMERIC on
    // PostgreSQL.
    let rows: Vec<(Option<String>, i64)> = h::Entity::find()
        .select_only()
        .column(a::Column::LaunchSettingId)
        .column(h::Column::Processed)
        .join(JoinType::InnerJoin, h::Relation::Activations.def())
        .filter(h::Column::Status.is_in(status::host::ACTIVE))
        .filter(a::Column::LaunchSettingId.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    let mut out = BTreeMap::new();
    for (ls, n) in rows {
        if let Some(ls) = ls {
            *out.entry(ls).or_insert(0) += n;
        }
    }
    Ok(out)
}

/// The exchanges launch settings forward their dead letters to, with the launch setting: the
/// broker must have them, but their owners create them.
pub async fn forward_exchanges(db: &DatabaseConnection) -> ServiceResult<Vec<(String, String)>> {
    use crate::entity::launch_settings as ls;
    Ok(ls::Entity::find()
        .select_only()
        .columns([ls::Column::DeadLetterForwardTo, ls::Column::Id])
        .filter(ls::Column::DeadLetterForwardTo.is_not_null())
        .into_tuple()
        .all(db)
        .await?)
}

/// Asks the reconciler (of whichever replica holds the lease next) for a full pass:
/// everything declared and bound again, repairing what was removed by hand (operators).
pub async fn request_full_pass(
    db: &DatabaseConnection,
    who: &Principal,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    who.require(Operation::Repair)?;
    let txn = db.begin().await?;
    broker_topology::Entity::update_many()
        .col_expr(broker_topology::Column::FullRequestedAt, Expr::value(now))
        .filter(broker_topology::Column::Id.eq(1))
        .exec(&txn)
        .await?;
    audit::record(
        &txn,
        AuditEntry::new(who, "reconcile", "broker", "topology"),
    )
    .await?;
    txn.commit().await?;
    Ok(())
}
