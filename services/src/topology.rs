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
    roles::Role,
    topology::{Binding, BrokerObjects, Departure, Exchange, Layout, Leaving, Plan, plan},
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter,
    QuerySelect, TransactionTrait, sea_query::Expr,
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

async fn row(db: &DatabaseConnection) -> ServiceResult<broker_topology::Model> {
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

/// The roles of the queues whose depth is sampled ([`QueueDepth::role`]).
pub mod queue_role {
    /// A launch setting's own subscription queue (`topic` data queues).
    pub const SUBSCRIPTION: &str = "subscription";
    /// A `queue` data queue's queue, shared by its launch settings.
    pub const SHARED: &str = "shared";
    /// What no launch setting of a data queue took.
    pub const UNROUTED: &str = "unrouted";
}

/// What one queue nodes consume (or the unrouted queue of a data queue) holds, as last sampled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct QueueDepth {
    pub queue: String,
    /// `subscription`, `shared` or `unrouted`.
    pub role: String,
    pub launch_setting: Option<String>,
    pub data_queue: Option<String>,
    /// Messages waiting to be delivered (not those a node holds unacknowledged).
    pub ready: u32,
    /// Nodes consuming it.
    pub consumers: u32,
}

/// The last sample of what the broker holds, per consumed and unrouted queue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Depths {
    pub sampled_at: Option<DateTime<Utc>>,
    pub queues: Vec<QueueDepth>,
}

/// What waits in the broker for one launch setting, from the last sample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Backlog {
    /// The queue the launch setting consumes.
    pub queue: String,
    /// The queue is its data queue's shared one (kind `queue`): every launch setting of that
    /// data queue takes from it, so they show the same backlog.
    pub shared: bool,
    /// Messages waiting to be delivered.
    pub ready: u32,
    /// Nodes consuming the queue.
    pub consumers: u32,
    pub sampled_at: Option<DateTime<Utc>>,
}

impl Depths {
    /// The backlog of one launch setting whose agent takes `data_queue`, if its queue was
    /// sampled: its own subscription, or its data queue's shared queue.
    pub fn backlog_of(&self, launch_setting: &str, data_queue: Option<&str>) -> Option<Backlog> {
        let own = self.queues.iter().find(|q| {
            q.role == queue_role::SUBSCRIPTION
                && q.launch_setting.as_deref() == Some(launch_setting)
        });
        let found = own.or_else(|| {
            self.queues.iter().find(|q| {
                q.role == queue_role::SHARED
                    && data_queue.is_some()
                    && q.data_queue.as_deref() == data_queue
            })
        })?;
        Some(self.backlog(found))
    }

    fn backlog(&self, q: &QueueDepth) -> Backlog {
        Backlog {
            queue: q.queue.clone(),
            shared: q.role == queue_role::SHARED,
            ready: q.ready,
            consumers: q.consumers,
            sampled_at: self.sampled_at,
        }
    }

    /// The backlog of each of `settings` whose queue was sampled: its own subscription, or its
    /// data queue's shared queue.
    pub fn backlogs<'a>(
        &self,
        catalog: &am_domain::catalog::Catalog,
        settings: impl IntoIterator<Item = &'a am_domain::catalog::LaunchSetting>,
    ) -> std::collections::HashMap<String, Backlog> {
        let mut own = std::collections::HashMap::new();
        let mut shared = std::collections::HashMap::new();
        for q in &self.queues {
            match (q.role.as_str(), &q.launch_setting, &q.data_queue) {
                (queue_role::SUBSCRIPTION, Some(ls), _) => {
                    own.insert(ls.as_str(), q);
                }
                (queue_role::SHARED, _, Some(dq)) => {
                    shared.insert(dq.as_str(), q);
                }
                _ => {}
            }
        }
        let data_queue_of: std::collections::HashMap<(&str, &str), &str> = catalog
            .agents
            .iter()
            .filter_map(|a| {
                a.data_queue
                    .as_deref()
                    .map(|dq| ((a.application.as_str(), a.id.as_str()), dq))
            })
            .collect();
        settings
            .into_iter()
            .filter_map(|ls| {
                let found = own.get(ls.id.as_str()).or_else(|| {
                    data_queue_of
                        .get(&(ls.application.as_str(), ls.agent.as_str()))
                        .and_then(|dq| shared.get(dq))
                })?;
                Some((ls.id.clone(), self.backlog(found)))
            })
            .collect()
    }
}

/// The sample a replica's reconciler task keeps up to date, read by the API, pages and
/// `/metrics` of that replica.
pub type DepthsHandle = std::sync::Arc<std::sync::RwLock<Depths>>;

/// The queues whose depth is worth sampling: what nodes consume and what no launch setting
/// took, with their labels.
pub fn sampled_queues(objects: &BrokerObjects) -> Vec<QueueDepth> {
    use am_domain::topology::QueueRole as R;
    objects
        .queues
        .values()
        .filter_map(|q| {
            let (role, ls, dq) = match &q.role {
                R::Subscription {
                    launch_setting,
                    data_queue,
                    ..
                } => (
                    queue_role::SUBSCRIPTION,
                    Some(launch_setting),
                    Some(data_queue),
                ),
                R::Shared { data_queue, .. } => (queue_role::SHARED, None, Some(data_queue)),
                R::Unrouted { data_queue } => (queue_role::UNROUTED, None, Some(data_queue)),
                R::Delay { .. } | R::Wait | R::System => return None,
            };
            Some(QueueDepth {
                queue: q.name.clone(),
                role: role.to_owned(),
                launch_setting: ls.cloned(),
                data_queue: dq.cloned(),
                ready: 0,
                consumers: 0,
            })
        })
        .collect()
}

/// A queue on its way out, as the Broker page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LeavingView {
    pub queue: String,
    /// `drain` (deleted once its messages expired into where they go) or `retire` (its
    /// messages move to the dead-letter queue once its hold is over).
    pub how: String,
    pub reason: Option<String>,
    pub since: DateTime<Utc>,
}

/// The broker as the reconciler keeps it: in sync with which catalog revision, when, the last
/// refusals, how many objects it keeps and which queues are on their way out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BrokerView {
    pub catalog_revision: i64,
    pub applied_revision: Option<i64>,
    pub in_sync: bool,
    pub reconciled_at: Option<DateTime<Utc>>,
    pub full_requested_at: Option<DateTime<Utc>>,
    /// What the broker refused on the last pass, one line each (retried on the next).
    pub last_error: Option<String>,
    pub exchanges: usize,
    pub queues: usize,
    pub bindings: usize,
    pub leaving: Vec<LeavingView>,
    /// What the consumed and unrouted queues hold, as this replica last sampled them.
    pub depths: Depths,
}

pub async fn view(
    db: &DatabaseConnection,
    who: &Principal,
    depths: &DepthsHandle,
) -> ServiceResult<BrokerView> {
    who.require(Role::Viewer)?;
    let row = row(db).await?;
    let applied = parse_applied(&row)?;
    let catalog_revision = catalog::revision(db).await?;
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
        depths: depths.read().map(|d| d.clone()).unwrap_or_default(),
    })
}

/// Asks the reconciler (of whichever replica holds the lease next) for a full pass:
/// everything declared and bound again, repairing what was removed by hand (operators).
pub async fn request_full_pass(
    db: &DatabaseConnection,
    who: &Principal,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    who.require(Role::Operator)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(queue: &str, role: &str, ls: Option<&str>, dq: &str, ready: u32) -> QueueDepth {
        QueueDepth {
            queue: queue.into(),
            role: role.into(),
            launch_setting: ls.map(Into::into),
            data_queue: Some(dq.into()),
            ready,
            consumers: 1,
        }
    }

    #[test]
    fn a_launch_setting_shows_its_own_queue_or_its_data_queues_shared_one() {
        let d = Depths {
            sampled_at: None,
            queues: vec![
                depth("am.ls.a", "subscription", Some("a"), "events", 3),
                depth("am.dq.jobs", "shared", None, "jobs", 7),
                depth("am.dq.jobs.unrouted", "unrouted", None, "jobs", 9),
            ],
        };
        let own = d.backlog_of("a", Some("events")).expect("own");
        assert_eq!((own.ready, own.shared), (3, false));
        let shared = d.backlog_of("b", Some("jobs")).expect("shared");
        assert_eq!(
            (shared.queue.as_str(), shared.ready, shared.shared),
            ("am.dq.jobs", 7, true)
        );
        assert!(d.backlog_of("c", Some("other")).is_none());
        assert!(d.backlog_of("c", None).is_none());
    }
}
