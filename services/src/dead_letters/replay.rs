//! What became of replayed dead letters (docs/runtime.md, Replay outcomes). A replay stamps the
//! message with a replay token; the nodes' reports name it ("processed", or a failure with what
//! they did with the message), and so does the message when it is dead-lettered again. Each
//! outcome is written to the dead letter it replays, only for that dead letter's latest replay
//! and never over a final one (processed, dead-lettered again): reports of one message may
//! arrive from several hosts out of order.

use super::CHUNK;
use crate::{
    entity::{dead_letters, launch_settings},
    error::ServiceResult,
};
use am_domain::{
    read::dead_letters::{ReplayView, Selection},
    recovery::{BreakerRisk, ReplayOutcomes, ReplayPreview, ReplayResult},
    wire::replay::ReplayToken,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QuerySelect, sea_query::Expr,
};
use std::collections::HashSet;
use uuid::Uuid;

/// One outcome a node reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reported {
    pub token: ReplayToken,
    pub result: ReplayResult,
    /// The failure, `error type: message`.
    pub error: Option<String>,
    /// Dead-lettered again: the new dead letter.
    pub new_dead_letter: Option<i64>,
    pub at: DateTime<Utc>,
}

/// Writes reported outcomes, in the order given.
pub(crate) async fn record(db: &impl ConnectionTrait, outcomes: &[Reported]) -> ServiceResult<()> {
    use dead_letters::Column as C;
    let finals: Vec<&str> = ReplayResult::ALL
        .into_iter()
        .filter(|r| r.is_final())
        .map(ReplayResult::as_str)
        .collect();
    for o in outcomes {
        // The dead letter itself may arrive after the node's report said it was given up on:
        // it adds the new dead letter to that final outcome.
        let mut over = Condition::any()
            .add(C::ReplayResult.is_null())
            .add(C::ReplayResult.is_not_in(finals.clone()));
        if o.result == ReplayResult::DeadLettered {
            over = over.add(C::ReplayResult.eq(ReplayResult::DeadLettered.as_str()));
        }
        let mut update = dead_letters::Entity::update_many()
            .col_expr(C::ReplayResult, Expr::value(o.result.as_str()))
            .col_expr(C::ReplayResultAt, Expr::value(o.at));
        // A dead letter that comes back names no error of its own here: the failure report
        // before it did.
        if o.error.is_some() || !o.result.failed_again() {
            update = update.col_expr(C::ReplayError, Expr::value(o.error.clone()));
        }
        if let Some(new) = o.new_dead_letter {
            update = update.col_expr(C::ReplayDeadLetter, Expr::value(new));
        }
        update
            .filter(C::Id.eq(o.token.dead_letter))
            .filter(C::ReplayCount.eq(o.token.replay))
            .filter(over)
            .exec(db)
            .await?;
    }
    Ok(())
}

/// How the dead letters operation `operation` replayed fared; a replay not reported on yet
/// whose launch setting is disabled now is waiting.
pub async fn outcomes(db: &DatabaseConnection, operation: Uuid) -> ServiceResult<ReplayOutcomes> {
    use dead_letters::Column as C;
    let rows: Vec<(Option<String>, Option<String>, i64)> = dead_letters::Entity::find()
        .select_only()
        .column(C::ReplayResult)
        .column(C::LaunchSettingId)
        .column_as(C::Id.count(), "n")
        .filter(C::ReplayOperation.eq(operation))
        .group_by(C::ReplayResult)
        .group_by(C::LaunchSettingId)
        .into_tuple()
        .all(db)
        .await?;
    let disabled = disabled(db, rows.iter().filter_map(|r| r.1.clone()).collect()).await?;
    let mut out = ReplayOutcomes::default();
    for (result, ls, n) in rows {
        let Some(result) = shown(result.as_deref(), ls.as_deref(), &disabled) else {
            continue;
        };
        out.add(result, u64::try_from(n).unwrap_or(0));
    }
    Ok(out)
}

/// What replaying `selection` would send, and the launch settings it would wait behind or whose
/// breaker it could trip.
pub async fn preview(
    db: &DatabaseConnection,
    actor: &crate::Principal,
    selection: &Selection,
) -> ServiceResult<ReplayPreview> {
    use dead_letters::Column as C;
    actor.require(am_domain::roles::Operation::Read)?;
    let per_ls: Vec<(Option<String>, i64)> = dead_letters::Entity::find()
        .select_only()
        .column(C::LaunchSettingId)
        .column_as(C::Id.count(), "n")
        .filter(super::selected(selection)?)
        .group_by(C::LaunchSettingId)
        .into_tuple()
        .all(db)
        .await?;
    let mut out = ReplayPreview {
        total: per_ls
            .iter()
            .map(|(_, n)| u64::try_from(*n).unwrap_or(0))
            .sum(),
        ..ReplayPreview::default()
    };
    let counts: std::collections::HashMap<String, u64> = per_ls
        .into_iter()
        .filter_map(|(ls, n)| Some((ls?, u64::try_from(n).unwrap_or(0))))
        .collect();
    let ids: Vec<String> = counts.keys().cloned().collect();
    for chunk in ids.chunks(CHUNK) {
        let rows: Vec<(String, bool, i32)> = launch_settings::Entity::find()
            .select_only()
            .columns([
                launch_settings::Column::Id,
                launch_settings::Column::Enabled,
                launch_settings::Column::FailureThreshold,
            ])
            .filter(launch_settings::Column::Id.is_in(chunk.iter().cloned()))
            .into_tuple()
            .all(db)
            .await?;
        for (ls, enabled, threshold) in rows {
            let messages = counts.get(&ls).copied().unwrap_or(0);
            let threshold = u32::try_from(threshold).unwrap_or(0);
            // Dead letters of one launch setting mostly failed alike: the same-type count
            // trips the breaker first.
            let same_type = am_domain::policy::same_type_threshold(threshold);
            if !enabled {
                out.disabled.push(ls);
            } else if threshold > 0 && messages >= u64::from(same_type) {
                out.breaker_risk.push(BreakerRisk {
                    launch_setting: ls,
                    messages,
                    failure_threshold: threshold,
                    same_type_threshold: same_type,
                });
            }
        }
    }
    out.disabled.sort();
    out.breaker_risk
        .sort_by(|a, b| a.launch_setting.cmp(&b.launch_setting));
    Ok(out)
}

/// The view of a dead letter's stored replay columns; `None` before its first replay.
pub(crate) fn view(m: ReplayColumns<'_>, disabled: &HashSet<String>) -> Option<ReplayView> {
    Some(ReplayView {
        result: shown(m.result, m.launch_setting, disabled)?,
        at: m.at,
        error: m.error.map(str::to_owned),
        dead_letter: m.dead_letter,
        operation: m.operation,
    })
}

/// A dead letter's replay columns, as read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReplayColumns<'a> {
    pub result: Option<&'a str>,
    pub launch_setting: Option<&'a str>,
    pub at: Option<DateTime<Utc>>,
    pub error: Option<&'a str>,
    pub dead_letter: Option<i64>,
    pub operation: Option<Uuid>,
}

/// The launch settings of these rows' replays not reported on yet that are disabled now.
pub(crate) async fn disabled_of_sent<'a>(
    db: &impl ConnectionTrait,
    rows: impl Iterator<Item = ReplayColumns<'a>>,
) -> ServiceResult<HashSet<String>> {
    let sent = ReplayResult::Sent.as_str();
    let ids: HashSet<String> = rows
        .filter(|r| r.result == Some(sent))
        .filter_map(|r| r.launch_setting.map(str::to_owned))
        .collect();
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    disabled(db, ids).await
}

/// The result a page shows for a stored one: `sent` to a disabled launch setting is waiting.
pub(crate) fn shown(
    stored: Option<&str>,
    launch_setting: Option<&str>,
    disabled: &HashSet<String>,
) -> Option<ReplayResult> {
    let result = ReplayResult::parse(stored?)?;
    Some(match result {
        ReplayResult::Sent if launch_setting.is_some_and(|ls| disabled.contains(ls)) => {
            ReplayResult::Waiting
        }
        other => other,
    })
}

/// Which of these launch settings are disabled.
pub(crate) async fn disabled(
    db: &impl ConnectionTrait,
    ids: HashSet<String>,
) -> ServiceResult<HashSet<String>> {
    let ids: Vec<String> = ids.into_iter().collect();
    let mut out = HashSet::new();
    for chunk in ids.chunks(CHUNK) {
        let found: Vec<String> = launch_settings::Entity::find()
            .select_only()
            .column(launch_settings::Column::Id)
            .filter(launch_settings::Column::Id.is_in(chunk.iter().cloned()))
            .filter(launch_settings::Column::Enabled.eq(false))
            .into_tuple()
            .all(db)
            .await?;
        out.extend(found);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sent_replay_of_a_disabled_launch_setting_is_shown_waiting() {
        let disabled: HashSet<String> = ["off".to_owned()].into();
        assert_eq!(
            shown(Some("sent"), Some("off"), &disabled),
            Some(ReplayResult::Waiting)
        );
        assert_eq!(
            shown(Some("sent"), Some("on"), &disabled),
            Some(ReplayResult::Sent)
        );
        assert_eq!(
            shown(Some("retrying"), Some("off"), &disabled),
            Some(ReplayResult::Retrying)
        );
        assert_eq!(shown(None, Some("off"), &disabled), None);
        assert_eq!(shown(Some("bogus"), None, &disabled), None);
    }
}
