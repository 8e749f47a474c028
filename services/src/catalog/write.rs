//! How a catalog write is carried out (the steps are in the module docs of `catalog`), and the
//! lock it takes.
//!
//! A write is prepared without the lock: the catalog is read with the revision it had, the
//! change applied in memory and the whole result validated; only then does the write take the
//! lock, and only if the revision is still the one it read (compare-and-set), so the lock is
//! held for the writing of the difference alone. Loading and validating a catalog at its limits
//! takes seconds; holding the lock that long stopped every other writer (the scheduler, report
//! ingestion) on SQLite. A write that keeps losing the race to others is prepared under the
//! lock instead.

use super::{
    store::{self, ChangeSummary},
    sync,
};
use crate::{Principal, ServiceError, entity::catalog_meta, error::ServiceResult};
use am_domain::{
    ValidationErrors,
    catalog::Catalog,
    usage::EntityRef,
    validate::{entity_path, validate_catalog},
};
use sea_orm::{
    ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, QueryFilter,
    TransactionTrait,
    sea_query::{Expr, ExprTrait},
};

/// Optimistic attempts before a write prepares under the lock.
const OPTIMISTIC_TRIES: usize = 3;

/// Takes the catalog write lock for the rest of `txn` by bumping the revision: a row lock on
/// PostgreSQL, the database's write lock on SQLite. With `expected`, only if the revision is
/// still that one; returns whether the lock was taken.
async fn lock(txn: &DatabaseTransaction, expected: Option<i64>) -> ServiceResult<bool> {
    let mut bump = catalog_meta::Entity::update_many()
        .col_expr(
            catalog_meta::Column::Revision,
            Expr::col(catalog_meta::Column::Revision).add(1),
        )
        .filter(catalog_meta::Column::Id.eq(1));
    if let Some(revision) = expected {
        bump = bump.filter(catalog_meta::Column::Revision.eq(revision));
    }
    Ok(bump.exec(txn).await?.rows_affected == 1)
}

/// `old` with `change` applied, normalized and validated whole.
fn prepare<F>(old: &Catalog, focus: Option<&EntityRef>, change: F) -> ServiceResult<Catalog>
where
    F: FnOnce(&mut Catalog) -> ServiceResult<()>,
{
    let mut new = old.clone();
    change(&mut new)?;
    new.normalize();
    am_domain::catalog::keep_secrets(&mut new, old);
    if let Err(errors) = validate_catalog(&new) {
        let prefix = focus.and_then(|f| entity_path(&new, f));
        return Err(ServiceError::Invalid(relative_to(
            errors,
            prefix.as_deref(),
        )));
    }
    Ok(new)
}

/// Writes `change` and returns the transaction, still open, for the caller to add what belongs
/// with it and commit. The caller has checked that `actor` may make the change.
pub(super) async fn write<F>(
    db: &DatabaseConnection,
    actor: &Principal,
    focus: Option<&EntityRef>,
    cause: Option<&str>,
    change: F,
) -> ServiceResult<(DatabaseTransaction, Catalog, ChangeSummary)>
where
    F: Fn(&mut Catalog) -> ServiceResult<()>,
{
    for _ in 0..OPTIMISTIC_TRIES {
        let seen = super::revision(db).await?;
        // Read outside a transaction: a write committing in between changes the revision,
        // which the compare-and-set below (or the check after a refusal) then sees.
        let old = store::load(db).await?;
        let new = match prepare(&old, focus, &change) {
            Ok(new) => new,
            Err(e) if super::revision(db).await? == seen => return Err(e),
            Err(_) => continue,
        };
        let txn = db.begin().await?;
        if lock(&txn, Some(seen)).await? {
            let summary = sync::sync(&txn, actor, &old, &new, cause).await?;
            return Ok((txn, new, summary));
        }
        txn.rollback().await?;
        tracing::debug!(
            revision = seen,
            "the catalog changed while a write was prepared; preparing it again"
        );
    }
    let txn = db.begin().await?;
    let (new, summary) = apply_in(&txn, actor, focus, cause, change).await?;
    Ok((txn, new, summary))
}

/// The steps of a write inside a transaction the caller owns and commits, for writers that
/// change more than the catalog at once (a node's publication also records the node): the
/// lock first, then the catalog is read, changed and validated. The caller has checked that
/// `actor` may make the change.
pub(crate) async fn apply_in<F>(
    txn: &DatabaseTransaction,
    actor: &Principal,
    focus: Option<&EntityRef>,
    cause: Option<&str>,
    change: F,
) -> ServiceResult<(Catalog, ChangeSummary)>
where
    F: FnOnce(&mut Catalog) -> ServiceResult<()>,
{
    lock(txn, None).await?;
    let old = store::load(txn).await?;
    let new = prepare(&old, focus, change)?;
    let summary = sync::sync(txn, actor, &old, &new, cause).await?;
    Ok((new, summary))
}

/// Errors located in the changed entity are given relative to it (`parameters.org_id`), as a
/// form shows them; errors the change causes elsewhere keep their full catalog path.
fn relative_to(errors: ValidationErrors, prefix: Option<&str>) -> ValidationErrors {
    let Some(prefix) = prefix else { return errors };
    ValidationErrors(
        errors
            .0
            .into_iter()
            .map(|mut e| {
                if let Some(rest) = e.path.strip_prefix(prefix) {
                    if rest.is_empty() {
                        e.path = String::new();
                    } else if let Some(r) = rest.strip_prefix('.') {
                        e.path = r.to_owned();
                    }
                }
                e
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_relative_to_the_focused_entity() {
        let mut errors = ValidationErrors::new();
        errors.push("launch_settings[3].parameters.org_id", "bad");
        errors.push("launch_settings[3]", "whole");
        errors.push("launch_settings[30].id", "other entity");
        errors.push("schedule_groups[0].members[1]", "elsewhere");
        let rel = relative_to(errors, Some("launch_settings[3]"));
        let paths: Vec<&str> = rel.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "parameters.org_id",
                "",
                "launch_settings[30].id",
                "schedule_groups[0].members[1]"
            ]
        );
    }
}
