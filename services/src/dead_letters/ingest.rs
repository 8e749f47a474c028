//! Moving dead letters from the broker's dead-letter queue into the database: one transaction
//! per batch, every row keyed by the message's identity so that a batch the broker delivers
//! again (committed, then the connection died before the acknowledgement) stores nothing twice.

use super::{DEAD, headers, replay, threshold};
use crate::{
    entity::{agents, dead_letters, launch_settings},
    error::ServiceResult,
};
use am_domain::{
    recovery::ReplayResult,
    wire::{
        names::Names,
        replay::{REPLAY_HEADER, ReplayToken},
    },
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait,
    QueryFilter, QuerySelect, TryInsertResult,
};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// One message read from the dead-letter queue, its AMQP field tables as JSON.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IncomingDeadLetter {
    /// The exchange it was delivered from (the default exchange `""` for a node's dead
    /// letters and the broker's own).
    pub exchange: String,
    pub routing_key: String,
    pub message_id: Option<String>,
    pub content_type: Option<String>,
    /// The other AMQP properties a replay restores (correlation id, timestamp, type, ...).
    pub properties: Map<String, Value>,
    pub headers: Map<String, Value>,
    pub body: Vec<u8>,
}

/// What a batch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreOutcome {
    /// New dead letters.
    pub stored: u64,
    /// Messages already stored (a redelivered batch) or twice in this one.
    pub duplicates: u64,
}

/// Stores a batch in one transaction, skipping messages already stored. `names` says which
/// queues are this installation's subscriptions (for messages the broker dead-lettered).
#[tracing::instrument(skip_all, fields(dead_letters = batch.len()))]
pub async fn store(
    db: &DatabaseConnection,
    names: &Names,
    batch: &[IncomingDeadLetter],
    now: DateTime<Utc>,
) -> ServiceResult<StoreOutcome> {
    if batch.is_empty() {
        return Ok(StoreOutcome::default());
    }
    let mut seen = HashSet::new();
    // Replayed dead letters that died again: their new key and the replay.
    let mut again = Vec::new();
    let mut rows = Vec::with_capacity(batch.len());
    let mut parsed = Vec::with_capacity(batch.len());
    for m in batch {
        let key = headers::dedupe_key(&headers::Identity {
            exchange: &m.exchange,
            routing_key: &m.routing_key,
            message_id: m.message_id.as_deref(),
            content_type: m.content_type.as_deref(),
            properties: &m.properties,
            headers: &m.headers,
            body: &m.body,
        });
        if seen.insert(key.clone()) {
            if let Some(token) = m
                .headers
                .get(REPLAY_HEADER)
                .and_then(Value::as_str)
                .and_then(|t| t.parse::<ReplayToken>().ok())
            {
                again.push((key.clone(), token));
            }
            parsed.push((key, headers::parse(names, &m.headers), m));
        }
    }
    let data_queues = data_queues_of(
        db,
        parsed
            .iter()
            .filter(|(_, p, _)| p.data_queue_id.is_none())
            .filter_map(|(_, p, _)| p.launch_setting_id.clone())
            .collect(),
    )
    .await?;
    let forwards = forward_targets(
        db,
        parsed
            .iter()
            .filter_map(|(_, p, _)| p.launch_setting_id.clone())
            .collect(),
    )
    .await?;
    for (key, p, m) in parsed {
        let forward_to = p
            .launch_setting_id
            .as_ref()
            .and_then(|ls| forwards.get(ls).cloned());
        let data_queue_id = p.data_queue_id.or_else(|| {
            p.launch_setting_id
                .as_ref()
                .and_then(|ls| data_queues.get(ls).cloned())
        });
        rows.push(dead_letters::ActiveModel {
            dedupe_key: Set(key),
            launch_setting_id: Set(p.launch_setting_id),
            data_queue_id: Set(data_queue_id),
            message_id: Set(m.message_id.as_deref().map(headers::clean)),
            routing_key: Set(Some(headers::clean(&m.routing_key))),
            headers: Set(headers::scrub(&Value::Object(m.headers.clone()))),
            body: Set(m.body.clone()),
            content_type: Set(m.content_type.as_deref().map(headers::clean)),
            error_type: Set(p.error_type),
            error_message: Set(p.error_message),
            attempts: Set(p.attempts),
            first_failure_at: Set(p.first_failure_at),
            last_failure_at: Set(p.last_failure_at),
            host: Set(p.host),
            received_at: Set(now),
            status: Set(DEAD.to_owned()),
            park_until: Set(None),
            replay_count: Set(0),
            replayed_at: Set(None),
            replayed_by: Set(None),
            properties: Set(if m.properties.is_empty() {
                None
            } else {
                Some(headers::scrub(&Value::Object(m.properties.clone())))
            }),
            // A copy is owed from now on: the forwarder sends it (docs/operations.md).
            forward_next_at: Set(forward_to.as_ref().map(|_| now)),
            forward_to: Set(forward_to),
            ..Default::default()
        });
    }
    let watched: HashSet<String> = rows
        .iter()
        .filter_map(|r| match &r.launch_setting_id {
            Set(Some(ls)) => Some(ls.clone()),
            _ => None,
        })
        .collect();
    // Written with the intent to write, so the counts before and after see the same table.
    let txn = crate::db::begin_write(db).await?;
    let watch = threshold::watch(&txn, watched).await?;
    let stored = match dead_letters::Entity::insert_many(rows)
        .on_conflict_do_nothing_on([dead_letters::Column::DedupeKey])
        .exec_without_returning(&txn)
        .await?
    {
        TryInsertResult::Inserted(n) => n,
        TryInsertResult::Conflicted | TryInsertResult::Empty => 0,
    };
    died_again(&txn, &again, now).await?;
    watch.raise_crossed(&txn, now).await?;
    txn.commit().await?;
    Ok(StoreOutcome {
        stored,
        duplicates: (batch.len() as u64).saturating_sub(stored),
    })
}

/// Replays that were dead-lettered again: the dead letter they replay names the new one.
async fn died_again(
    txn: &DatabaseTransaction,
    again: &[(String, ReplayToken)],
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    if again.is_empty() {
        return Ok(());
    }
    let ids: HashMap<String, i64> = dead_letters::Entity::find()
        .select_only()
        .columns([dead_letters::Column::DedupeKey, dead_letters::Column::Id])
        .filter(dead_letters::Column::DedupeKey.is_in(again.iter().map(|(k, _)| k.clone())))
        .into_tuple::<(String, i64)>()
        .all(txn)
        .await?
        .into_iter()
        .collect();
    let outcomes: Vec<replay::Reported> = again
        .iter()
        .filter_map(|(key, token)| {
            Some(replay::Reported {
                token: *token,
                result: ReplayResult::DeadLettered,
                error: None,
                new_dead_letter: Some(*ids.get(key)?),
                at: now,
            })
        })
        .collect();
    replay::record(txn, &outcomes).await
}

/// The exchange of each launch setting with dead-letter policy `forward` (validation sets
/// `forward_to` with that policy only).
async fn forward_targets(
    db: &DatabaseConnection,
    launch_settings: HashSet<String>,
) -> ServiceResult<HashMap<String, String>> {
    if launch_settings.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<(String, String)> = launch_settings::Entity::find()
        .select_only()
        .columns([
            launch_settings::Column::Id,
            launch_settings::Column::DeadLetterForwardTo,
        ])
        .filter(launch_settings::Column::Id.is_in(launch_settings))
        .filter(launch_settings::Column::DeadLetterForwardTo.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows.into_iter().collect())
}

/// The data queue of each launch setting (its agent's), for messages whose headers do not say.
async fn data_queues_of(
    db: &DatabaseConnection,
    launch_settings: HashSet<String>,
) -> ServiceResult<HashMap<String, String>> {
    if launch_settings.is_empty() {
        return Ok(HashMap::new());
    }
    let ls: Vec<(String, String, String)> = launch_settings::Entity::find()
        .select_only()
        .columns([
            launch_settings::Column::Id,
            launch_settings::Column::ApplicationId,
            launch_settings::Column::AgentId,
        ])
        .filter(launch_settings::Column::Id.is_in(launch_settings))
        .into_tuple()
        .all(db)
        .await?;
    let mut out = HashMap::new();
    for (id, application, agent) in ls {
        let queue: Option<Option<String>> = agents::Entity::find_by_id((application, agent))
            .select_only()
            .column(agents::Column::DataQueueId)
            .into_tuple()
            .one(db)
            .await?;
        if let Some(Some(q)) = queue {
            out.insert(id, q);
        }
    }
    Ok(out)
}
