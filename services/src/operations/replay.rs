//! Replaying dead letters as an operation: batch by batch, or first a canary whose outcome
//! decides whether the rest follows, at an optional rate (docs/runtime.md, Replay outcomes).

use super::{
    OperationRequest, REPLAY_BATCH, Stored,
    batch::{Step, dead_letter_batch},
    broker::ReplayBroker,
};
use crate::{
    dead_letters::{self, replay::outcomes},
    entity::dead_letters as dead_letters_entity,
    error::{ServiceError, ServiceResult},
};
use am_domain::{
    read::dead_letters::Selection,
    recovery::{ReplayOutcomes, ReplayResult},
};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use std::time::Duration;
use uuid::Uuid;

/// How long a canary may go without an outcome before the operation stops.
pub const CANARY_TIMEOUT: chrono::Duration = chrono::Duration::minutes(5);
/// How often a waiting canary's outcome is read.
const CANARY_POLL: Duration = Duration::from_secs(1);
/// The cursor while the canary's outcome is awaited: `canary:<last id>:<sent at, unix ms>`.
const CANARY_CURSOR: &str = "canary:";

/// Refuses options that cannot work, naming the field.
pub(super) fn check(request: &OperationRequest) -> ServiceResult<()> {
    let OperationRequest::ReplayDeadLetters {
        canary,
        rate_per_second,
        ..
    } = request
    else {
        return Ok(());
    };
    if *canary == Some(0) {
        return Err(ServiceError::invalid(
            "canary",
            "a canary replays at least one dead letter; leave it out for no canary",
        ));
    }
    if *rate_per_second == Some(0) {
        return Err(ServiceError::invalid(
            "rate_per_second",
            "at least 1 per second; leave it out for no cap",
        ));
    }
    Ok(())
}

/// Where a replay stands: after which dead letter, and whether a canary's outcome is awaited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cursor {
    after: i64,
    canary_since: Option<DateTime<Utc>>,
}

impl Cursor {
    fn parse(cursor: Option<&str>) -> Self {
        let Some(c) = cursor else {
            return Self {
                after: 0,
                canary_since: None,
            };
        };
        if let Some(rest) = c.strip_prefix(CANARY_CURSOR)
            && let Some((after, since)) = rest.split_once(':')
        {
            return Self {
                after: after.parse().unwrap_or(0),
                canary_since: since
                    .parse::<i64>()
                    .ok()
                    .and_then(DateTime::<Utc>::from_timestamp_millis),
            };
        }
        Self {
            after: c.parse().unwrap_or(0),
            canary_since: None,
        }
    }

    fn waiting(after: i64, since: DateTime<Utc>) -> String {
        format!("{CANARY_CURSOR}{after}:{}", since.timestamp_millis())
    }
}

/// What the canary's outcomes say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Go,
    Wait,
    Stop(String),
}

/// The pure rule: go on once every canary message was processed; stop at the first that failed
/// again, when one waits behind a disabled launch setting, or past the timeout.
pub(crate) fn verdict(
    o: &ReplayOutcomes,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    failure: Option<&str>,
) -> Verdict {
    if o.failed_again > 0 {
        return Verdict::Stop(format!(
            "canary failed: {} of the {} canary messages failed again{}; the rest was not \
             replayed",
            o.failed_again,
            o.processed + o.failed_again + o.pending(),
            failure.map(|f| format!(" ({f})")).unwrap_or_default()
        ));
    }
    if o.waiting > 0 {
        return Verdict::Stop(
            "canary stopped: its launch setting is disabled, so the canary waits in the broker \
             unprocessed; enable the launch setting, then replay the rest"
                .into(),
        );
    }
    if o.sent == 0 {
        return Verdict::Go;
    }
    if now - since > CANARY_TIMEOUT {
        return Verdict::Stop(format!(
            "canary stopped: no node reported on it within {} minutes (is a node running the \
             launch setting?); the rest was not replayed",
            CANARY_TIMEOUT.num_minutes()
        ));
    }
    Verdict::Wait
}

/// One step of a dead-letter replay.
#[allow(clippy::too_many_arguments)]
pub(super) async fn step(
    db: &DatabaseConnection,
    id: Uuid,
    stored: &Stored,
    selection: &Selection,
    canary: Option<u32>,
    rate_per_second: Option<u32>,
    cursor: Option<&str>,
    publisher: &impl ReplayBroker,
) -> ServiceResult<Step> {
    let at = Cursor::parse(cursor);
    let mut step = Step::default();
    if let Some(since) = at.canary_since {
        let o = outcomes(db, id).await?;
        let failure = if o.failed_again > 0 {
            first_failure(db, id).await?
        } else {
            None
        };
        match verdict(&o, since, Utc::now(), failure.as_deref()) {
            Verdict::Go => step.cursor = Some(at.after.to_string()),
            Verdict::Wait => {
                tokio::time::sleep(CANARY_POLL).await;
                step.cursor = cursor.map(str::to_owned);
            }
            Verdict::Stop(why) => {
                step.cursor = cursor.map(str::to_owned);
                step.failed = i64::try_from(o.failed_again.max(1)).unwrap_or(i64::MAX);
                step.errors
                    .push(serde_json::json!({ "item": "canary", "error": why }));
                step.finished = true;
            }
        }
        return Ok(step);
    }
    let first = cursor.is_none();
    let limit = match (first, canary, rate_per_second) {
        (true, Some(n), _) => u64::from(n),
        (_, _, Some(rate)) => u64::from(rate).min(REPLAY_BATCH),
        _ => REPLAY_BATCH,
    };
    let started = tokio::time::Instant::now();
    let rows = dead_letter_batch(db, stored, selection, at.after, limit).await?;
    let Some(last) = rows.last() else {
        step.cursor = cursor.map(str::to_owned);
        step.finished = true;
        return Ok(step);
    };
    let last = last.id;
    // Recorded as sent before they are published: a node can process a replayed message and
    // report on it before this step would otherwise have written it, and its report must find
    // the replay it answers (a crash in between leaves a replay recorded but not sent: at
    // most once, never twice).
    let now = Utc::now();
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    dead_letters::mark_replayed(db, &ids, &stored.actor.name, id, now).await?;
    let results = publisher.publish(&rows, &stored.actor.name).await;
    let mut replayed = Vec::with_capacity(rows.len());
    let mut refused = Vec::new();
    for (row, result) in rows.iter().zip(results) {
        if result.is_ok() {
            replayed.push(row.id);
        } else {
            refused.push(row.clone());
        }
        step.record(&format!("dead letter {}", row.id), result);
    }
    dead_letters::unmark_replayed(db, &refused).await?;
    let canary_step = first && canary.is_some();
    if canary_step && replayed.is_empty() {
        // No canary reached the broker: going on would replay the rest unchecked.
        step.cursor = Some(last.to_string());
        step.finished = true;
        return Ok(step);
    }
    step.cursor = Some(if canary_step {
        Cursor::waiting(last, now)
    } else {
        last.to_string()
    });
    if let Some(rate) = rate_per_second {
        let due = Duration::from_secs_f64(rows.len() as f64 / f64::from(rate));
        tokio::time::sleep_until(started + due).await;
    }
    Ok(step)
}

/// The error of one canary message that failed again.
async fn first_failure(db: &DatabaseConnection, operation: Uuid) -> ServiceResult<Option<String>> {
    use dead_letters_entity::Column as C;
    let failed: Vec<&str> = ReplayResult::ALL
        .into_iter()
        .filter(|r| r.failed_again())
        .map(ReplayResult::as_str)
        .collect();
    Ok(dead_letters_entity::Entity::find()
        .filter(C::ReplayOperation.eq(operation))
        .filter(C::ReplayResult.is_in(failed))
        .one(db)
        .await?
        .map(|r| {
            let what = r.replay_error.unwrap_or_else(|| "no error reported".into());
            format!("dead letter {}: {what}", r.id)
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(sent: u64, waiting: u64, processed: u64, failed_again: u64) -> ReplayOutcomes {
        ReplayOutcomes {
            sent,
            waiting,
            processed,
            failed_again,
        }
    }

    #[test]
    fn the_canary_goes_on_only_when_every_message_was_processed() {
        let t0 = Utc::now();
        let soon = t0 + chrono::Duration::seconds(10);
        assert_eq!(verdict(&o(0, 0, 1, 0), t0, soon, None), Verdict::Go);
        assert_eq!(verdict(&o(1, 0, 0, 0), t0, soon, None), Verdict::Wait);
        assert_eq!(verdict(&o(2, 0, 1, 0), t0, soon, None), Verdict::Wait);
        let Verdict::Stop(why) = verdict(&o(1, 0, 1, 1), t0, soon, Some("dead letter 7: X: y"))
        else {
            panic!("a failure stops it")
        };
        assert!(
            why.contains("1 of the 3") && why.contains("dead letter 7"),
            "{why}"
        );
        let Verdict::Stop(why) = verdict(&o(0, 1, 0, 0), t0, soon, None) else {
            panic!("a disabled launch setting stops it")
        };
        assert!(why.contains("disabled"), "{why}");
        let late = t0 + CANARY_TIMEOUT + chrono::Duration::seconds(1);
        let Verdict::Stop(why) = verdict(&o(1, 0, 0, 0), t0, late, None) else {
            panic!("no outcome in time stops it")
        };
        assert!(why.contains("5 minutes"), "{why}");
    }

    #[test]
    fn cursors_read_back_what_they_wrote() {
        assert_eq!(
            Cursor::parse(None),
            Cursor {
                after: 0,
                canary_since: None
            }
        );
        assert_eq!(Cursor::parse(Some("41")).after, 41);
        let since = DateTime::<Utc>::from_timestamp_millis(1_700_000_000_123).expect("time");
        let c = Cursor::parse(Some(&Cursor::waiting(41, since)));
        assert_eq!(
            c,
            Cursor {
                after: 41,
                canary_since: Some(since)
            }
        );
    }
}
