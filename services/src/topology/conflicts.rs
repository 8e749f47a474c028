//! Broker objects held by someone else (docs/protocol.md, *Several managers on one broker*):
//! an exchange this manager never declared that the broker holds with other arguments. The
//! reconciler leaves it alone; it is named on the Broker page and in `/readyz` from the applied
//! state, and told (`broker_conflict`) when a pass first meets it, to the applications whose
//! agents read the data queue of that exchange.

use super::{Refusal, applied};
use crate::{
    catalog,
    entity::data_queues,
    error::ServiceResult,
    notifications::{self, events},
};
use am_domain::topology::ObjectKind;
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QuerySelect,
};

/// Broker objects the last pass found held with other arguments (by another manager on the
/// broker, most often), as `kind name`.
pub async fn conflicts(db: &DatabaseConnection) -> ServiceResult<Vec<String>> {
    let (applied, _) = applied(db).await?;
    Ok(applied
        .refused
        .iter()
        .filter(|r| r.wrong_arguments)
        .map(|r| format!("{} `{}`", r.object.label(), r.name))
        .collect())
}

/// The conflicts of `after` that `before` did not have: what a pass met for the first time.
fn new_conflicts<'a>(before: &[Refusal], after: &'a [Refusal]) -> Vec<&'a Refusal> {
    let known = |r: &Refusal| {
        before
            .iter()
            .any(|b| b.wrong_arguments && b.object == r.object && b.name == r.name)
    };
    after
        .iter()
        .filter(|r| r.wrong_arguments && !known(r))
        .collect()
}

/// Tells the exchanges of `after` held by someone else that `before` did not name, in the
/// caller's transaction (the one that records the pass). A conflict that stays is not told
/// again; one that went away and came back is. Returns how many notifications were queued.
pub(super) async fn tell_new(
    db: &impl ConnectionTrait,
    before: &[Refusal],
    after: &[Refusal],
    at: DateTime<Utc>,
) -> ServiceResult<usize> {
    let mut queued = 0;
    for r in new_conflicts(before, after) {
        // Only data exchanges are named by the catalog, and so shared with other managers;
        // every other name is under this manager's prefix.
        if r.object != ObjectKind::Exchange {
            continue;
        }
        for data_queue in data_queues_at(db, &r.name).await? {
            for app in catalog::applications_reading(db, &data_queue).await? {
                let notice = events::broker_conflict(&r.name, &data_queue, &app, &r.error, at);
                queued += notifications::raise(db, notice, at).await?;
            }
        }
    }
    Ok(queued)
}

/// The data queues whose exchange is `exchange` (its address, or its id without one).
async fn data_queues_at(db: &impl ConnectionTrait, exchange: &str) -> ServiceResult<Vec<String>> {
    use data_queues::Column as D;
    Ok(data_queues::Entity::find()
        .select_only()
        .column(D::Id)
        .filter(
            Condition::any().add(D::Address.eq(exchange)).add(
                Condition::all()
                    .add(D::Address.is_null())
                    .add(D::Id.eq(exchange)),
            ),
        )
        .into_tuple()
        .all(db)
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(object: ObjectKind, name: &str, wrong_arguments: bool) -> Refusal {
        Refusal {
            object,
            name: name.into(),
            wrong_arguments,
            error: "PRECONDITION_FAILED".into(),
        }
    }

    #[test]
    fn only_conflicts_a_pass_meets_for_the_first_time_are_new() {
        let before = [
            refusal(ObjectKind::Exchange, "orders", true),
            refusal(ObjectKind::Exchange, "events", false),
        ];
        let after = [
            refusal(ObjectKind::Exchange, "orders", true),
            refusal(ObjectKind::Exchange, "events", true),
            refusal(ObjectKind::Queue, "orders", true),
            refusal(ObjectKind::Exchange, "audit", false),
        ];
        let new: Vec<(ObjectKind, &str)> = new_conflicts(&before, &after)
            .into_iter()
            .map(|r| (r.object, r.name.as_str()))
            .collect();
        // `events` was refused before for another reason: a conflict now, so it is new; a
        // queue of the same name as a known exchange is another object.
        assert_eq!(
            new,
            [
                (ObjectKind::Exchange, "events"),
                (ObjectKind::Queue, "orders")
            ]
        );
        assert!(new_conflicts(&after, &after).is_empty());
    }
}
