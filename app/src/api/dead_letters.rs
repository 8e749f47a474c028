//! Server functions of the dead-letter pages: the filtered list, one dead letter, and starting
//! a replay or a delete of selected or all matching dead letters (a background operation).

use crate::error::UiError;
use am_domain::read::failures::FailureEntry;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The list's filters as the URL carries them:
/// `/dead-letters?launch_setting=&data_queue=&error_type=&status=&from=&to=&after=`.
/// Empty means no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLettersQuery {
    pub launch_setting: String,
    pub data_queue: String,
    pub error_type: String,
    pub status: String,
    pub from: String,
    pub to: String,
    /// Keyset cursor: the last dead letter of the previous page.
    pub after: String,
}

impl DeadLettersQuery {
    /// No filter but the status: "all matching" means every dead letter.
    pub fn is_unfiltered(&self) -> bool {
        [
            &self.launch_setting,
            &self.data_queue,
            &self.error_type,
            &self.from,
            &self.to,
        ]
        .iter()
        .all(|v| v.trim().is_empty())
    }
}

/// A dead letter as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLetterRow {
    pub id: i64,
    pub launch_setting: Option<String>,
    pub data_queue: Option<String>,
    pub message_id: Option<String>,
    pub error_type: Option<String>,
    pub error_message: Option<String>,
    pub attempts: i32,
    pub first_failure: Option<String>,
    pub last_failure: Option<String>,
    pub host: Option<String>,
    pub received: String,
    /// `dead` or `replayed`.
    pub status: String,
    pub replay_count: i32,
    pub replayed_by: Option<String>,
    pub replayed_at: Option<String>,
    /// When it went through the sump of a `park` launch setting before it died.
    pub parked_at: Option<String>,
    pub body_size: u64,
    pub body_preview: String,
    /// What became of its last replay.
    pub replay: Option<ReplayRow>,
}

/// What became of a dead letter's last replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayRow {
    pub result: am_domain::recovery::ReplayResult,
    pub at: Option<String>,
    pub error: Option<String>,
    /// Dead-lettered again: the new dead letter.
    pub dead_letter: Option<i64>,
    pub operation: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLettersView {
    /// Dead letters matching the filters, all pages.
    pub total: u64,
    pub rows: Vec<DeadLetterRow>,
    /// Cursor of the next page.
    pub next: Option<i64>,
    pub statuses: Vec<String>,
    /// Whether the caller may replay and delete.
    pub can_operate: bool,
}

/// The dead-letter policy of a dead letter's launch setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyRow {
    pub policy: String,
    pub park_cooldown: String,
    pub max_deliveries: i32,
}

/// One dead letter with everything the page shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLetterView {
    pub row: DeadLetterRow,
    pub routing_key: Option<String>,
    pub content_type: Option<String>,
    /// Header name and value (strings as they are, other values as JSON), by name.
    pub headers: Vec<(String, String)>,
    pub properties: Vec<(String, String)>,
    /// `json` (pretty-printed), `text` or `base64`.
    pub body_encoding: String,
    pub body: String,
    pub policy: Option<PolicyRow>,
    /// Failures reported for its message, newest first.
    pub failures: Vec<FailureEntry>,
    pub more_failures: bool,
    /// Policy `forward`: where its copy goes and what became of it, one line.
    pub forward: Option<String>,
    pub can_operate: bool,
}

#[cfg(feature = "ssr")]
pub(crate) mod present {
    use super::*;
    use am_domain::display::time;
    use am_services::dead_letters::{DeadLetterFilter, DeadLetterSummary};

    pub fn row(s: DeadLetterSummary) -> DeadLetterRow {
        DeadLetterRow {
            id: s.id,
            launch_setting: s.launch_setting,
            data_queue: s.data_queue,
            message_id: s.message_id,
            error_type: s.error_type,
            error_message: s.error_message,
            attempts: s.attempts,
            first_failure: s.first_failure_at.map(time),
            last_failure: s.last_failure_at.map(time),
            host: s.host,
            received: time(s.received_at),
            status: s.status,
            replay_count: s.replay_count,
            replayed_by: s.replayed_by,
            replayed_at: s.replayed_at.map(time),
            parked_at: s.parked_at,
            body_size: s.body_size,
            body_preview: s.body_preview,
            replay: s.replay.map(|r| ReplayRow {
                result: r.result,
                at: r.at.map(time),
                error: r.error,
                dead_letter: r.dead_letter,
                operation: r.operation.map(|o| o.to_string()),
            }),
        }
    }

    pub fn filter(q: &DeadLettersQuery) -> DeadLetterFilter {
        let some = |v: &str| (!v.trim().is_empty()).then(|| v.trim().to_owned());
        DeadLetterFilter {
            launch_setting: some(&q.launch_setting),
            data_queue: some(&q.data_queue),
            error_type: some(&q.error_type),
            status: some(&q.status),
            from: some(&q.from),
            to: some(&q.to),
        }
    }

    /// A JSON object's entries as (name, text), strings unquoted.
    pub fn pairs(v: &serde_json::Value) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = v
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        let text = match v {
                            serde_json::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (k.clone(), text)
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }
}

/// One page of dead letters matching `query`, newest first.
#[server(prefix = "/ui", endpoint = "dead_letters", input = Json)]
pub async fn list_dead_letters(query: DeadLettersQuery) -> Result<DeadLettersView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let after = match query.after.trim() {
        "" => None,
        a => Some(a.parse::<i64>().map_err(|_| {
            UiError::Invalid(vec![am_domain::FieldError::new(
                "after",
                "not a dead-letter id",
            )])
        })?),
    };
    let page =
        am_services::dead_letters::list(&s.db, &who, &present::filter(&query), after, None).await?;
    Ok(DeadLettersView {
        total: page.total,
        rows: page.items.into_iter().map(present::row).collect(),
        next: page.next,
        statuses: am_services::dead_letters::STATUSES
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        can_operate: who.role.may(Operation::HandleDeadLetters),
    })
}

/// One dead letter: headers, body, its launch setting's policy and its failure history.
#[server(prefix = "/ui", endpoint = "dead_letter", input = Json)]
pub async fn dead_letter(id: String) -> Result<DeadLetterView, UiError> {
    use super::ssr::*;
    use am_domain::display::time;
    let who = require(Operation::Read)?;
    let s = services()?;
    let id = id
        .trim()
        .parse::<i64>()
        .map_err(|_| am_services::ServiceError::NotFound(format!("dead letter '{id}'")))?;
    let d = am_services::dead_letters::get(&s.db, &who, id).await?;
    let encoding = serde_json::to_value(d.body.encoding)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    Ok(DeadLetterView {
        row: present::row(d.letter),
        routing_key: d.routing_key,
        content_type: d.content_type,
        headers: present::pairs(&d.headers),
        properties: present::pairs(&d.properties),
        body_encoding: encoding,
        body: d.body.text,
        forward: d.forward.map(|f| match (f.forwarded_at, f.error) {
            (Some(at), _) => format!("copy forwarded to exchange {} at {}", f.to, time(at)),
            (None, Some(e)) => format!(
                "copy for exchange {} not sent yet ({} tries; next {}): {e}",
                f.to,
                f.attempts,
                f.next_at.map(time).unwrap_or_else(|| "—".into())
            ),
            (None, None) => format!("copy for exchange {} on its way", f.to),
        }),
        policy: d.policy.map(|p| PolicyRow {
            policy: p.policy,
            park_cooldown: p.park_cooldown,
            max_deliveries: p.max_deliveries,
        }),
        failures: d
            .failures
            .into_iter()
            .map(|f| FailureEntry {
                // This page is the dead letter: no link to itself.
                dead_letter: None,
                ..f
            })
            .collect(),
        more_failures: d.more_failures,
        can_operate: who.role.may(Operation::HandleDeadLetters),
    })
}

/// What a bulk button does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BulkAction {
    Replay,
    Delete,
}

/// Starts a replay or a delete (operators) of the dead letters `ids`, or, when `ids` is empty,
/// of every `dead` one matching `query`; a replay optionally first replays a `canary` and caps
/// its rate. Returns the operation's id.
#[server(prefix = "/ui", endpoint = "dead_letters_bulk", input = Json)]
pub async fn dead_letters_bulk(
    action: BulkAction,
    ids: Vec<i64>,
    query: DeadLettersQuery,
    canary: Option<u32>,
    rate_per_second: Option<u32>,
) -> Result<String, UiError> {
    use super::ssr::*;
    use am_services::{dead_letters::Selection, operations::OperationRequest};
    let who = require(Operation::HandleDeadLetters)?;
    let selection = Selection {
        ids,
        filter: present::filter(&query),
    };
    let request = match action {
        BulkAction::Replay => OperationRequest::ReplayDeadLetters {
            selection,
            canary,
            rate_per_second,
        },
        BulkAction::Delete => OperationRequest::DeleteDeadLetters { selection },
    };
    let op = am_services::operations::start(&services()?, &who, request).await?;
    Ok(op.id.to_string())
}

/// What a replay of the dead letters `ids` (or, when empty, of every `dead` one matching
/// `query`) would send, asked before the operator confirms it.
#[server(prefix = "/ui", endpoint = "replay_preview", input = Json)]
pub async fn replay_preview(
    ids: Vec<i64>,
    query: DeadLettersQuery,
) -> Result<am_domain::recovery::ReplayPreview, UiError> {
    use super::ssr::*;
    let who = require(Operation::HandleDeadLetters)?;
    let selection = am_services::dead_letters::Selection {
        ids,
        filter: present::filter(&query),
    };
    Ok(am_services::dead_letters::replay::preview(&services()?.db, &who, &selection).await?)
}
