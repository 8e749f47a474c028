//! Server functions of the dead-letter pages: the filtered list, one dead letter, and starting
//! a replay or a delete of selected or all matching dead letters (a background operation).

use crate::error::UiError;
use am_domain::read::dead_letters::{DeadLetterDetail, DeadLetterFilter, DeadLetterPage};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The list's filters as the URL carries them:
/// `/dead-letters?launch_setting=&data_queue=&error_type=&status=&from=&to=&after=`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLettersQuery {
    #[serde(flatten)]
    pub filter: DeadLetterFilter,
    /// Keyset cursor: the last dead letter of the previous page.
    pub after: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLettersView {
    pub page: DeadLetterPage,
    /// Whether the caller may replay and delete.
    pub can_operate: bool,
}

/// One dead letter with everything the page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadLetterView {
    /// Its failures do not link to it: the page is the dead letter.
    pub detail: DeadLetterDetail,
    pub can_operate: bool,
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
    let page = am_services::dead_letters::list(&s.db, &who, &query.filter, after, None).await?;
    Ok(DeadLettersView {
        page,
        can_operate: who.role.may(Operation::HandleDeadLetters),
    })
}

/// One dead letter: headers, body, its launch setting's policy and its failure history.
#[server(prefix = "/ui", endpoint = "dead_letter", input = Json)]
pub async fn dead_letter(id: String) -> Result<DeadLetterView, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    let s = services()?;
    let id = id
        .trim()
        .parse::<i64>()
        .map_err(|_| am_services::ServiceError::NotFound(format!("dead letter '{id}'")))?;
    let mut detail = am_services::dead_letters::get(&s.db, &who, id).await?;
    for f in &mut detail.failures {
        f.dead_letter = None;
    }
    Ok(DeadLetterView {
        detail,
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
    use am_domain::read::{dead_letters::Selection, operations::OperationRequest};
    let who = require(Operation::HandleDeadLetters)?;
    let selection = Selection {
        ids,
        filter: query.filter,
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
    let selection = am_domain::read::dead_letters::Selection {
        ids,
        filter: query.filter,
    };
    Ok(am_services::dead_letters::replay::preview(&services()?.db, &who, &selection).await?)
}
