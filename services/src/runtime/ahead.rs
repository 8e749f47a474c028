//! Planning a burst of cron fires before its time.
//!
//! The groups due at a fire time are known seconds ahead, and SQLite has one writer: a batch of
//! thousands of fires planned under the write lock holds it while it reads the groups, members,
//! launch settings and nodes and builds tens of thousands of rows. [`prepare`] does that reading
//! (on a snapshot, without the lock) and building before the fire time, with every row stamped
//! with the fire time; [`record`], at the fire time, only executes the statements. It keeps the
//! plan only when what it rests on is unchanged under the lock: the catalog revision, the live
//! nodes of its applications and its launch settings' quarantined hosts (the nodes' loads may
//! have moved, which only shifts the spread a little). Otherwise, or when a fire was recorded
//! by another replica, or when the write comes too late for the stamps to be true, nothing of
//! the plan is kept and the batch is planned again under the lock (`super::fires::fire`), so the
//! result is always one that planning under the lock could give. The numbers are in
//! docs/benchmarks.md (P2).

use super::{
    Metrics, RuntimeConfig,
    fires::{self, Batch, Counted, Fire, Fired, Lock, Read, Written},
    locks,
    overlap::Busy,
    resolve::Footing,
};
use crate::{catalog, error::ServiceResult};
use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, TransactionTrait};
use std::collections::HashSet;

/// How late after its fire time a planned batch may still be written as planned: its rows say
/// they were recorded at the fire time, and its view of the nodes is of that time.
pub const KEEP_FOR: chrono::Duration = chrono::Duration::seconds(2);

/// A batch of cron fires read and planned before its time, for [`record`].
pub struct Prepared {
    fires: Vec<Fire>,
    /// The fire time every row is stamped with.
    at: DateTime<Utc>,
    revision: i64,
    footing: Footing,
    /// Which launch settings the batch may start still ran, and for which it read that.
    busy: Busy,
    watched: Vec<String>,
    batch: Batch,
    counted: Counted,
}

impl Prepared {
    /// The fires it plans, in order.
    pub fn fires(&self) -> &[Fire] {
        &self.fires
    }
}

/// Reads and plans `fires`, due at `at`, without taking the write lock.
#[tracing::instrument(skip_all, fields(fires = fires.len()))]
pub async fn prepare(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    fires: Vec<Fire>,
    at: DateTime<Utc>,
) -> ServiceResult<Prepared> {
    // One read transaction: a snapshot on SQLite. The revision is read first, so on PostgreSQL
    // (a snapshot per statement) a catalog write that a later read sees has also changed it.
    let snapshot = db.begin().await?;
    let revision = catalog::revision(&snapshot).await?;
    let mut read = Read::load(&snapshot, cfg, &fires, at, Lock::None).await?;
    snapshot.commit().await?;
    let footing = read.resolver.footing();
    let (busy, watched) = (read.busy.clone(), read.watched.clone());
    let counted = Counted::new(cfg);
    let batch = Batch::plan(
        &fires,
        &mut read,
        &counted.cfg,
        at,
        &HashSet::new(),
        fires::backend(db),
    );
    Ok(Prepared {
        fires,
        at,
        revision,
        footing,
        busy,
        watched,
        batch,
        counted,
    })
}

/// Records a prepared batch: as planned when it is still on time and its footing unchanged,
/// otherwise planned again under the lock at `now`.
#[tracing::instrument(skip_all, fields(fires = prepared.fires.len()))]
pub async fn record(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    prepared: Prepared,
    now: DateTime<Utc>,
) -> ServiceResult<Fired> {
    let Prepared {
        fires,
        at,
        revision,
        footing,
        busy,
        watched,
        batch,
        counted,
    } = prepared;
    if now - at <= KEEP_FOR {
        let txn = super::begin_write(db).await?;
        locks::launch_settings(&txn, watched.iter().cloned()).await?;
        let current = catalog::revision(&txn).await? == revision
            && footing.reread(&txn, at, cfg.node_timeout).await? == footing
            && Busy::load(&txn, &watched).await? == busy;
        if current {
            match fires::write(&txn, cfg, &fires, batch, at, None).await? {
                Written::All(out) => {
                    txn.commit().await?;
                    counted.commit(cfg);
                    let planned = out.iter().filter(|o| o.1.is_some()).count();
                    Metrics::add(&cfg.metrics.fires_planned_ahead, planned as u64);
                    return Ok(out);
                }
                Written::Duplicates(_) => txn.rollback().await?,
            }
        } else {
            txn.rollback().await?;
        }
    }
    Metrics::add(&cfg.metrics.fires_planned_again, fires.len() as u64);
    tracing::debug!("a batch planned ahead is out of date; planning it again");
    fires::fire(db, cfg, &fires, now, None).await
}
