//! Background jobs on the manager's own database, run by an apalis worker: bulk operations
//! (`am_services::operations`) and the failure-log retention sweep (`am_services::retention`).
//!
//! The jobs live in apalis' tables beside ours (SQLite or PostgreSQL, whichever the manager
//! uses), so a job pushed by one replica may run on another and a job whose manager died is
//! taken up again. Progress of an operation is not apalis' business: it is in the
//! `operations` row, written after every batch, which is what makes an interrupted operation
//! continue where it stopped rather than start over.

mod publisher;

use crate::broker::Link;
use am_services::{
    ServiceError, Services,
    operations::{self, OperationQueue, QueueError},
    retention::{self, RetentionPolicy},
    runtime::RuntimeConfig,
};
use apalis::prelude::*;
use apalis_postgres::PostgresStorage;
use apalis_sqlite::SqliteStorage;
use sea_orm::{DatabaseBackend, DatabaseConnection};
use serde::{Deserialize, Serialize};
use std::{future::Future, pin::Pin, sync::Arc, time::Duration};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

pub use publisher::BrokerPublisher;

/// A job of the manager's queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Job {
    /// Carry out (or resume) a bulk operation.
    Operation(Uuid),
    /// Delete failure logs the retention rules no longer keep.
    Retention,
}

/// How often the worker looks for new jobs. Operators watch a progress bar start: it should
/// move within a second of the click.
const POLL_EVERY: Duration = Duration::from_millis(500);
/// How often operations that never reached the worker, or whose runner died, are queued again.
const RESUME_EVERY: Duration = Duration::from_secs(15);
/// How often the retention sweep runs (and once shortly after start).
const RETENTION_EVERY: Duration = Duration::from_secs(3600);
const RETENTION_FIRST_AFTER: Duration = Duration::from_secs(60);
/// Jobs one manager runs at the same time.
const CONCURRENCY: usize = 4;
/// The apalis queue name, the same for every replica.
const QUEUE: &str = "agent-manager";

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("the job queue cannot be set up: {0}")]
    Setup(String),
    #[error("cannot queue the job: {0}")]
    Push(String),
    #[error(transparent)]
    Service(#[from] ServiceError),
}

/// The job tables of the manager's database, on either backend.
#[derive(Clone)]
pub enum JobStore {
    Sqlite(SqliteStorage<Job>),
    Postgres(PostgresStorage<Job>),
}

impl JobStore {
    /// Creates apalis' tables if needed (its own migrations, recorded apart from ours) and
    /// opens the queue on the connection pool the manager already has.
    pub async fn open(db: &DatabaseConnection) -> Result<Self, JobError> {
        match db.get_database_backend() {
            DatabaseBackend::Sqlite => {
                let pool = db.get_sqlite_connection_pool();
                // Its migrations only: `SqliteStorage::setup` would also switch the shared
                // connections to `synchronous = OFF`, trading the catalog's durability for
                // queue speed we do not need.
                SqliteStorage::<()>::migrations()
                    .run(pool)
                    .await
                    .map_err(|e| JobError::Setup(e.to_string()))?;
                // No separate lock write after a fetch: the fetch already marks the job as
                // this worker's, and on SQLite that second write in a deferred transaction
                // fails at once ("database is locked") whenever the job's own work commits
                // in between, which made apalis fail and re-run the attempt.
                Ok(JobStore::Sqlite(
                    SqliteStorage::new(pool).with_config(
                        apalis_sqlite::Config::default()
                            .queue(QUEUE)
                            .lock_tasks(false),
                    ),
                ))
            }
            DatabaseBackend::Postgres => {
                let pool = db.get_postgres_connection_pool();
                PostgresStorage::<()>::setup(pool)
                    .await
                    .map_err(|e| JobError::Setup(e.to_string()))?;
                Ok(JobStore::Postgres(PostgresStorage::new(pool).with_config(
                    apalis_postgres::Config::default().queue(QUEUE),
                )))
            }
            other => Err(JobError::Setup(format!(
                "background jobs need SQLite or PostgreSQL, not {other:?}"
            ))),
        }
    }

    pub async fn push(&self, job: Job) -> Result<(), JobError> {
        match self.clone() {
            JobStore::Sqlite(mut s) => s.push(job).await.map_err(|e| JobError::Push(e.to_string())),
            JobStore::Postgres(mut s) => {
                s.push(job).await.map_err(|e| JobError::Push(e.to_string()))
            }
        }
    }
}

impl OperationQueue for JobStore {
    fn enqueue(&self, id: Uuid) -> Pin<Box<dyn Future<Output = Result<(), QueueError>> + Send>> {
        let store = self.clone();
        Box::pin(async move {
            store
                .push(Job::Operation(id))
                .await
                .map_err(|e| QueueError(Box::new(e)))
        })
    }
}

/// Wakes the worker every period to look for jobs. apalis' own interval strategy re-arms its
/// timer without polling it, so after the first empty fetch an idle worker only woke again on
/// its 30 s heartbeat (a new operation then waited up to half a minute); this stream wakes the
/// worker again whenever it yields, so the next poll arms the next tick.
struct Ticks(tokio::time::Interval);

impl Ticks {
    fn every(period: Duration) -> Self {
        let mut interval = tokio::time::interval(period);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Ticks(interval)
    }
}

impl futures_util::Stream for Ticks {
    type Item = ();

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<()>> {
        match self.0.poll_tick(cx) {
            std::task::Poll::Ready(_) => {
                cx.waker().wake_by_ref();
                std::task::Poll::Ready(Some(()))
            }
            std::task::Poll::Pending => std::task::Poll::Pending,
        }
    }
}

/// What a job may use.
#[derive(Clone)]
pub struct JobContext {
    pub db: DatabaseConnection,
    pub cfg: Arc<RuntimeConfig>,
    pub retention: RetentionPolicy,
    pub publisher: Arc<BrokerPublisher>,
}

#[tracing::instrument(skip(ctx))]
async fn handle(job: Job, ctx: Data<Arc<JobContext>>) -> Result<(), BoxDynError> {
    match job {
        Job::Operation(id) => {
            let end = operations::run(&ctx.db, &ctx.cfg, id, ctx.publisher.as_ref()).await?;
            tracing::debug!(?end, "operation job ended");
        }
        Job::Retention => {
            let report = retention::sweep(&ctx.db, &ctx.retention).await?;
            tracing::info!(?report, "failure-log retention sweep");
        }
    }
    Ok(())
}

/// Starts the worker and its two tickers (resume, retention); they end when `stop` fires.
pub fn spawn(
    store: JobStore,
    services: &Services,
    link: Link,
    retention: RetentionPolicy,
    stop: CancellationToken,
) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    let ctx = Arc::new(JobContext {
        db: services.db.clone(),
        cfg: services.runtime.clone(),
        retention,
        publisher: Arc::new(BrokerPublisher::new(
            link,
            services.runtime.names.clone(),
            stop.clone(),
        )),
    });
    let worker_stop = stop.clone();
    let worker_store = store.clone();
    tasks.spawn(async move {
        let stopped = worker_stop.clone();
        let result = match worker_store {
            JobStore::Sqlite(s) => {
                WorkerBuilder::new("agent-manager-jobs")
                    .backend(s.poll_with_stream(Ticks::every(POLL_EVERY)))
                    .data(ctx)
                    .concurrency(CONCURRENCY)
                    .build(handle)
                    .run_until(async move {
                        stopped.cancelled().await;
                        Ok::<(), std::io::Error>(())
                    })
                    .await
            }
            JobStore::Postgres(s) => {
                WorkerBuilder::new("agent-manager-jobs")
                    .backend(s.poll_with_stream(Ticks::every(POLL_EVERY)))
                    .data(ctx)
                    .concurrency(CONCURRENCY)
                    .build(handle)
                    .run_until(async move {
                        stopped.cancelled().await;
                        Ok::<(), std::io::Error>(())
                    })
                    .await
            }
        };
        if let Err(e) = result {
            tracing::error!(error = %e, "the job worker stopped");
        }
    });
    let db = services.db.clone();
    let resume_store = store.clone();
    let resume_stop = stop.clone();
    tasks.spawn(async move {
        let mut every = tokio::time::interval(RESUME_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = every.tick() => {}
                () = resume_stop.cancelled() => return,
            }
            match operations::resumable(&db, chrono::Utc::now()).await {
                Ok(ids) => {
                    for id in ids {
                        tracing::info!(operation = %id, "queueing an operation again");
                        if let Err(e) = resume_store.push(Job::Operation(id)).await {
                            tracing::warn!(operation = %id, error = %e, "cannot queue the operation; next pass retries");
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot look for operations to resume"),
            }
        }
    });
    tasks.spawn(async move {
        let mut next = tokio::time::Instant::now() + RETENTION_FIRST_AFTER;
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(next) => {}
                () = stop.cancelled() => return,
            }
            next += RETENTION_EVERY;
            if let Err(e) = store.push(Job::Retention).await {
                tracing::warn!(error = %e, "cannot queue the retention sweep; it runs next hour");
            }
        }
    });
    tasks
}
