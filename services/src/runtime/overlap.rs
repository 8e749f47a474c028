//! The overlap policy `skip`, decided by the manager for the whole pool: a run started by hand
//! (*Run now*, a re-run, a bulk re-run) while another activation of the same launch setting
//! has not ended, on any host, is recorded `skipped` with the run it met, and is dispatched
//! nowhere. The check runs in the transaction that records the new activation, after the
//! launch setting's row is locked, so two replicas or two quick clicks cannot both pass. The
//! node keeps the same check as a second line (and for group members, which run one after
//! another through their group).

use super::{
    activate::{NewActivation, activation_row},
    plan::Plan,
    status,
};
use crate::{
    entity::{activation_hosts, activations},
    error::ServiceResult,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
};
use uuid::Uuid;

/// An activation of a launch setting that has not ended, and the hosts it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ActiveRun {
    pub id: Uuid,
    /// Hosts whose dispatch has not ended; empty while it waits for a node.
    pub hosts: Vec<String>,
}

impl ActiveRun {
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

/// The oldest activation of `ls` that has not ended, with its hosts.
pub(crate) async fn active_run(
    db: &impl ConnectionTrait,
    ls: &str,
) -> ServiceResult<Option<ActiveRun>> {
    let Some(run) = activations::Entity::find()
        .filter(activations::Column::LaunchSettingId.eq(ls))
        .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
        .order_by_asc(activations::Column::CreatedAt)
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let mut hosts: Vec<String> = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::ActivationId.eq(run.id))
        .filter(activation_hosts::Column::Status.is_in(status::host::ACTIVE))
        .all(db)
        .await?
        .into_iter()
        .map(|h| h.host)
        .collect();
    hosts.sort();
    hosts.dedup();
    Ok(Some(ActiveRun { id: run.id, hosts }))
}

/// Plans `new` as an activation that ended `skipped` at once because `running` has not ended.
pub(crate) fn plan_skipped(
    plan: &mut Plan,
    new: &NewActivation,
    application: &str,
    running: &ActiveRun,
    now: DateTime<Utc>,
) -> Uuid {
    let id = Uuid::now_v7();
    let reason = running.reason(&new.ls);
    plan.activations.push(activations::ActiveModel {
        status: Set(status::activation::SKIPPED.to_owned()),
        finished_at: Set(Some(now)),
        error: Set(Some(format!("skipped: {reason}"))),
        ..activation_row(id, new, application, now)
    });
    plan.event(id, None, status::activation::SKIPPED, reason, now);
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
