//! The broker reconciler: the catalog is the desired state of every broker object that
//! carries data, and this task makes the broker match it (docs/protocol.md, "Broker
//! topology"). It runs a pass at start-up and after every (re)connect (a full one, declaring
//! everything again), within a second of any catalog write by any replica (the catalog
//! revision), every few seconds while queues are leaving, and a full one every few minutes to
//! repair what someone removed by hand. A database lease lets one replica at a time change the
//! broker; the others skip their pass. [`sample`] reads what the queues hold, apart.

mod apply;
mod depths;
mod leaving;

use crate::broker::Link;
use agent_client::Topology;
use am_services::topology::{self as rules, DepthsHandle, Outcome};
use chrono::Utc;
use lapin::Connection;
use sea_orm::DatabaseConnection;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// How often the catalog revision is looked at.
const POLL: Duration = Duration::from_millis(500);
/// How often what the queues hold is sampled.
const SAMPLE_EVERY: Duration = Duration::from_secs(5);
/// How often leaving queues are looked at while there are some.
const LEAVING_EVERY: Duration = Duration::from_secs(5);
/// How often everything is declared again.
const REPAIR_EVERY: Duration = Duration::from_secs(300);

/// How often everything is declared again with `topology`: in an ephemeral installation
/// (tests, demos) unused queues expire, so they are declared again well before.
fn repair_every(topology: &Topology) -> Duration {
    topology.layout().expires().map_or(REPAIR_EVERY, |e| {
        (e / 3).clamp(Duration::from_secs(5), REPAIR_EVERY)
    })
}
/// The lease outlives a pass by far; a replica that died holding it is replaced after this.
const LEASE_SECS: i64 = 60;

/// What one pass did, for logs and tests.
#[derive(Debug, Default)]
pub struct PassReport {
    pub revision: i64,
    pub changed: bool,
    pub leaving: usize,
    pub errors: Vec<String>,
}

/// One reconciliation pass on `conn` under the lease of `holder`; `None` when another replica
/// holds the lease.
pub async fn pass(
    db: &DatabaseConnection,
    conn: &Connection,
    topology: &Topology,
    holder: &str,
    full: bool,
) -> anyhow::Result<Option<PassReport>> {
    if !rules::take_lease(
        db,
        holder,
        chrono::Duration::seconds(LEASE_SECS),
        Utc::now(),
    )
    .await?
    {
        return Ok(None);
    }
    let result = run_pass(db, conn, topology, holder, full).await;
    if let Err(e) = rules::release_lease(db, holder).await {
        tracing::warn!(error = %e, "cannot release the reconciler lease; it expires by itself");
    }
    result.map(Some)
}

async fn run_pass(
    db: &DatabaseConnection,
    conn: &Connection,
    topology: &Topology,
    holder: &str,
    full: bool,
) -> anyhow::Result<PassReport> {
    let now = Utc::now();
    let pass = rules::begin_pass(db, topology.layout(), full, now).await?;
    let mut outcome = Outcome::default();
    let mut steps = apply::Steps::open(conn, topology).await?;
    apply::apply(
        &mut steps,
        &pass.plan,
        &pass.desired,
        &pass.owned_exchanges,
        &mut outcome,
    )
    .await;
    leaving::leave(&mut steps, pass.leaving.values(), now, &mut outcome).await;
    steps.close().await;
    let report = PassReport {
        revision: pass.revision,
        changed: !pass.plan.is_empty(),
        leaving: pass.leaving.len() - outcome.gone.len(),
        errors: outcome.errors.clone(),
    };
    if !rules::finish_pass(db, holder, pass, &outcome, Utc::now()).await? {
        anyhow::bail!("the reconciler lease expired during the pass; its result was not recorded");
    }
    Ok(report)
}

/// Samples what the queues hold once, into `samples`.
pub async fn sample_once(
    db: &DatabaseConnection,
    conn: &Connection,
    samples: &DepthsHandle,
) -> anyhow::Result<()> {
    depths::sample(db, conn, samples).await
}

/// Keeps `samples` of what the queues hold up to date until `stop` fires. A task of its own:
/// sampling thousands of queues takes seconds, which must not delay a reconciliation.
pub async fn sample(
    db: DatabaseConnection,
    samples: DepthsHandle,
    link: Link,
    stop: CancellationToken,
) {
    loop {
        let Some(conn) = link.connected(&stop).await else {
            return;
        };
        while conn.status().connected() {
            if let Err(e) = sample_once(&db, &conn, &samples).await {
                tracing::debug!(error = %e, "queue depths not sampled");
            }
            tokio::select! {
                () = tokio::time::sleep(SAMPLE_EVERY) => {}
                () = stop.cancelled() => return,
            }
        }
    }
}

/// Keeps the broker reconciled until `stop` fires.
pub async fn run(db: DatabaseConnection, topology: Topology, link: Link, stop: CancellationToken) {
    let holder = format!("manager-{}", uuid::Uuid::new_v4().simple());
    let repair = repair_every(&topology);
    loop {
        let Some(conn) = link.connected(&stop).await else {
            return;
        };
        // A fresh connection: declare everything again.
        let mut full = true;
        let mut last_full = Instant::now();
        let mut last_full_at = Utc::now();
        let mut last_pass = Instant::now();
        let mut leaving = 0;
        while conn.status().connected() {
            // Compared with what any replica applied last, so whichever holds the lease next
            // catches up, even after the one that started died.
            let (revision, behind, asked) = match rules::revisions(&db).await {
                Ok(r) => (
                    Some(r.catalog),
                    !r.in_sync(),
                    r.full_requested_at.is_some_and(|at| at > last_full_at),
                ),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the catalog revision");
                    (None, false, false)
                }
            };
            // An operator's *Reconcile now* makes this pass a full one.
            full |= asked;
            let due = full
                || behind
                || (leaving > 0 && last_pass.elapsed() >= LEAVING_EVERY)
                || last_full.elapsed() >= repair;
            if due {
                let full_pass = full || last_full.elapsed() >= repair;
                let started_at = Utc::now();
                let span = tracing::info_span!("reconcile", full = full_pass, revision);
                match pass(&db, &conn, &topology, &holder, full_pass)
                    .instrument(span)
                    .await
                {
                    Ok(Some(report)) => {
                        for e in &report.errors {
                            tracing::warn!(error = %e, "the broker refused a step; the next pass tries again");
                        }
                        if report.changed {
                            tracing::info!(
                                revision = report.revision,
                                leaving = report.leaving,
                                "broker reconciled"
                            );
                        }
                        leaving = report.leaving;
                        full = false;
                        if full_pass {
                            last_full = Instant::now();
                            last_full_at = started_at;
                        }
                    }
                    // Another replica is reconciling.
                    Ok(None) => {}
                    Err(e) => tracing::warn!(error = %e, "reconciliation failed; retrying"),
                }
                last_pass = Instant::now();
            }
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                () = stop.cancelled() => return,
            }
        }
    }
}
