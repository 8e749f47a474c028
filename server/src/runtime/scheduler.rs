//! The scheduler: one timer per enabled schedule group, reloaded when the catalog changes (any
//! replica's write bumps the catalog revision), without restart.
//!
//! Each timer is a one-shot at the group's next fire time as `am_domain::schedule` computes it
//! in the group's IANA time zone (a fixed UTC offset would fire an hour off after the next
//! daylight-saving change). The timers are an ordered map of due times, served by one tokio
//! sleep until the earliest: a burst of thousands of groups due in the same second wakes the
//! loop once and is recorded in batches (cron only enqueues); each fired group's next one-shot
//! is armed after its batch commits.
//!
//! The timers were tokio-cron-scheduler 0.15 jobs at first. Its actors talk over broadcast
//! channels of 200 messages: more than about 200 jobs due in one of its 500 ms ticks made the
//! job runner skip activations (lost fires) and its deleter task exit, after which every
//! `JobScheduler::remove` waited forever and the scheduler with it. With 2,000 groups due in
//! one second, one fire was recorded (see `docs/benchmarks.md`, P2).
//!
//! A burst is planned [`PLAN_AHEAD`] before its time (`am_services::runtime::ahead`): the
//! groups due next are read and their rows built while nothing is due, so at the fire time the
//! batches only write (docs/benchmarks.md, P2).
//!
//! A fire is recorded with a unique key per group and fire time, so replicas sharing one
//! PostgreSQL database each fire every time exactly once between them.

use am_domain::schedule::Schedule;
use am_services::runtime::{
    Metrics, RuntimeConfig,
    ahead::{self, Prepared},
    fires::{self, Fire},
    schedule::{self, CatchUp, GroupSchedule},
};
use am_services::status::Trigger;
use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    sync::Arc,
    time::Duration,
};
use tokio_util::sync::CancellationToken;

/// How often the catalog revision is checked for changes. The loop also wakes this often, so
/// a change of the wall clock moves the timers within this delay.
const RELOAD_EVERY: Duration = Duration::from_secs(1);
/// Fires recorded per transaction.
const FIRE_BATCH: usize = 5000;
/// How long before a fire time its batches are planned. Planning 10,000 fires takes well under
/// a second in a release build; a plan that is not ready in time is used when it is.
const PLAN_AHEAD: Duration = Duration::from_secs(2);
/// Fires planned ahead at most: the rest of a larger burst is planned when due, so the plans
/// held in memory stay bounded.
const AHEAD_MAX: usize = 2 * FIRE_BATCH;

/// A group's fire, waiting for its time.
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
    schedule: Arc<Schedule>,
    /// When the group's timer is due, if it is armed.
    armed: Option<DateTime<Utc>>,
    generation: u64,
}

#[derive(Default)]
struct State {
    entries: HashMap<String, Entry>,
    /// Armed timers by due time.
    timers: BTreeMap<DateTime<Utc>, Vec<Due>>,
    generation: u64,
    /// Batches of the next due time planned before it, in the order they will be taken.
    ahead: Option<Ahead>,
}

struct Ahead {
    at: DateTime<Utc>,
    batches: VecDeque<Prepared>,
}

impl State {
    /// Arms the group's one-shot timer for its fire at `at`, replacing the armed one.
    fn arm(&mut self, group: &str, at: DateTime<Utc>, trigger: Trigger) {
        let Some(entry) = self.entries.get_mut(group) else {
            return;
        };
        if let Some(old) = entry.armed.replace(at) {
            disarm(&mut self.timers, group, old);
        }
        self.timers.entry(at).or_default().push(Due {
            group: group.to_owned(),
            at,
            trigger,
            generation: entry.generation,
        });
    }

    /// The earliest armed due time.
    fn next_wake(&self) -> Option<DateTime<Utc>> {
        self.timers.keys().next().copied()
    }

    /// Takes up to `max` timers due at `now`, earliest first.
    fn take_due(&mut self, now: DateTime<Utc>, max: usize) -> Vec<Due> {
        let mut out = Vec::new();
        while out.len() < max {
            let Some(mut slot) = self.timers.first_entry() else {
                break;
            };
            if *slot.key() > now {
                break;
            }
            let room = max - out.len();
            let dues = slot.get_mut();
            if dues.len() <= room {
                out.append(&mut slot.remove());
            } else {
                out.extend(dues.drain(..room));
            }
        }
        for d in &out {
            if let Some(e) = self.entries.get_mut(&d.group)
                && e.generation == d.generation
            {
                e.armed = None;
            }
        }
        out
    }

    /// The fires of `dues` whose timers are still current, each with its group's next fire
    /// time.
    fn fires_of(&self, dues: &[Due]) -> Vec<Fire> {
        dues.iter()
            .filter_map(|d| {
                let entry = self
                    .entries
                    .get(&d.group)
                    .filter(|e| e.generation == d.generation)?;
                Some(Fire {
                    next: entry.schedule.next_after(d.at),
                    ..Fire::scheduled(&d.group, d.at, d.trigger)
                })
            })
            .collect()
    }

    /// The earliest due time, when it is still ahead and not planned yet.
    fn to_plan(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let at = self.next_wake().filter(|at| *at > now)?;
        match &self.ahead {
            Some(a) if a.at == at => None,
            _ => Some(at),
        }
    }

    /// The batches [`State::take_due`] will give for the fires due at `at`, as fires, up to
    /// [`AHEAD_MAX`] of them.
    fn batches_at(&self, at: DateTime<Utc>) -> Vec<Vec<Fire>> {
        let Some(dues) = self.timers.get(&at) else {
            return Vec::new();
        };
        dues.chunks(FIRE_BATCH)
            .take(AHEAD_MAX / FIRE_BATCH)
            .map(|chunk| self.fires_of(chunk))
            .filter(|fires| !fires.is_empty())
            .collect()
    }

    /// The batch planned for exactly these fires, if any; a batch that does not match means the
    /// timers changed since planning, and every plan of that time is dropped.
    fn planned(&mut self, fires: &[Fire]) -> Option<Prepared> {
        let ahead = self.ahead.as_mut()?;
        let matches = ahead
            .batches
            .front()
            .is_some_and(|p| same_fires(p.fires(), fires));
        if matches {
            ahead.batches.pop_front()
        } else {
            self.ahead = None;
            None
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
                && let Some(at) = e.armed
            {
                disarm(&mut self.timers, &id, at);
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
                    schedule: Arc::clone(&g.schedule),
                    armed: None,
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
                    );
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
                self.arm(&id, next, Trigger::Schedule);
                next_fires.push((id, next));
            }
        }
        next_fires
    }
}

/// Removes a group's timer due at `at`.
fn disarm(timers: &mut BTreeMap<DateTime<Utc>, Vec<Due>>, group: &str, at: DateTime<Utc>) {
    if let Some(dues) = timers.get_mut(&at) {
        dues.retain(|d| d.group != group);
        if dues.is_empty() {
            timers.remove(&at);
        }
    }
}

pub async fn run(db: DatabaseConnection, cfg: Arc<RuntimeConfig>, stop: CancellationToken) {
    let mut state = State::default();
    let mut revision: Option<i64> = None;
    let mut first = true;
    let mut reload = tokio::time::interval(RELOAD_EVERY);
    reload.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        // Recomputed every round from the wall clock, as the fire times are wall-clock times.
        let now = Utc::now();
        let wait = state.next_wake().map(|at| until(at, now));
        let due = sleep_for(wait);
        let plan_at = state.to_plan(now);
        let plan = sleep_for(plan_at.map(|at| until(at, now).saturating_sub(PLAN_AHEAD)));
        tokio::select! {
            _ = reload.tick() => {
                let current = am_services::catalog::revision(&db).await.ok();
                if first || current != revision {
                    // Plans rest on the catalog they read; they would be planned again anyway.
                    state.ahead = None;
                    let next = state.reload(&db, &cfg, first).await;
                    record_next(&db, &next).await;
                    revision = current;
                    first = false;
                }
            }
            () = due => {
                let batch = state.take_due(Utc::now(), FIRE_BATCH);
                fire(&db, &cfg, &mut state, batch).await;
            }
            () = plan => {
                if let Some(at) = plan_at {
                    plan_ahead(&db, &cfg, &mut state, at).await;
                }
            }
            () = stop.cancelled() => return,
        }
    }
}

fn until(at: DateTime<Utc>, now: DateTime<Utc>) -> Duration {
    (at - now).to_std().unwrap_or(Duration::ZERO)
}

async fn sleep_for(wait: Option<Duration>) {
    match wait {
        Some(w) => tokio::time::sleep(w).await,
        None => std::future::pending().await,
    }
}

/// Plans the batches due at `at` before their time. A batch that cannot be planned now is
/// planned when due.
#[tracing::instrument(skip_all, fields(%at))]
async fn plan_ahead(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    state: &mut State,
    at: DateTime<Utc>,
) {
    let mut batches = VecDeque::new();
    for fires in state.batches_at(at) {
        match ahead::prepare(db, cfg, fires, at).await {
            Ok(p) => batches.push_back(p),
            Err(e) => {
                tracing::warn!(error = %e, "cannot plan fires ahead; planning them when due");
                break;
            }
        }
    }
    state.ahead = Some(Ahead { at, batches });
}

/// Whether two lists name the same fires in the same order.
fn same_fires(a: &[Fire], b: &[Fire]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.group == y.group && x.at == y.at && x.trigger == y.trigger && x.next == y.next
        })
}

async fn record_next(db: &DatabaseConnection, next: &[(String, DateTime<Utc>)]) {
    if let Err(e) = schedule::record_next_fires(db, next).await {
        tracing::debug!(error = %e, "cannot store next fire times");
    }
}

#[tracing::instrument(skip_all, fields(fires = batch.len()))]
async fn fire(db: &DatabaseConnection, cfg: &RuntimeConfig, state: &mut State, batch: Vec<Due>) {
    let records = state.fires_of(&batch);
    if records.is_empty() {
        return;
    }
    if let Some(prepared) = state.planned(&records) {
        match ahead::record(db, cfg, prepared, Utc::now()).await {
            Ok(_) => return after_fire(cfg, state, records),
            Err(e) => tracing::warn!(error = %e, "cannot record fires; retrying"),
        }
    }
    let mut backoff = Duration::from_millis(100);
    loop {
        match fires::fire(db, cfg, &records, Utc::now(), None).await {
            Ok(_) => break,
            Err(e) => {
                // The fire keys make a retry safe; the fires must not be dropped.
                tracing::warn!(error = %e, retry_in = ?backoff, "cannot record fires; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
    after_fire(cfg, state, records);
}

/// Once a batch is recorded: the scheduler's lag, and each fired group's next timer.
fn after_fire(cfg: &RuntimeConfig, state: &mut State, records: Vec<Fire>) {
    let lag = records
        .iter()
        .map(|f| (Utc::now() - f.at).num_milliseconds())
        .max()
        .unwrap_or(0);
    cfg.metrics.scheduler_lag_ms.store(
        u64::try_from(lag).unwrap_or(0),
        std::sync::atomic::Ordering::Relaxed,
    );
    // The next fire times were stored with the fires (a group that was not fired, e.g.
    // disabled meanwhile, keeps the time the reload gave it).
    for f in records {
        if f.trigger == Trigger::Misfire {
            Metrics::inc(&cfg.metrics.misfires_fired);
        }
        if let Some(next) = f.next {
            state.arm(&f.group, next, Trigger::Schedule);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, s)
            .single()
            .expect("valid time")
    }

    fn state(groups: usize) -> State {
        let mut s = State::default();
        for i in 0..groups {
            s.generation += 1;
            s.entries.insert(
                format!("g{i}"),
                Entry {
                    fingerprint: String::new(),
                    schedule: Arc::new(
                        Schedule::parse("0 * * * * *", "UTC").expect("valid schedule"),
                    ),
                    armed: None,
                    generation: s.generation,
                },
            );
        }
        s
    }

    #[test]
    fn a_burst_due_in_one_second_comes_out_whole_in_batches() {
        let mut s = state(12_000);
        for i in 0..12_000 {
            s.arm(&format!("g{i}"), at(30), Trigger::Schedule);
        }
        s.arm("g0", at(40), Trigger::Schedule);
        assert_eq!(s.next_wake(), Some(at(30)));
        assert!(s.take_due(at(29), FIRE_BATCH).is_empty());
        let first = s.take_due(at(30), FIRE_BATCH);
        let second = s.take_due(at(31), FIRE_BATCH);
        let third = s.take_due(at(31), FIRE_BATCH);
        assert_eq!((first.len(), second.len(), third.len()), (5000, 5000, 1999));
        // g0 was re-armed for later: its first timer is gone.
        assert!(
            first
                .iter()
                .chain(&second)
                .chain(&third)
                .all(|d| d.group != "g0")
        );
        assert_eq!(s.next_wake(), Some(at(40)));
        assert!(s.entries["g1"].armed.is_none());
        assert_eq!(s.entries["g0"].armed, Some(at(40)));
    }

    #[test]
    fn the_batches_planned_ahead_are_the_ones_taken_when_due() {
        let mut s = state(12_000);
        for i in 0..12_000 {
            s.arm(&format!("g{i}"), at(30), Trigger::Schedule);
        }
        // A replaced timer is left out of both alike.
        s.arm("g7", at(40), Trigger::Schedule);
        let planned = s.batches_at(at(30));
        assert_eq!(
            planned.len(),
            AHEAD_MAX / FIRE_BATCH,
            "the rest is planned when due"
        );
        for batch in &planned {
            let due = s.take_due(at(30), FIRE_BATCH);
            assert!(same_fires(batch, &s.fires_of(&due)));
        }
        assert!(planned[0].iter().all(|f| f.group != "g7"));
        assert!(
            planned[0][0].next.is_some(),
            "the next fire is planned with it"
        );
    }

    #[test]
    fn a_time_is_planned_once_and_only_before_it_is_due() {
        let mut s = state(2);
        s.arm("g0", at(30), Trigger::Schedule);
        assert_eq!(s.to_plan(at(28)), Some(at(30)));
        assert_eq!(s.to_plan(at(30)), None, "due: fired the usual way");
        s.ahead = Some(Ahead {
            at: at(30),
            batches: VecDeque::new(),
        });
        assert_eq!(s.to_plan(at(28)), None);
        // Fires no plan matches drop the plans of that time.
        let fires = s.batches_at(at(30)).remove(0);
        assert!(s.planned(&fires).is_none());
        assert!(s.ahead.is_none());
    }

    #[test]
    fn an_unknown_group_is_not_armed() {
        let mut s = state(1);
        s.arm("gone", at(5), Trigger::Schedule);
        assert_eq!(s.next_wake(), None);
    }
}
