//! Recording schedule fires: each fire records its group activation (unique per group and fire
//! time) and starts the group's first member, many fires to a transaction. A batch is read,
//! planned and written under the write lock; a fire another replica recorded first (its key is
//! taken) is left out and the rest planned again, so nothing is counted or sent twice.
//!
//! A burst of cron fires is planned ahead of its time instead (`super::ahead`), and written here
//! when due; planning the next batch without the lock while the one before it is written was
//! tried and measured slower on two cores (docs/benchmarks.md, P2).

use super::{
    Metrics, RuntimeConfig,
    activate::{NewActivation, plan_activation},
    ending,
    groups::finish_group,
    locks,
    members::members_of,
    overlap::{self, ActiveRun, Busy},
    plan::Plan,
    resolve::Resolver,
    starts,
};
use crate::status::{self, Trigger};
use crate::{
    Principal,
    audit::{self, AuditEntry},
    entity::{activations, schedule_groups},
    error::ServiceResult,
    notifications::{self, events},
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbBackend,
    EntityTrait, QueryFilter, QuerySelect, QueryTrait, Statement, sea_query::Expr,
};
use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::Arc,
};
use uuid::Uuid;

/// One fire of a group.
#[derive(Debug, Clone)]
pub struct Fire {
    pub group: String,
    /// The fire time (the cron's, not the moment it was noticed).
    pub at: DateTime<Utc>,
    pub trigger: Trigger,
    /// `Some` for cron fires: `group:<id>:<fire time>`, unique across replicas.
    pub fire_key: Option<String>,
    pub requested_by: Option<String>,
    /// The member position to start from: 0 but for a re-run from a later member.
    pub from: usize,
    /// A cron fire: the group's next fire time after this one, stored in the fire's own
    /// transaction (one statement with its status, no separate commit after a burst).
    pub next: Option<DateTime<Utc>>,
}

impl Fire {
    /// A cron fire of `group` at `at` (or a late one per the misfire policy).
    pub fn scheduled(group: &str, at: DateTime<Utc>, trigger: Trigger) -> Self {
        Self {
            group: group.to_owned(),
            at,
            trigger,
            fire_key: Some(fire_key(group, at)),
            requested_by: None,
            from: 0,
            next: None,
        }
    }
}

/// The unique key of a cron fire.
pub fn fire_key(group: &str, at: DateTime<Utc>) -> String {
    format!("group:{group}:{}", at.format("%Y-%m-%dT%H:%M:%SZ"))
}

/// Each fire's group activation, `None` when it was a duplicate or the group is gone or
/// disabled.
pub type Fired = Vec<(String, Option<Uuid>)>;

/// Records the fires in one transaction, read and planned under the write lock, and starts each
/// group's first member. A fire whose key is already recorded (another replica fired it) is
/// left out.
pub async fn fire(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    fires: &[Fire],
    now: DateTime<Utc>,
    actor: Option<&Principal>,
) -> ServiceResult<Fired> {
    let mut skip = HashSet::new();
    loop {
        let txn = super::begin_write(db).await?;
        let counted = Counted::new(cfg);
        let mut read = Read::load(&txn, cfg, fires, now, Lock::Rows).await?;
        let batch = Batch::plan(fires, &mut read, &counted.cfg, now, &skip, backend(db));
        match write(&txn, cfg, fires, batch, now, actor).await? {
            Written::All(out) => {
                txn.commit().await?;
                counted.commit(cfg);
                return Ok(out);
            }
            // Every round leaves out at least one more fire, so this ends.
            Written::Duplicates(duplicates) => {
                txn.rollback().await?;
                Metrics::add(&cfg.metrics.duplicate_fires, duplicates.len() as u64);
                skip.extend(duplicates);
            }
        }
    }
}

pub(super) fn backend(db: &DatabaseConnection) -> DbBackend {
    db.get_database_backend()
}

/// Counters of planned work, added to the process's only once the work is committed (a batch
/// planned twice counts once).
pub(super) struct Counted {
    pub(super) cfg: RuntimeConfig,
}

impl Counted {
    pub(super) fn new(cfg: &RuntimeConfig) -> Self {
        Self {
            cfg: RuntimeConfig {
                metrics: Arc::new(Metrics::default()),
                ..cfg.clone()
            },
        }
    }

    pub(super) fn commit(self, cfg: &RuntimeConfig) {
        cfg.metrics.absorb(&self.cfg.metrics);
    }
}

/// Whether reading for a batch locks the launch settings it may start (for writing it at once)
/// or only reads them (planning ahead on a snapshot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lock {
    Rows,
    None,
}

/// What planning a batch reads.
pub(super) struct Read {
    groups: HashMap<String, schedule_groups::Model>,
    members: HashMap<String, Vec<String>>,
    /// Runs not ended of the members the batch may start (`skip`).
    pub(super) busy: Busy,
    /// The launch settings `busy` was read for.
    pub(super) watched: Vec<String>,
    pub(super) resolver: Resolver,
}

impl Read {
    pub(super) async fn load(
        db: &impl ConnectionTrait,
        cfg: &RuntimeConfig,
        fires: &[Fire],
        now: DateTime<Utc>,
        lock: Lock,
    ) -> ServiceResult<Self> {
        let ids: Vec<String> = fires.iter().map(|f| f.group.clone()).collect();
        let mut groups = HashMap::new();
        for chunk in ids.chunks(super::CHUNK) {
            for g in schedule_groups::Entity::find()
                .filter(schedule_groups::Column::Id.is_in(chunk.iter().cloned()))
                .all(db)
                .await?
            {
                groups.insert(g.id.clone(), g);
            }
        }
        let members = members_of(db, &ids).await?;
        if lock == Lock::Rows {
            // Every member a fire may start, locked at once in the one order (`locks`): locked
            // round by round below, two batches could each hold what the other's next round
            // wants.
            let may_touch = fires.iter().flat_map(|f| {
                members
                    .get(&f.group)
                    .map(|m| m.iter().skip(f.from).cloned().collect::<Vec<_>>())
                    .unwrap_or_default()
            });
            locks::launch_settings(db, may_touch).await?;
        }
        // The members a fire may start: its first, and after a member that has a run (which
        // `skip` passes over) the next one, until one without. Read in rounds, usually one.
        let mut busy = Busy::default();
        let mut known: HashSet<String> = HashSet::new();
        let starts = loop {
            let (starts, unknown) = starts::may_start(
                fires.iter().map(|f| (f.group.as_str(), f.from)),
                &members,
                &busy,
                &known,
            );
            if unknown.is_empty() {
                break starts;
            }
            busy.extend(Busy::load(db, &unknown).await?);
            known.extend(unknown);
        };
        let mut watched: Vec<String> = known.into_iter().collect();
        watched.sort();
        let resolver = Resolver::load(db, &starts, now, cfg.node_timeout).await?;
        Ok(Self {
            groups,
            members,
            busy,
            watched,
            resolver,
        })
    }
}

/// A batch's rows, as the statements that write them.
pub(super) struct Batch {
    /// Each planned fire (its index) and its group activation.
    parents: Vec<(usize, Uuid)>,
    /// Inserts of the group activations (a duplicate fire key inserts nothing).
    parent_inserts: Vec<Statement>,
    /// Everything the started members write: activations, host rows, commands, events.
    member_inserts: Vec<Statement>,
    /// Group activations that end at once: no member (`None`) or their first member cannot
    /// start (the reason).
    empty: Vec<(Uuid, Option<String>)>,
    /// Cron fires of groups that were still running when read: they overran into this fire
    /// if they still are under the lock.
    overran: Vec<usize>,
    /// Runs a started member interrupts (its launch setting's policy `interrupt`), with it.
    interrupts: Vec<(String, ActiveRun)>,
}

impl Batch {
    /// Plans every enabled group's fire but those in `skip`.
    pub(super) fn plan(
        fires: &[Fire],
        read: &mut Read,
        cfg: &RuntimeConfig,
        now: DateTime<Utc>,
        skip: &HashSet<usize>,
        backend: DbBackend,
    ) -> Self {
        let mut parents = Vec::new();
        let mut rows = Vec::new();
        let mut plan = Plan::default();
        let mut empty = Vec::new();
        let mut overran = Vec::new();
        let mut interrupts = Vec::new();
        let mut busy = read.busy.clone();
        for (i, f) in fires.iter().enumerate() {
            if skip.contains(&i) {
                continue;
            }
            let Some(g) = read.groups.get(&f.group).filter(|g| g.enabled) else {
                continue;
            };
            if f.fire_key.is_some() && g.current_status == status::group::RUNNING {
                overran.push(i);
            }
            let id = Uuid::now_v7();
            let list = read
                .members
                .get(&f.group)
                .map(Vec::as_slice)
                .unwrap_or_default();
            // Members whose launch setting still runs elsewhere are skipped (`skip`); the
            // group starts with the first that may run.
            let mut position = f.from;
            let mut passed = Vec::new();
            let start = loop {
                let Some(ls) = list.get(position) else {
                    break None;
                };
                match read
                    .resolver
                    .target(ls)
                    .and_then(|t| busy.meets(t).map(|run| (run.clone(), t.clone())))
                {
                    Some(met) => passed.push((position, ls.clone(), met)),
                    None => break Some((position, ls.clone())),
                }
                position += 1;
            };
            // A member that interrupts a run goes to that run's node; in ANY mode the group
            // runs on one node: choose it now.
            let ends = start
                .as_ref()
                .and_then(|(_, ls)| read.resolver.target(ls))
                .and_then(|t| busy.interrupts(t))
                .cloned();
            let pinned = start
                .as_ref()
                .and_then(|(_, ls)| read.resolver.target(ls).cloned())
                .filter(|t| t.concurrency() == am_domain::catalog::Concurrency::Any)
                .and_then(|t| {
                    let node = ends.as_ref().and_then(ActiveRun::node);
                    read.resolver
                        .choose(&t, node.as_deref(), &[])
                        .into_iter()
                        .next()
                });
            if let (Some(run), Some((_, ls))) = (ends, &start) {
                interrupts.push((ls.clone(), run));
            }
            parents.push((i, id));
            rows.push(group_activation(id, g, f, pinned.clone(), now));
            let member = |ls: String, position: usize| NewActivation {
                ls,
                trigger: Trigger::Group,
                requested_by: f.requested_by.clone(),
                parent: Some((id, i32::try_from(position).unwrap_or(i32::MAX))),
                group: Some(f.group.clone()),
                fire_key: None,
                pinned_host: pinned.clone(),
                only_hosts: None,
            };
            for (position, ls, (running, target)) in passed {
                overlap::plan_skipped(
                    &mut plan,
                    cfg,
                    &member(ls, position),
                    &target,
                    &running,
                    now,
                );
            }
            // The group activation's trigger and fire key record the fire; no timeline event,
            // so a burst of fires writes one event per fire (the member's dispatch).
            let Some((position, first)) = start else {
                empty.push((id, None));
                continue;
            };
            // A pinned node was counted when chosen; the member dispatch counts it again,
            // which only makes the batch spread a little wider.
            // One span per fire: the root of the trace its launches, runs and reports follow.
            let fire = tracing::info_span!("fire", group = %f.group, activation = %id,
                trigger = f.trigger.as_str(), fire_key = f.fire_key.as_deref());
            match fire.in_scope(|| {
                plan_activation(
                    &mut plan,
                    &mut read.resolver,
                    cfg,
                    member(first.clone(), position),
                    now,
                )
            }) {
                Ok(planned) => busy.started(
                    &first,
                    ActiveRun {
                        id: planned.id,
                        hosts: planned.hosts,
                    },
                ),
                Err(gone) => empty.push((id, Some(gone.to_string()))),
            }
        }
        let mut parent_inserts = Vec::new();
        let mut rows = rows.into_iter().peekable();
        while rows.peek().is_some() {
            let chunk: Vec<_> = rows.by_ref().take(super::CHUNK).collect();
            parent_inserts.push(
                activations::Entity::insert_many(chunk)
                    .on_conflict_do_nothing_on([activations::Column::FireKey])
                    .build(backend),
            );
        }
        Self {
            parents,
            parent_inserts,
            member_inserts: plan.statements(backend),
            empty,
            overran,
            interrupts,
        }
    }
}

fn group_activation(
    id: Uuid,
    g: &schedule_groups::Model,
    f: &Fire,
    pinned: Option<String>,
    now: DateTime<Utc>,
) -> activations::ActiveModel {
    activations::ActiveModel {
        id: Set(id),
        launch_setting_id: Set(None),
        group_id: Set(Some(g.id.clone())),
        parent_id: Set(None),
        position: Set(None),
        trigger: Set(f.trigger.as_str().to_owned()),
        fire_key: Set(f.fire_key.clone()),
        status: Set(status::activation::RUNNING.to_owned()),
        requested_by: Set(f.requested_by.clone()),
        created_at: Set(now),
        started_at: Set(Some(now)),
        finished_at: Set(None),
        error: Set(None),
        application_id: Set(Some(g.application_id.clone())),
        fencing_token: Set(0),
        pinned_host: Set(pinned),
        wait_until: Set(None),
        trace_parent: Set(None),
    }
}

/// What [`write`] did.
pub(super) enum Written {
    All(Fired),
    /// These fires (indexes) were recorded before, by another replica: nothing of the batch may
    /// be kept.
    Duplicates(Vec<usize>),
}

/// Writes a planned batch in `txn`, which holds the write lock.
pub(super) async fn write(
    txn: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    fires: &[Fire],
    batch: Batch,
    now: DateTime<Utc>,
    actor: Option<&Principal>,
) -> ServiceResult<Written> {
    let mut inserted = 0;
    for s in batch.parent_inserts {
        inserted += txn.execute_raw(s).await?.rows_affected();
    }
    if inserted < batch.parents.len() as u64 {
        return Ok(Written::Duplicates(duplicates(txn, &batch.parents).await?));
    }
    for s in batch.member_inserts {
        txn.execute_raw(s).await?;
    }
    for (ls, run) in &batch.interrupts {
        ending::interrupt(txn, cfg, ls, run, now).await?;
    }
    let mut out: Fired = fires.iter().map(|f| (f.group.clone(), None)).collect();
    for (i, id) in &batch.parents {
        out[*i].1 = Some(*id);
    }
    Metrics::add(&cfg.metrics.fires, batch.parents.len() as u64);
    tell_overran(txn, fires, &batch.overran, now).await?;
    mark_groups(txn, fires, &batch.parents).await?;
    // A group without (resolvable) members ends at once.
    for (id, reason) in batch.empty {
        if let Some(parent) = activations::Entity::find_by_id(id).one(txn).await? {
            let result = if reason.is_some() {
                status::activation::FAILED
            } else {
                status::activation::SUCCEEDED
            };
            finish_group(txn, &parent, result, reason, now).await?;
        }
    }
    if let Some(actor) = actor {
        for (group, activation) in out.iter().filter(|o| o.1.is_some()) {
            audit::record(
                txn,
                AuditEntry::new(actor, "run", "schedule_group", group)
                    .after(&serde_json::json!({ "activation": activation.map(|a| a.to_string()) })),
            )
            .await?;
        }
    }
    Ok(Written::All(out))
}

/// Tells `schedule_missed` for the groups of these fires that are still running their previous
/// fire (the fire starts anyway, beside it). Read before the groups are marked running.
async fn tell_overran(
    txn: &impl ConnectionTrait,
    fires: &[Fire],
    overran: &[usize],
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let ids: Vec<String> = overran.iter().map(|i| fires[*i].group.clone()).collect();
    let mut running = HashSet::new();
    for chunk in ids.chunks(super::CHUNK) {
        let found: Vec<String> = schedule_groups::Entity::find()
            .select_only()
            .column(schedule_groups::Column::Id)
            .filter(schedule_groups::Column::Id.is_in(chunk.iter().cloned()))
            .filter(schedule_groups::Column::CurrentStatus.eq(status::group::RUNNING))
            .into_tuple()
            .all(txn)
            .await?;
        running.extend(found);
    }
    for i in overran {
        let f = &fires[*i];
        if running.contains(&f.group) {
            notifications::raise(txn, events::schedule_overran(&f.group, f.at, now), now).await?;
        }
    }
    Ok(())
}

/// The planned fires whose group activation was not inserted.
async fn duplicates(
    txn: &impl ConnectionTrait,
    parents: &[(usize, Uuid)],
) -> ServiceResult<Vec<usize>> {
    let mut inserted: HashSet<Uuid> = HashSet::new();
    for chunk in parents.chunks(super::CHUNK) {
        let found: Vec<Uuid> = activations::Entity::find()
            .select_only()
            .column(activations::Column::Id)
            .filter(activations::Column::Id.is_in(chunk.iter().map(|p| p.1)))
            .into_tuple()
            .all(txn)
            .await?;
        inserted.extend(found);
    }
    Ok(parents
        .iter()
        .filter(|p| !inserted.contains(&p.1))
        .map(|p| p.0)
        .collect())
}

/// The started groups run now, and a cron fire's group gets its next fire time and its last
/// fire time: grouped by those times, so a burst of one cron is a statement per chunk.
async fn mark_groups(
    txn: &impl ConnectionTrait,
    fires: &[Fire],
    parents: &[(usize, Uuid)],
) -> ServiceResult<()> {
    let mut started: BTreeMap<Option<DateTime<Utc>>, Vec<String>> = BTreeMap::new();
    let mut fired_at: BTreeMap<DateTime<Utc>, Vec<String>> = BTreeMap::new();
    for (i, _) in parents {
        let f = &fires[*i];
        started.entry(f.next).or_default().push(f.group.clone());
        if f.fire_key.is_some() {
            fired_at.entry(f.at).or_default().push(f.group.clone());
        }
    }
    for (next, ids) in started {
        for chunk in ids.chunks(super::CHUNK) {
            let mut update = schedule_groups::Entity::update_many().col_expr(
                schedule_groups::Column::CurrentStatus,
                Expr::value(status::group::RUNNING),
            );
            if let Some(next) = next {
                update =
                    update.col_expr(schedule_groups::Column::NextFireAt, Expr::value(Some(next)));
            }
            update
                .filter(schedule_groups::Column::Id.is_in(chunk.iter().cloned()))
                .filter(schedule_groups::Column::Enabled.eq(true))
                .exec(txn)
                .await?;
        }
    }
    for (at, ids) in fired_at {
        for chunk in ids.chunks(super::CHUNK) {
            schedule_groups::Entity::update_many()
                .col_expr(schedule_groups::Column::LastFireAt, Expr::value(Some(at)))
                .filter(schedule_groups::Column::Id.is_in(chunk.iter().cloned()))
                .filter(
                    Condition::any()
                        .add(schedule_groups::Column::LastFireAt.is_null())
                        .add(schedule_groups::Column::LastFireAt.lt(at)),
                )
                .exec(txn)
                .await?;
        }
    }
    Ok(())
}
