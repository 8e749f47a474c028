//! The failures themselves, newest first, with the dead letters of their messages; and the
//! plans of the drill-down's statements.

use super::{
    ENTRIES_PAGE, FailureEntry, FailureFilter, FailureList, MAX_PAGE, Scope, kind_counts, queries,
    total, type_counts,
};
use crate::{
    Principal,
    entity::{dead_letters, failure_logs},
    error::{ServiceError, ServiceResult},
    filters,
};
use am_domain::roles::Operation;
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use std::collections::HashMap;
use uuid::Uuid;

/// The failures matching the filter, newest first, `limit` per page after the cursor `after`
/// (the id of the last failure of the previous page), with their counts by error type.
pub async fn list(
    db: &impl ConnectionTrait,
    actor: &Principal,
    filter: &FailureFilter,
    after: Option<i64>,
    limit: Option<u64>,
) -> ServiceResult<FailureList> {
    actor.require(Operation::Read)?;
    let scope = Scope::of(filter)?;
    let backend = db.get_database_backend();
    let limit = filters::limit(limit, ENTRIES_PAGE, MAX_PAGE);
    let by_error_type = type_counts(db, queries::type_counts(backend, &scope)).await?;
    let kinds = kind_counts(db, queries::kind_counts(backend, &scope)).await?;
    let cursor = match after {
        None => None,
        Some(id) => {
            let at: Option<DateTime<Utc>> = failure_logs::Entity::find_by_id(id)
                .select_only()
                .column(failure_logs::Column::OccurredAt)
                .into_tuple()
                .one(db)
                .await?;
            let Some(at) = at else {
                return Err(ServiceError::invalid(
                    "after",
                    format!("failure {id} does not exist (any more); start from the first page"),
                ));
            };
            Some((at, id))
        }
    };
    let stmt = queries::entries(backend, &scope, cursor, limit + 1);
    let mut rows = failure_logs::Entity::find()
        .from_raw_sql(stmt)
        .all(db)
        .await?;
    let has_more = rows.len() as u64 > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let entries = with_dead_letters(db, rows).await?;
    Ok(FailureList {
        total: total(&by_error_type),
        by_error_type,
        kinds,
        next: if has_more {
            entries.last().map(|e| e.id)
        } else {
            None
        },
        entries,
    })
}

/// Counts by error type and the newest `limit` real failures of several activations (a group
/// activation and its member runs), with the reports of the other kinds counted, for the
/// activation page.
pub(crate) async fn of_activations(
    db: &impl ConnectionTrait,
    ids: &[Uuid],
    limit: u64,
) -> ServiceResult<FailureList> {
    if ids.is_empty() {
        return Ok(FailureList {
            total: 0,
            by_error_type: vec![],
            kinds: Default::default(),
            entries: vec![],
            next: None,
        });
    }
    let backend = db.get_database_backend();
    let by_error_type = type_counts(db, queries::type_counts_of(backend, ids)).await?;
    let kinds = kind_counts(db, queries::kind_counts_of(backend, ids)).await?;
    let mut rows = failure_logs::Entity::find()
        .filter(failure_logs::Column::ActivationId.is_in(ids.iter().copied()))
        .filter(super::kinds::real_failures())
        .order_by_desc(failure_logs::Column::OccurredAt)
        .order_by_desc(failure_logs::Column::Id)
        .limit(limit + 1)
        .all(db)
        .await?;
    let has_more = rows.len() as u64 > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let entries = with_dead_letters(db, rows).await?;
    Ok(FailureList {
        total: total(&by_error_type),
        by_error_type,
        kinds,
        next: if has_more {
            entries.last().map(|e| e.id)
        } else {
            None
        },
        entries,
    })
}

/// The failures as entries, each with the dead letter of its data message if there is one
/// (of the same launch setting; the newest when it was dead-lettered more than once).
async fn with_dead_letters(
    db: &impl ConnectionTrait,
    rows: Vec<failure_logs::Model>,
) -> ServiceResult<Vec<FailureEntry>> {
    let message_ids: Vec<String> = rows
        .iter()
        .filter_map(|r| r.data_message_id.clone())
        .collect();
    let mut letters: HashMap<(Option<String>, String), i64> = HashMap::new();
    if !message_ids.is_empty() {
        for (id, ls, message) in dead_letters::Entity::find()
            .select_only()
            .columns([
                dead_letters::Column::Id,
                dead_letters::Column::LaunchSettingId,
                dead_letters::Column::MessageId,
            ])
            .filter(dead_letters::Column::MessageId.is_in(message_ids))
            .into_tuple::<(i64, Option<String>, Option<String>)>()
            .all(db)
            .await?
        {
            if let Some(message) = message {
                let e = letters.entry((ls, message)).or_insert(id);
                *e = (*e).max(id);
            }
        }
    }
    Ok(rows
        .into_iter()
        .map(|r| {
            let dead_letter = r.data_message_id.as_ref().and_then(|m| {
                letters
                    .get(&(Some(r.launch_setting_id.clone()), m.clone()))
                    .or_else(|| letters.get(&(None, m.clone())))
                    .copied()
            });
            super::entry(r, dead_letter)
        })
        .collect())
}

/// The query plans of the statements the drill-down runs for `filter`, at each level, with
/// `launch_setting` and `activation` as the drilled-into keys: `(statement, plan)`, the plan
/// as the database prints it (`EXPLAIN QUERY PLAN` on SQLite, `EXPLAIN` on PostgreSQL). For
/// tests and the benchmark, which check that each statement reads through an index.
pub async fn explain(
    db: &impl ConnectionTrait,
    filter: &FailureFilter,
    launch_setting: &str,
    activation: Uuid,
) -> ServiceResult<Vec<(String, String)>> {
    let scope = Scope::of(filter)?;
    let backend = db.get_database_backend();
    let ls = launch_setting.to_owned();
    let page = vec![ls.clone()];
    let one = Scope {
        launch_setting: Some(ls.clone()),
        ..scope.clone()
    };
    let statements = [
        (
            "launch settings: next ids",
            queries::next_launch_settings(backend, "", 21),
        ),
        (
            "launch settings: counts",
            queries::launch_setting_counts(backend, &scope, &page),
        ),
        (
            "launch settings: first and last",
            queries::launch_setting_spans(backend, &scope, &page),
        ),
        (
            "activations: page",
            queries::activation_groups(backend, &scope, &ls, 21, 0),
        ),
        (
            "activations: counts by host and type",
            queries::activation_breakdown(backend, &scope, &[activation]),
        ),
        (
            "launch settings: kinds",
            queries::launch_setting_kind_counts(backend, &scope, &page),
        ),
        (
            "activations: counts by type",
            queries::type_counts(backend, &one),
        ),
        ("activations: kinds", queries::kind_counts(backend, &one)),
        (
            "hosts: kinds",
            queries::kind_counts(
                backend,
                &Scope {
                    activation: Some(activation),
                    ..one.clone()
                },
            ),
        ),
        (
            "hosts: counts",
            queries::host_counts(backend, &scope, activation),
        ),
        (
            "hosts: first and last",
            queries::host_spans(backend, &scope, &ls, activation),
        ),
        (
            "failures: counts by type",
            queries::type_counts(backend, &scope),
        ),
        (
            "failures: page",
            queries::entries(backend, &scope, None, 51),
        ),
    ];
    let mut out = Vec::new();
    for (name, stmt) in statements {
        let rows = db.query_all_raw(queries::explain(&stmt)).await?;
        let plan: Vec<String> = rows
            .iter()
            .filter_map(|r| match backend {
                sea_orm::DbBackend::Postgres => r.try_get_by_index::<String>(0).ok(),
                _ => r.try_get_by_index::<String>(3).ok(),
            })
            .collect();
        out.push((format!("{name}: {}", stmt.sql), plan.join("\n")));
    }
    Ok(out)
}
