//! The dead-letter browser: a filtered list, newest first, paged by cursor; and one dead
//! letter with its headers, body, launch setting's policy and failure history.

use super::{
    DeadLetterDetail, DeadLetterFilter, DeadLetterPage, DeadLetterSummary, HISTORY, MAX_PAGE, PAGE,
    PolicyView, Scope, headers,
    replay::{self, ReplayColumns},
};
use crate::{
    Principal,
    entity::{dead_letters, failure_logs, launch_settings},
    error::{ServiceError, ServiceResult},
    filters,
};
use am_domain::read::failures::FailureEntry;
use am_domain::{HumanDuration, roles::Operation};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, FromQueryResult, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, sea_query::Expr,
};
use std::collections::HashSet;

/// Bytes of the body a list reads for its preview.
const PREVIEW_BYTES: u32 = 240;
/// Characters of the preview.
const PREVIEW_CHARS: usize = 120;
/// Characters of the error message in lists.
const MESSAGE_CHARS: usize = 300;

/// A row as lists read it: no body, only its size and start.
#[derive(Debug, FromQueryResult)]
struct Row {
    id: i64,
    launch_setting_id: Option<String>,
    data_queue_id: Option<String>,
    message_id: Option<String>,
    error_type: Option<String>,
    error_message: Option<String>,
    attempts: i32,
    first_failure_at: Option<DateTime<Utc>>,
    last_failure_at: Option<DateTime<Utc>>,
    host: Option<String>,
    received_at: DateTime<Utc>,
    status: String,
    replay_count: i32,
    replayed_at: Option<DateTime<Utc>>,
    replayed_by: Option<String>,
    replay_operation: Option<uuid::Uuid>,
    replay_result: Option<String>,
    replay_result_at: Option<DateTime<Utc>>,
    replay_error: Option<String>,
    replay_dead_letter: Option<i64>,
    headers: serde_json::Value,
    body_size: i64,
    body_start: Vec<u8>,
}

fn clip(s: Option<String>, max: usize) -> Option<String> {
    s.map(|s| {
        if s.chars().count() > max {
            let mut out: String = s.chars().take(max).collect();
            out.push('…');
            out
        } else {
            s
        }
    })
}

impl Row {
    fn replay_columns(&self) -> ReplayColumns<'_> {
        ReplayColumns {
            result: self.replay_result.as_deref(),
            launch_setting: self.launch_setting_id.as_deref(),
            at: self.replay_result_at,
            error: self.replay_error.as_deref(),
            dead_letter: self.replay_dead_letter,
            operation: self.replay_operation,
        }
    }

    fn summary(self, disabled: &HashSet<String>) -> DeadLetterSummary {
        let size = u64::try_from(self.body_size).unwrap_or(0);
        let replay = replay::view(self.replay_columns(), disabled);
        DeadLetterSummary {
            id: self.id,
            launch_setting: self.launch_setting_id,
            data_queue: self.data_queue_id,
            message_id: self.message_id,
            error_type: self.error_type,
            error_message: clip(self.error_message, MESSAGE_CHARS),
            attempts: self.attempts,
            first_failure_at: self.first_failure_at,
            last_failure_at: self.last_failure_at,
            host: self.host,
            received_at: self.received_at,
            status: self.status,
            replay_count: self.replay_count,
            replayed_at: self.replayed_at,
            replayed_by: self.replayed_by,
            replay,
            parked_at: headers::parked_at(&self.headers),
            body_preview: headers::preview(&self.body_start, size, PREVIEW_CHARS),
            body_size: size,
        }
    }
}

fn columns(m: &dead_letters::Model) -> ReplayColumns<'_> {
    ReplayColumns {
        result: m.replay_result.as_deref(),
        launch_setting: m.launch_setting_id.as_deref(),
        at: m.replay_result_at,
        error: m.replay_error.as_deref(),
        dead_letter: m.replay_dead_letter,
        operation: m.replay_operation,
    }
}

fn summary(m: &dead_letters::Model, disabled: &HashSet<String>) -> DeadLetterSummary {
    DeadLetterSummary {
        id: m.id,
        launch_setting: m.launch_setting_id.clone(),
        data_queue: m.data_queue_id.clone(),
        message_id: m.message_id.clone(),
        error_type: m.error_type.clone(),
        error_message: m.error_message.clone(),
        attempts: m.attempts,
        first_failure_at: m.first_failure_at,
        last_failure_at: m.last_failure_at,
        host: m.host.clone(),
        received_at: m.received_at,
        status: m.status.clone(),
        replay_count: m.replay_count,
        replayed_at: m.replayed_at,
        replayed_by: m.replayed_by.clone(),
        replay: replay::view(columns(m), disabled),
        parked_at: headers::parked_at(&m.headers),
        body_size: m.body.len() as u64,
        body_preview: headers::preview(&m.body, m.body.len() as u64, PREVIEW_CHARS),
    }
}

/// Dead letters matching `filter`, newest first, `limit` per page after the cursor `after`
/// (the id of the last dead letter of the previous page), with how many match in all.
pub async fn list(
    db: &impl ConnectionTrait,
    actor: &Principal,
    filter: &DeadLetterFilter,
    after: Option<i64>,
    limit: Option<u64>,
) -> ServiceResult<DeadLetterPage> {
    use dead_letters::Column as C;
    actor.require(Operation::Read)?;
    let scope = Scope::of(filter)?;
    let limit = filters::limit(limit, PAGE, MAX_PAGE);
    let total = dead_letters::Entity::find()
        .filter(scope.condition())
        .count(db)
        .await?;
    let mut q = dead_letters::Entity::find()
        .select_only()
        .columns([
            C::Id,
            C::LaunchSettingId,
            C::DataQueueId,
            C::MessageId,
            C::ErrorType,
            C::ErrorMessage,
            C::Attempts,
            C::FirstFailureAt,
            C::LastFailureAt,
            C::Host,
            C::ReceivedAt,
            C::Status,
            C::ReplayCount,
            C::ReplayedAt,
            C::ReplayedBy,
            C::ReplayOperation,
            C::ReplayResult,
            C::ReplayResultAt,
            C::ReplayError,
            C::ReplayDeadLetter,
            C::Headers,
        ])
        .expr_as(Expr::cust("CAST(LENGTH(body) AS BIGINT)"), "body_size")
        .expr_as(
            Expr::cust(format!("SUBSTR(body, 1, {PREVIEW_BYTES})")),
            "body_start",
        )
        .filter(scope.condition());
    if let Some(id) = after {
        let at: Option<DateTime<Utc>> = dead_letters::Entity::find_by_id(id)
            .select_only()
            .column(C::ReceivedAt)
            .into_tuple()
            .one(db)
            .await?;
        let Some(at) = at else {
            return Err(ServiceError::invalid(
                "after",
                format!("dead letter {id} does not exist (any more); start from the first page"),
            ));
        };
        q = q.filter(
            Condition::any()
                .add(C::ReceivedAt.lt(at))
                .add(Condition::all().add(C::ReceivedAt.eq(at)).add(C::Id.lt(id))),
        );
    }
    let mut rows = q
        .order_by_desc(C::ReceivedAt)
        .order_by_desc(C::Id)
        .limit(limit + 1)
        .into_model::<Row>()
        .all(db)
        .await?;
    let has_more = rows.len() as u64 > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let disabled = replay::disabled_of_sent(db, rows.iter().map(Row::replay_columns)).await?;
    let items: Vec<DeadLetterSummary> = rows.into_iter().map(|r| r.summary(&disabled)).collect();
    Ok(DeadLetterPage {
        total,
        next: if has_more {
            items.last().map(|i| i.id)
        } else {
            None
        },
        items,
    })
}

/// One dead letter: headers, the body as people read it, its launch setting's dead-letter
/// policy and the failures reported for its message, newest first.
pub async fn get(
    db: &impl ConnectionTrait,
    actor: &Principal,
    id: i64,
) -> ServiceResult<DeadLetterDetail> {
    actor.require(Operation::Read)?;
    let m = dead_letters::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("dead letter {id}")))?;
    let policy = match &m.launch_setting_id {
        None => None,
        Some(ls) => launch_settings::Entity::find_by_id(ls.clone())
            .one(db)
            .await?
            .map(|l| PolicyView {
                policy: l.dead_letter_policy,
                park_cooldown: HumanDuration(std::time::Duration::from_millis(
                    u64::try_from(l.park_cooldown_ms).unwrap_or(0),
                ))
                .to_string(),
                max_deliveries: l.max_deliveries,
            }),
    };
    let (failures, more_failures) = history(db, &m).await?;
    let disabled = replay::disabled_of_sent(db, std::iter::once(columns(&m))).await?;
    Ok(DeadLetterDetail {
        letter: summary(&m, &disabled),
        routing_key: m.routing_key.clone(),
        content_type: m.content_type.clone(),
        properties: m
            .properties
            .clone()
            .unwrap_or_else(|| serde_json::Value::Object(Default::default())),
        body: headers::body_view(&m.body),
        policy,
        failures,
        more_failures,
        forward: m.forward_to.clone().map(|to| super::ForwardView {
            to,
            forwarded_at: m.forwarded_at,
            attempts: m.forward_attempts,
            next_at: m.forward_next_at,
            error: m.forward_error.clone(),
        }),
        headers: m.headers,
    })
}

/// The failures reported for the dead letter's message by its launch setting (by any when
/// the launch setting is unknown), newest first. A message without an id has none to match.
async fn history(
    db: &impl ConnectionTrait,
    m: &dead_letters::Model,
) -> ServiceResult<(Vec<FailureEntry>, bool)> {
    use failure_logs::Column as F;
    let Some(message) = &m.message_id else {
        return Ok((vec![], false));
    };
    let mut q = failure_logs::Entity::find().filter(F::DataMessageId.eq(message.clone()));
    if let Some(ls) = &m.launch_setting_id {
        q = q.filter(F::LaunchSettingId.eq(ls.clone()));
    }
    let mut rows = q
        .order_by_desc(F::OccurredAt)
        .order_by_desc(F::Id)
        .limit(HISTORY + 1)
        .all(db)
        .await?;
    let more = rows.len() as u64 > HISTORY;
    rows.truncate(usize::try_from(HISTORY).unwrap_or(usize::MAX));
    Ok((
        rows.into_iter()
            .map(|r| crate::failures::entry(r, Some(m.id)))
            .collect(),
        more,
    ))
}
