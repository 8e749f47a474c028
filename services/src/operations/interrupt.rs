//! What a bulk interrupt selects: the matching activations still waiting, dispatched or
//! running. A member run whose group's run is selected too goes with its group (interrupting
//! the group interrupts its running member), so it is not asked twice.

use crate::{
    Principal,
    entity::activations as activation,
    error::{ServiceError, ServiceResult},
    status,
};
use am_domain::read::activations::ActivationFilter;
use am_domain::roles::Operation;
use sea_orm::DatabaseConnection;
use std::collections::HashSet;
use uuid::Uuid;

/// The activations to interrupt, newest first: exactly `ids` (each must exist) or every one
/// `filter` matches, those still active. Refused when some match and none is active.
pub(super) async fn select(
    db: &DatabaseConnection,
    ids: &[Uuid],
    filter: &ActivationFilter,
) -> ServiceResult<Vec<Uuid>> {
    use activation::Column as C;
    let rows: Vec<(Uuid, Option<Uuid>, String)> = super::selected::activations(
        db,
        ids,
        filter,
        [C::Id, C::ParentId, C::Status],
        |r: &(Uuid, Option<Uuid>, String)| r.0,
    )
    .await?;
    let matched = rows.len();
    let active: Vec<(Uuid, Option<Uuid>)> = rows
        .into_iter()
        .filter(|(_, _, s)| status::activation::ACTIVE.contains(&s.as_str()))
        .map(|(id, parent, _)| (id, parent))
        .collect();
    if active.is_empty() && matched > 0 {
        return Err(ServiceError::Conflict(format!(
            "none of the {matched} matching activations is still waiting or running: \
             nothing to interrupt"
        )));
    }
    let selected: HashSet<Uuid> = active.iter().map(|(id, _)| *id).collect();
    Ok(active
        .into_iter()
        .filter(|(_, parent)| !parent.is_some_and(|p| selected.contains(&p)))
        .map(|(id, _)| id)
        .collect())
}

/// How many activations a bulk interrupt of those matching `filter` would interrupt: the
/// count the question before it shows. Nothing is interrupted.
pub async fn interrupt_count(
    db: &DatabaseConnection,
    actor: &Principal,
    filter: &ActivationFilter,
) -> ServiceResult<u64> {
    actor.require(Operation::Interrupt)?;
    match select(db, &[], filter).await {
        Ok(runs) => Ok(runs.len() as u64),
        // Nothing left running among the matches: nothing to interrupt.
        Err(ServiceError::Conflict(_)) => Ok(0),
        Err(e) => Err(e),
    }
}
