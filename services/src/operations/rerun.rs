//! What a bulk re-run selects: the launch settings and groups the matching activations ran
//! (each once), or, from where it broke, the newest failed or interrupted run of each.

use crate::{
    Principal,
    entity::activations as activation,
    error::{ServiceError, ServiceResult},
    status,
};
use am_domain::read::activations::ActivationFilter;
use am_domain::{roles::Operation, usage::EntityRef};
use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use std::collections::HashSet;
use uuid::Uuid;

/// What the operation re-runs.
#[derive(Debug, Default)]
pub(super) struct Selected {
    /// Whole re-runs: each launch setting or group once.
    pub targets: Vec<EntityRef>,
    /// Re-runs from where each broke: one activation per launch setting or group.
    pub runs: Vec<Uuid>,
}

/// One matching activation: id, launch setting, group, parent (member runs), status.
type Row = (
    Uuid,
    Option<String>,
    Option<String>,
    Option<Uuid>,
    String,
    DateTime<Utc>,
);

pub(super) async fn select(
    db: &DatabaseConnection,
    ids: &[Uuid],
    filter: &ActivationFilter,
    from_where_it_broke: bool,
) -> ServiceResult<Selected> {
    use activation::Column as C;
    let rows: Vec<Row> = super::selected::activations(
        db,
        ids,
        filter,
        [
            C::Id,
            C::LaunchSettingId,
            C::GroupId,
            C::ParentId,
            C::Status,
            C::CreatedAt,
        ],
        |r: &Row| r.0,
    )
    .await?;
    if from_where_it_broke {
        broken(rows)
    } else {
        Ok(Selected {
            targets: whole(rows),
            runs: Vec::new(),
        })
    }
}

/// The launch setting of each run, or the group of a group's run; a member run of a group
/// re-runs its launch setting alone.
fn whole(rows: Vec<Row>) -> Vec<EntityRef> {
    let mut seen = HashSet::new();
    let mut targets = Vec::new();
    for (_, ls, group, parent, _, _) in rows {
        let target = match (ls, group, parent) {
            (Some(ls), _, _) => EntityRef::LaunchSetting(ls),
            (None, Some(g), None) => EntityRef::ScheduleGroup(g),
            _ => continue,
        };
        if seen.insert(target.clone()) {
            targets.push(target);
        }
    }
    targets
}

/// The newest run that broke (failed or was interrupted) of each launch setting or group; a
/// member run stands for its group's run. Rows come newest first.
fn broken(rows: Vec<Row>) -> ServiceResult<Selected> {
    let matched = rows.len();
    let mut seen = HashSet::new();
    let mut runs = Vec::new();
    for (id, ls, group, parent, state, _) in rows {
        if state != status::activation::FAILED && state != status::activation::INTERRUPTED {
            continue;
        }
        let (key, run) = match (group, parent, ls) {
            (Some(g), Some(parent), _) => (EntityRef::ScheduleGroup(g), parent),
            (Some(g), None, None) => (EntityRef::ScheduleGroup(g), id),
            (_, _, Some(ls)) => (EntityRef::LaunchSetting(ls), id),
            _ => continue,
        };
        if seen.insert(key) {
            runs.push(run);
        }
    }
    if runs.is_empty() && matched > 0 {
        return Err(ServiceError::invalid(
            "from_where_it_broke",
            format!(
                "none of the {matched} matching activations failed or was interrupted: \
                 nothing broke to re-run from"
            ),
        ));
    }
    Ok(Selected {
        targets: Vec::new(),
        runs,
    })
}

/// How many re-runs a bulk re-run of the activations matching `filter` would start (each
/// launch setting or group once, or one run each from where it broke): the count the question
/// before it shows. Nothing is started.
pub async fn rerun_count(
    db: &DatabaseConnection,
    actor: &Principal,
    filter: &ActivationFilter,
    from_where_it_broke: bool,
) -> ServiceResult<u64> {
    actor.require(Operation::Run)?;
    let selected = select(db, &[], filter, from_where_it_broke).await?;
    Ok((selected.targets.len() + selected.runs.len()) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: u128, ls: Option<&str>, group: Option<&str>, parent: Option<u128>, s: &str) -> Row {
        (
            Uuid::from_u128(n),
            ls.map(str::to_owned),
            group.map(str::to_owned),
            parent.map(Uuid::from_u128),
            s.to_owned(),
            Utc::now(),
        )
    }

    #[test]
    fn where_it_broke_takes_the_newest_broken_run_of_each_and_members_stand_for_their_group() {
        let rows = vec![
            row(9, Some("a"), None, None, "succeeded"),
            row(8, Some("a"), None, None, "failed"),
            row(7, Some("a"), None, None, "failed"),
            row(6, Some("m"), Some("g"), Some(5), "failed"),
            row(5, None, Some("g"), None, "failed"),
            row(4, Some("b"), None, None, "interrupted"),
            row(3, Some("c"), None, None, "running"),
        ];
        let s = broken(rows).expect("selected");
        assert_eq!(
            s.runs,
            vec![Uuid::from_u128(8), Uuid::from_u128(5), Uuid::from_u128(4)]
        );
        assert!(s.targets.is_empty());
    }

    #[test]
    fn nothing_broken_is_refused_with_the_field_named() {
        let err = broken(vec![row(1, Some("a"), None, None, "succeeded")]).expect_err("refused");
        assert!(err.to_string().contains("from_where_it_broke"), "{err}");
    }

    #[test]
    fn a_whole_re_run_runs_each_launch_setting_or_group_once() {
        let rows = vec![
            row(3, Some("a"), None, None, "failed"),
            row(2, Some("a"), None, None, "succeeded"),
            row(1, None, Some("g"), None, "failed"),
        ];
        assert_eq!(
            whole(rows),
            vec![
                EntityRef::LaunchSetting("a".into()),
                EntityRef::ScheduleGroup("g".into())
            ]
        );
    }
}
