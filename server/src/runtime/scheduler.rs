//! The scheduler: one tokio-cron-scheduler job per enabled schedule group, reloaded when the
//! catalog changes (any replica's write bumps the catalog revision), without restart.
//!
//! Each job is a one-shot at the group's next fire time as `am_domain::schedule` computes it
//! in the group's IANA time zone: tokio-cron-scheduler's own time-zone jobs freeze the zone's
//! UTC offset when the job is created, so a Paris group would fire an hour off after the next
//! daylight-saving change. A job only hands the fire to the firer, which records fires in
//! batches (cron only enqueues) and schedules the group's next one-shot.
//!
//! A fire is recorded with a unique key per group and fire time, so replicas sharing one
//! PostgreSQL database each fire every time exactly once between them.

use am_domain::schedule::Schedule;
use am_services::{
    entity::catalog_meta,
    runtime::{
        Metrics, RuntimeConfig,
        groups::{self, Fire},
        schedule::{self, CatchUp, GroupSchedule},
        status::Trigger,
    },
};
use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, EntityTrait};
use std::{collections::HashMap, sync::Arc, time::Duration};
use tokio::sync::mpsc;
use tokio_cron_scheduler::{Job, JobScheduler};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// How often the catalog revision is checked for changes.
const RELOAD_EVERY: Duration = Duration::from_secs(1);
/// Fires recorded per transaction.
const FIRE_BATCH: usize = 5000;

/// A group's fire handed from its timer job to the firer.
#[derive(Debug, Clone)]
struct Due {
    group: String,
    at: DateTime<Utc>,
    trigger: Trigger,
    /// The entry's generation, so a fire of a replaced timer is dropped.
    generation: u64,
}

struct Entry {
    fingerprint: String,
    schedule: Schedule,
    job: Option<Uuid>,
    generation: u64,
}

struct State {
    jobs: JobScheduler,
    entries: HashMap<String, Entry>,
    tx: mpsc::UnboundedSender<Due>,
    generation: u64,
}

impl State {
    /// Arms a one-shot job for the group's fire at `at`.
    async fn arm(&mut self, group: &str, at: DateTime<Utc>, trigger: Trigger) {
        let Some(entry) = self.entries.get_mut(group) else {
            return;
        };
        if let Some(old) = entry.job.take() {
            let _ = self.jobs.remove(&old).await;
        }
        let wait = (at - Utc::now()).to_std().unwrap_or(Duration::ZERO);
        let instant = std::time::Instant::now() + wait;
        let due = Due {
            group: group.to_owned(),
            at,
            trigger,
            generation: entry.generation,
        };
        let tx = self.tx.clone();
        let job = Job::new_one_shot_at_instant_async(instant, move |_, _| {
            let tx = tx.clone();
            let due = due.clone();
            Box::pin(async move {
                let _ = tx.send(due);
            })
        });
        match job {
            Ok(job) => match self.jobs.add(job).await {
                Ok(id) => entry.job = Some(id),
                Err(e) => tracing::error!(%group, error = %e, "cannot schedule the group"),
            },
            Err(e) => tracing::error!(%group, error = %e, "cannot create the group's timer"),
        }
    }

    /// Brings the timers in line with the enabled groups. `first` applies the misfire policy to
    /// fires missed while no manager ran.
    async fn reload(
        &mut self,
        db: &DatabaseConnection,
        cfg: &RuntimeConfig,
        first: bool,
    ) -> Vec<(String, DateTime<Utc>)> {
        let groups = match schedule::load(db).await {
            Ok(g) => g,
            Err(e) => {
                tracing::warn!(error = %e, "cannot load the schedule groups; keeping the current timers");
                return Vec::new();
            }
        };
        let now = Utc::now();
        let wanted: HashMap<String, GroupSchedule> =
            groups.into_iter().map(|g| (g.id.clone(), g)).collect();
        let gone: Vec<String> = self
            .entries
            .iter()
            .filter(|(id, e)| {
                wanted
                    .get(*id)
                    .is_none_or(|g| g.fingerprint != e.fingerprint)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in gone {
            if let Some(e) = self.entries.remove(&id)
                && let Some(job) = e.job
            {
                let _ = self.jobs.remove(&job).await;
            }
        }
        let mut next_fires = Vec::new();
        for (id, g) in wanted {
            if self.entries.contains_key(&id) {
                continue;
            }
            self.generation += 1;
            self.entries.insert(
                id.clone(),
                Entry {
                    fingerprint: g.fingerprint.clone(),
                    schedule: g.schedule.clone(),
                    job: None,
                    generation: self.generation,
                },
            );
            let catch_up =
                schedule::catch_up(&g.schedule, g.misfire, g.since, now, cfg.misfire_threshold);
            let armed = match catch_up {
                CatchUp::Fire { at, late } if first || !late => {
                    self.arm(
                        &id,
                        at,
                        if late {
                            Trigger::Misfire
                        } else {
                            Trigger::Schedule
                        },
                    )
                    .await;
                    Some(at)
                }
                CatchUp::Skip { at } if first => {
                    if let Err(e) = schedule::record_skip(db, cfg, &id, at).await {
                        tracing::warn!(group = %id, error = %e, "cannot record a skipped misfire");
                    }
                    None
                }
                _ => None,
            };
            if armed.is_none()
                && let Some(next) = g.schedule.next_after(now)
            {
                self.arm(&id, next, Trigger::Schedule).await;
                next_fires.push((id, next));
            }
        }
        next_fires
    }
}

pub async fn run(db: DatabaseConnection, cfg: Arc<RuntimeConfig>, stop: CancellationToken) {
    let jobs = match JobScheduler::new().await {
        Ok(j) => j,
        Err(e) => {
            tracing::error!(error = %e, "cannot create the scheduler; no schedule fires");
            return;
        }
    };
    if let Err(e) = jobs.start().await {
        tracing::error!(error = %e, "cannot start the scheduler; no schedule fires");
        return;
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut state = State {
        jobs,
        entries: HashMap::new(),
        tx,
        generation: 0,
    };
    let mut revision: Option<i64> = None;
    let mut first = true;
    let mut reload = tokio::time::interval(RELOAD_EVERY);
    reload.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = reload.tick() => {
                let current = catalog_meta::Entity::find().one(&db).await.ok().flatten().map(|m| m.revision);
                if first || current != revision {
                    let next = state.reload(&db, &cfg, first).await;
                    record_next(&db, &next).await;
                    revision = current;
                    first = false;
                }
            }
            d = rx.recv() => {
                let Some(d) = d else { return };
                let mut batch = vec![d];
                while batch.len() < FIRE_BATCH {
                    match rx.try_recv() {
                        Ok(d) => batch.push(d),
                        Err(_) => break,
                    }
                }
                fire(&db, &cfg, &mut state, batch).await;
            }
            () = stop.cancelled() => {
                let _ = state.jobs.shutdown().await;
                return;
            }
        }
    }
}

async fn record_next(db: &DatabaseConnection, next: &[(String, DateTime<Utc>)]) {
    if let Err(e) = schedule::record_next_fires(db, next).await {
        tracing::debug!(error = %e, "cannot store next fire times");
    }
}

#[tracing::instrument(skip_all, fields(fires = batch.len()))]
async fn fire(db: &DatabaseConnection, cfg: &RuntimeConfig, state: &mut State, batch: Vec<Due>) {
    let now = Utc::now();
    let mut fires = Vec::with_capacity(batch.len());
    for d in batch {
        let current = state
            .entries
            .get(&d.group)
            .is_some_and(|e| e.generation == d.generation);
        if !current {
            continue;
        }
        if d.at > now {
            // The timer library counts whole seconds and may wake a little early.
            let tx = state.tx.clone();
            let wait = (d.at - now).to_std().unwrap_or(Duration::ZERO);
            tokio::spawn(async move {
                tokio::time::sleep(wait).await;
                let _ = tx.send(d);
            });
            continue;
        }
        fires.push(d);
    }
    if fires.is_empty() {
        return;
    }
    let records: Vec<Fire> = fires
        .iter()
        .map(|d| Fire::scheduled(&d.group, d.at, d.trigger))
        .collect();
    let mut backoff = Duration::from_millis(100);
    loop {
        match groups::fire(db, cfg, &records, Utc::now(), None).await {
            Ok(_) => break,
            Err(e) => {
                // The fire keys make a retry safe; the fires must not be dropped.
                tracing::warn!(error = %e, retry_in = ?backoff, "cannot record fires; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
    let lag = fires
        .iter()
        .map(|d| (Utc::now() - d.at).num_milliseconds())
        .max()
        .unwrap_or(0);
    cfg.metrics.scheduler_lag_ms.store(
        u64::try_from(lag).unwrap_or(0),
        std::sync::atomic::Ordering::Relaxed,
    );
    let mut next_fires = Vec::with_capacity(fires.len());
    for d in fires {
        if d.trigger == Trigger::Misfire {
            Metrics::inc(&cfg.metrics.misfires_fired);
        }
        let next = state
            .entries
            .get(&d.group)
            .and_then(|e| e.schedule.next_after(d.at));
        if let Some(next) = next {
            state.arm(&d.group, next, Trigger::Schedule).await;
            next_fires.push((d.group, next));
        }
    }
    record_next(db, &next_fires).await;
}
