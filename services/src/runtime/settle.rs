//! Ending activations: the result of a dispatch round, the compare-and-set that records it, and
//! the launch setting's status. A member run's end is handed back as [`MemberEnded`]: its group
//! goes on in `ending.rs`, since going on may end another run (overlap policy `interrupt`),
//! which settles again.

use super::{Metrics, locks, observe, plan::Plan};
use crate::status;
use crate::{
    entity::{activation_hosts, activations, launch_settings},
    error::ServiceResult,
    notifications,
};
use am_domain::status::EventKind;
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, sea_query::Expr,
};
use uuid::Uuid;

/// A member run of a group whose end was recorded: the group has yet to go on with its next
/// member (`ending::follow`).
#[must_use = "the group goes on only once its member's end is followed (ending::follow)"]
#[derive(Debug)]
pub(crate) struct MemberEnded {
    pub member: activations::Model,
    pub result: &'static str,
}

/// The result of an activation whose hosts are all done, from its latest dispatch round;
/// `None` while a host still runs.
pub(crate) fn result_of(hosts: &[activation_hosts::Model], token: i64) -> Option<&'static str> {
    use status::host as h;
    let current: Vec<&activation_hosts::Model> =
        hosts.iter().filter(|r| r.fencing_token == token).collect();
    if current
        .iter()
        .any(|r| h::ACTIVE.contains(&r.status.as_str()))
    {
        return None;
    }
    let any = |s: &str| current.iter().any(|r| r.status == s);
    Some(if any(h::FAILED) || any(h::LOST) {
        status::activation::FAILED
    } else if any(h::INTERRUPTED) {
        status::activation::INTERRUPTED
    } else if !current.is_empty() && current.iter().all(|r| r.status == h::SKIPPED) {
        status::activation::SKIPPED
    } else if current.is_empty() {
        status::activation::FAILED
    } else {
        status::activation::SUCCEEDED
    })
}

/// Ends the activation if all its hosts are done: compare-and-set from an active state, then
/// the launch setting's status. A member run's end is returned for its group to go on.
///
/// What it may write (its launch setting, the group's next member) is locked first, in the one
/// order (`locks`): for a transaction that settles this one run.
pub(crate) async fn settle(
    db: &impl ConnectionTrait,
    metrics: &Metrics,
    activation: Uuid,
    error: Option<String>,
    now: DateTime<Utc>,
) -> ServiceResult<Option<MemberEnded>> {
    locks::for_settling(db, &[activation], []).await?;
    settle_locked(db, metrics, activation, error, now).await
}

/// [`settle`] in a transaction that has locked what settling `activation` may write already
/// (a batch of reports locks it for all its runs at once).
pub(crate) async fn settle_locked(
    db: &impl ConnectionTrait,
    metrics: &Metrics,
    activation: Uuid,
    error: Option<String>,
    now: DateTime<Utc>,
) -> ServiceResult<Option<MemberEnded>> {
    let Some(a) = activations::Entity::find_by_id(activation).one(db).await? else {
        return Ok(None);
    };
    if !status::activation::ACTIVE.contains(&a.status.as_str())
        || a.parent_id.is_none() && a.group_id.is_some()
    {
        // Done already, or a group activation (settled by its members).
        return Ok(None);
    }
    let hosts = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::ActivationId.eq(activation))
        .all(db)
        .await?;
    let Some(result) = result_of(&hosts, a.fencing_token) else {
        return Ok(None);
    };
    let error = error.or_else(|| {
        hosts
            .iter()
            .filter(|h| h.fencing_token == a.fencing_token)
            .find_map(|h| h.error.clone())
    });
    finish_locked(db, metrics, &a, result, error, now).await
}

/// Records the end of a (non-group) activation with compare-and-set and the launch setting's
/// status, locking first what that writes (as [`settle`] does). A member run's end is returned
/// for its group to go on; `None` as well when another pass recorded the end first.
pub(crate) async fn finish(
    db: &impl ConnectionTrait,
    metrics: &Metrics,
    a: &activations::Model,
    result: &'static str,
    error: Option<String>,
    now: DateTime<Utc>,
) -> ServiceResult<Option<MemberEnded>> {
    locks::for_settling(db, &[a.id], []).await?;
    finish_locked(db, metrics, a, result, error, now).await
}

/// [`finish`] once what it writes is locked.
async fn finish_locked(
    db: &impl ConnectionTrait,
    metrics: &Metrics,
    a: &activations::Model,
    result: &'static str,
    error: Option<String>,
    now: DateTime<Utc>,
) -> ServiceResult<Option<MemberEnded>> {
    let done = activations::Entity::update_many()
        .col_expr(activations::Column::Status, Expr::value(result))
        .col_expr(activations::Column::FinishedAt, Expr::value(Some(now)))
        .col_expr(activations::Column::Error, Expr::value(error.clone()))
        .col_expr(
            activations::Column::WaitUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .filter(activations::Column::Id.eq(a.id))
        .filter(activations::Column::Status.eq(a.status.as_str()))
        .exec(db)
        .await?;
    if done.rows_affected == 0 {
        return Ok(None);
    }
    observe::ended(db, metrics, a, result, now).await?;
    let mut ev = Plan::default();
    ev.event(
        a.id,
        None,
        EventKind::Finished,
        match &error {
            Some(e) => format!("{result}: {e}"),
            None => result.to_owned(),
        },
        now,
    );
    ev.write(db).await?;
    if let Some(ls) = &a.launch_setting_id {
        ls_finished(db, ls, a.id, result, now).await?;
        if result == status::activation::FAILED {
            tell_failure(db, ls, a.id, error.as_deref(), now).await?;
        }
    }
    Ok(a.parent_id.is_some().then(|| MemberEnded {
        member: a.clone(),
        result,
    }))
}

/// A failed run of a launch setting that asks for every failure to be told raises
/// `activation_failed`, in the transaction that records the end (repeats within the folding
/// window are counted on the first, so a failing stream does not flood anyone). A run that
/// failed only because its hosts were lost was told as `activation_lost` by the watchdog, so it
/// is not told twice.
async fn tell_failure(
    db: &impl ConnectionTrait,
    ls: &str,
    activation: Uuid,
    error: Option<&str>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let wants: Option<bool> = launch_settings::Entity::find_by_id(ls)
        .select_only()
        .column(launch_settings::Column::NotifyOnFailure)
        .into_tuple()
        .one(db)
        .await?;
    if wants == Some(true) && !only_lost(db, activation).await? {
        let notice = notifications::events::activation_failed(activation, ls, error, now);
        notifications::raise(db, notice, now).await?;
    }
    Ok(())
}

/// Whether every host of the run that did not hand it on was lost.
async fn only_lost(db: &impl ConnectionTrait, activation: Uuid) -> ServiceResult<bool> {
    let ends: Vec<String> = activation_hosts::Entity::find()
        .select_only()
        .column(activation_hosts::Column::Status)
        .filter(activation_hosts::Column::ActivationId.eq(activation))
        .filter(activation_hosts::Column::Status.ne(status::host::SUPERSEDED))
        .into_tuple()
        .all(db)
        .await?;
    Ok(!ends.is_empty() && ends.iter().all(|s| s == status::host::LOST))
}

/// A launch setting's status after one of its activations ended.
async fn ls_finished(
    db: &impl ConnectionTrait,
    ls: &str,
    activation: Uuid,
    result: &str,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let still_running = activations::Entity::find()
        .filter(activations::Column::LaunchSettingId.eq(ls))
        .filter(activations::Column::Status.is_in(status::activation::ACTIVE))
        .one(db)
        .await?
        .is_some();
    let mut update = launch_settings::Entity::update_many()
        .filter(launch_settings::Column::Id.eq(ls))
        .col_expr(
            launch_settings::Column::CurrentStatus,
            Expr::case(
                Expr::col(launch_settings::Column::Enabled),
                if still_running {
                    status::launch_setting::RUNNING
                } else {
                    status::launch_setting::WAITING
                },
            )
            .finally(status::launch_setting::DISABLED)
            .into(),
        );
    if result != status::activation::SKIPPED {
        update = update
            .col_expr(
                launch_settings::Column::LastResult,
                Expr::value(Some(result)),
            )
            .col_expr(
                launch_settings::Column::LastResultAt,
                Expr::value(Some(now)),
            )
            .col_expr(
                launch_settings::Column::LastActivationId,
                Expr::value(Some(activation)),
            );
    }
    if result == status::activation::SUCCEEDED {
        update = update.col_expr(
            launch_settings::Column::LastSuccessAt,
            Expr::value(Some(now)),
        );
    }
    update.exec(db).await?;
    Ok(())
}

/// A launch setting runs: its current status says so (unless it was disabled meanwhile).
pub(crate) async fn ls_running(db: &impl ConnectionTrait, ls: &str) -> ServiceResult<()> {
    launch_settings::Entity::update_many()
        .col_expr(
            launch_settings::Column::CurrentStatus,
            Expr::value(status::launch_setting::RUNNING),
        )
        .filter(launch_settings::Column::Id.eq(ls))
        .filter(launch_settings::Column::Enabled.eq(true))
        .exec(db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(token: i64, status: &str) -> activation_hosts::Model {
        activation_hosts::Model {
            id: 0,
            activation_id: Uuid::nil(),
            host: "h".into(),
            application_id: "a".into(),
            fencing_token: token,
            status: status.into(),
            attempt: 1,
            dispatched_at: Utc::now(),
            accepted_at: None,
            started_at: None,
            last_heartbeat_at: None,
            finished_at: None,
            recovery_deadline: None,
            processed: 0,
            failed: 0,
            retried: 0,
            dead_lettered: 0,
            error: None,
            stop_requested_at: None,
            consumes: None,
        }
    }

    #[test]
    fn results_come_from_the_latest_round_only() {
        use status::host as h;
        let hosts = [host(1, h::SUPERSEDED), host(2, h::SUCCEEDED)];
        assert_eq!(result_of(&hosts, 2), Some("succeeded"));
        let hosts = [host(1, h::SUCCEEDED), host(1, h::RUNNING)];
        assert_eq!(result_of(&hosts, 1), None);
        let hosts = [host(1, h::SUCCEEDED), host(1, h::LOST)];
        assert_eq!(result_of(&hosts, 1), Some("failed"));
        let hosts = [host(1, h::SUCCEEDED), host(1, h::INTERRUPTED)];
        assert_eq!(result_of(&hosts, 1), Some("interrupted"));
        let hosts = [host(1, h::SKIPPED), host(1, h::SKIPPED)];
        assert_eq!(result_of(&hosts, 1), Some("skipped"));
        let hosts = [host(1, h::SKIPPED), host(1, h::SUCCEEDED)];
        assert_eq!(result_of(&hosts, 1), Some("succeeded"));
    }
}
