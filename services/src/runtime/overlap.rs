//! The overlap policy `skip`, decided by the manager for the whole pool: a run (*Run now*, a
//! re-run, a bulk re-run, a group member started by a fire or by the member before it) while
//! another activation of the same launch setting has not ended, on any host, is recorded
//! `skipped` with the run it met, and is dispatched nowhere; a group goes on with its next
//! member. The check runs in the transaction that records the new activation, after the launch
//! settings' rows are locked, so two replicas or two quick clicks cannot both pass. The node
//! keeps the same check as a second line.
//!
//! `interrupt`, decided here too: the run met is interrupted on every host it runs on (a waiting
//! one ends at once), and an `ANY` run goes to that run's node, which ends the old run before it
//! starts the new one; a `MANY` run goes to every node, each doing the same.

use super::{
    CHUNK, RuntimeConfig,
    activate::{NewActivation, activation_row},
    plan::Plan,
    resolve::Target,
    settle::MemberEnded,
    stopping::{self, Ending},
};
use crate::status;
use crate::{
    entity::{activation_hosts, activations},
    error::ServiceResult,
};
use am_domain::catalog::OverlapPolicy;
use am_domain::status::EventKind;
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use std::collections::HashMap;
use uuid::Uuid;

/// An activation of a launch setting that has not ended, and the hosts it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ActiveRun {
    pub id: Uuid,
    /// Hosts whose dispatch has not ended; empty while it waits for a node.
    pub hosts: Vec<String>,
}

impl ActiveRun {
    /// Where a new `ANY` run that interrupts this one goes: this one's node, which ends it
    /// before starting the new one.
    pub fn node(&self) -> Option<String> {
        self.hosts.first().cloned()
    }

    /// Why a new run was skipped, naming this one: "demo.slow run 01a2b3c4… still running on
    /// demo-a (overlap policy: skip)".
    pub fn reason(&self, ls: &str) -> String {
        let id = self.id.to_string();
        let short = id.get(..8).unwrap_or(&id);
        let where_ = if self.hosts.is_empty() {
            "waiting for a node".to_owned()
        } else {
            format!("still running on {}", self.hosts.join(", "))
        };
        format!("{ls} run {short}… {where_} (overlap policy: skip)")
    }
}

/// Launch settings that have a run not ended (the oldest, per launch setting), as read, plus
/// those a batch starts itself: what `skip` must not start again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Busy(HashMap<String, ActiveRun>);

impl Busy {
    /// The runs not ended of launch settings `ls` (those without one are not in it).
    pub async fn load(db: &impl ConnectionTrait, ls: &[String]) -> ServiceResult<Self> {
        let mut runs: HashMap<String, ActiveRun> = HashMap::new();
        for chunk in ls.chunks(CHUNK) {
            let found: Vec<(Uuid, Option<String>)> = activations::Entity::find()
                .select_only()
                .column(activations::Column::Id)
                .column(activations::Column::LaunchSettingId)
                .filter(activations::Column::LaunchSettingId.is_in(chunk.iter().cloned()))
                .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
                .order_by_asc(activations::Column::CreatedAt)
                .into_tuple()
                .all(db)
                .await?;
            for (id, ls) in found {
                if let Some(ls) = ls {
                    runs.entry(ls).or_insert(ActiveRun { id, hosts: vec![] });
                }
            }
        }
        let by_run: HashMap<Uuid, String> = runs.iter().map(|(ls, r)| (r.id, ls.clone())).collect();
        let ids: Vec<Uuid> = by_run.keys().copied().collect();
        for chunk in ids.chunks(CHUNK) {
            let hosts: Vec<(Uuid, String)> = activation_hosts::Entity::find()
                .select_only()
                .column(activation_hosts::Column::ActivationId)
                .column(activation_hosts::Column::Host)
                .filter(activation_hosts::Column::ActivationId.is_in(chunk.iter().copied()))
                .filter(activation_hosts::Column::Status.is_in(status::host::ACTIVE))
                .into_tuple()
                .all(db)
                .await?;
            for (run, host) in hosts {
                if let Some(r) = by_run.get(&run).and_then(|ls| runs.get_mut(ls)) {
                    r.hosts.push(host);
                }
            }
        }
        for r in runs.values_mut() {
            r.hosts.sort();
            r.hosts.dedup();
        }
        Ok(Self(runs))
    }

    /// Whether `ls` has a run not ended, whatever its policy.
    pub fn contains(&self, ls: &str) -> bool {
        self.0.contains_key(ls)
    }

    /// The run a new run of `target` meets under `skip`: `None` when it may start.
    pub fn meets(&self, target: &Target) -> Option<&ActiveRun> {
        self.met_under(target, OverlapPolicy::Skip)
    }

    /// The run a new run of `target` interrupts under `interrupt`: `None` when there is none.
    pub fn interrupts(&self, target: &Target) -> Option<&ActiveRun> {
        self.met_under(target, OverlapPolicy::Interrupt)
    }

    fn met_under(&self, target: &Target, policy: OverlapPolicy) -> Option<&ActiveRun> {
        (target.agent.overlap == policy)
            .then(|| self.0.get(&target.ls.id))
            .flatten()
    }

    /// `ls` now has run `run` (planned in this batch).
    pub fn started(&mut self, ls: &str, run: ActiveRun) {
        self.0.entry(ls.to_owned()).or_insert(run);
    }

    /// Adds what `other` knows of launch settings this one has not read.
    pub fn extend(&mut self, other: Busy) {
        for (ls, run) in other.0 {
            self.0.entry(ls).or_insert(run);
        }
    }
}

/// Interrupts `running` for a new run of `ls` (policy `interrupt`), in the transaction that
/// records the new run: on every host still running it, once per host; a run still waiting
/// for a node ends at once (a member's end is returned for its group to go on).
pub(crate) async fn interrupt(
    txn: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    ls: &str,
    running: &ActiveRun,
    now: DateTime<Utc>,
) -> ServiceResult<Option<MemberEnded>> {
    let Some(run) = activations::Entity::find_by_id(running.id).one(txn).await? else {
        return Ok(None);
    };
    if !status::activation::ACTIVE.contains(&run.status.as_str()) {
        return Ok(None);
    }
    let reason = format!("a new run of {ls} started (overlap policy: interrupt)");
    tracing::info!(launch_setting = %ls, running = %run.id, "interrupting the running run");
    stopping::end_in(txn, cfg, &run, &reason, Ending::Interrupt, now).await
}

/// Plans `new` (a run of `target`) as an activation that ended `skipped` at once because
/// `running` has not ended; counted in `cfg`'s metrics.
pub(crate) fn plan_skipped(
    plan: &mut Plan,
    cfg: &RuntimeConfig,
    new: &NewActivation,
    target: &Target,
    running: &ActiveRun,
    now: DateTime<Utc>,
) -> Uuid {
    let application = target.ls.application.as_str();
    cfg.metrics.runs.ended(
        application,
        &target.ls.agent,
        status::activation::SKIPPED,
        None,
    );
    let id = Uuid::now_v7();
    let reason = running.reason(&new.ls);
    plan.activations.push(activations::ActiveModel {
        status: Set(status::activation::SKIPPED.to_owned()),
        finished_at: Set(Some(now)),
        error: Set(Some(format!("skipped: {reason}"))),
        ..activation_row(id, new, application, now)
    });
    plan.event(id, None, EventKind::Skipped, reason, now);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_names_the_run_and_where_it_is() {
        let id = Uuid::parse_str("01a2b3c4-0000-7000-8000-000000000000").expect("uuid");
        let run = ActiveRun {
            id,
            hosts: vec!["demo-a".into(), "demo-b".into()],
        };
        assert_eq!(
            run.reason("demo.slow"),
            "demo.slow run 01a2b3c4… still running on demo-a, demo-b (overlap policy: skip)"
        );
        let waiting = ActiveRun { id, hosts: vec![] };
        assert!(waiting.reason("x").contains("waiting for a node"));
    }
}
