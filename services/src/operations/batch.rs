//! One batch of an operation's work: what it did (`Step`), and the batches shared by the kinds of
//! operation (the next dead letters, the next items of a resolved list).

use super::{CATALOG_BATCH, Stored};
use crate::{dead_letters, entity::dead_letters as dead_letters_entity, error::ServiceResult};
use am_domain::read::dead_letters::Selection;
use sea_orm::DatabaseConnection;
use std::future::Future;

/// The result of one batch.
#[derive(Debug, Default)]
pub(super) struct Step {
    pub done: i64,
    pub failed: i64,
    pub errors: Vec<serde_json::Value>,
    pub cursor: Option<String>,
    pub finished: bool,
}

impl Step {
    pub(super) fn record(&mut self, item: &str, result: Result<(), impl std::fmt::Display>) {
        match result {
            Ok(()) => self.done += 1,
            Err(e) => {
                self.failed += 1;
                self.errors
                    .push(serde_json::json!({ "item": item, "error": e.to_string() }));
            }
        }
    }
}

/// The next dead letters of a dead-letter operation: still dead, after the cursor, and not
/// newer than the operation.
pub(super) async fn dead_letter_batch(
    db: &DatabaseConnection,
    stored: &Stored,
    selection: &Selection,
    after: i64,
    limit: u64,
) -> ServiceResult<Vec<dead_letters_entity::Model>> {
    let Some(max_id) = stored.max_id else {
        return Ok(Vec::new());
    };
    let mut rows = dead_letters::next_batch(db, selection, after, limit).await?;
    rows.retain(|r| r.id <= max_id);
    Ok(rows)
}

/// One batch of items resolved at the start (catalog ids, runs to re-run), from the index in
/// the cursor.
pub(super) async fn batch_step<T, F, Fut>(items: &[T], cursor: Option<&str>, mut apply: F) -> Step
where
    T: std::fmt::Display,
    F: FnMut(&T) -> Fut,
    Fut: Future<Output = ServiceResult<()>>,
{
    let from = cursor.and_then(|c| c.parse::<usize>().ok()).unwrap_or(0);
    let to = (from + CATALOG_BATCH).min(items.len());
    let mut step = Step::default();
    for item in items.get(from..to).unwrap_or_default() {
        let result = apply(item).await;
        step.record(&item.to_string(), result);
    }
    step.cursor = Some(to.to_string());
    step.finished = to >= items.len();
    step
}
