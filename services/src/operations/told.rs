//! Who hears that an operation finished: the applications it touched, found when it starts
//! (a delete removes the dead letters that would tell later), told with `operation_finished`
//! in the transaction that records its end (docs/notifications.md).

use super::{OperationRequest, Stored};
use crate::{
    dead_letters,
    entity::{
        activations, dead_letters as dead_letters_entity, launch_settings, operations,
        schedule_groups,
    },
    error::ServiceResult,
    notifications,
    runtime::CHUNK,
};
use am_domain::{
    links,
    notify::{Counts, Event, Notice},
    usage::EntityRef,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect,
};
use std::collections::BTreeSet;
use uuid::Uuid;

/// The applications an operation touches: those of its launch settings, groups, re-run
/// activations and dead letters, and of the agents that read an unrouted replay's data queue.
/// A consistency sweep belongs to none.
pub(super) async fn applications(
    db: &DatabaseConnection,
    request: &OperationRequest,
    items: &[EntityRef],
    runs: &[Uuid],
) -> ServiceResult<Vec<String>> {
    let mut apps = BTreeSet::new();
    let mut settings = BTreeSet::new();
    let mut groups = Vec::new();
    for item in items {
        match item {
            EntityRef::LaunchSetting(id) => {
                settings.insert(id.clone());
            }
            EntityRef::ScheduleGroup(id) => groups.push(id.clone()),
            EntityRef::Application(id)
            | EntityRef::Agent {
                application: id, ..
            }
            | EntityRef::Classifier {
                application: id, ..
            } => {
                apps.insert(id.clone());
            }
            EntityRef::Pool(_) | EntityRef::DataQueue(_) => {}
        }
    }
    if let OperationRequest::ReplayUnrouted { data_queue } = request {
        apps.extend(crate::catalog::applications_reading(db, data_queue).await?);
    }
    if let OperationRequest::ReplayDeadLetters { selection, .. }
    | OperationRequest::DeleteDeadLetters { selection } = request
    {
        let found: Vec<Option<String>> = dead_letters_entity::Entity::find()
            .select_only()
            .column(dead_letters_entity::Column::LaunchSettingId)
            .distinct()
            .filter(dead_letters::selected(selection)?)
            .into_tuple()
            .all(db)
            .await?;
        settings.extend(found.into_iter().flatten());
    }
    let settings: Vec<String> = settings.into_iter().collect();
    for chunk in settings.chunks(CHUNK) {
        let found: Vec<String> = launch_settings::Entity::find()
            .select_only()
            .column(launch_settings::Column::ApplicationId)
            .distinct()
            .filter(launch_settings::Column::Id.is_in(chunk.iter().cloned()))
            .into_tuple()
            .all(db)
            .await?;
        apps.extend(found);
    }
    for chunk in groups.chunks(CHUNK) {
        let found: Vec<String> = schedule_groups::Entity::find()
            .select_only()
            .column(schedule_groups::Column::ApplicationId)
            .distinct()
            .filter(schedule_groups::Column::Id.is_in(chunk.iter().cloned()))
            .into_tuple()
            .all(db)
            .await?;
        apps.extend(found);
    }
    for chunk in runs.chunks(CHUNK) {
        let found: Vec<Option<String>> = activations::Entity::find()
            .select_only()
            .column(activations::Column::ApplicationId)
            .distinct()
            .filter(activations::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(db)
            .await?;
        apps.extend(found.into_iter().flatten());
    }
    Ok(apps.into_iter().collect())
}

/// The notice of an operation that ended as `op` records it.
pub fn finished_notice(op: &operations::Model, application: &str, at: DateTime<Utc>) -> Notice {
    let failed = if op.failed > 0 {
        format!(", {} failed", op.failed)
    } else {
        String::new()
    };
    let mut n = Notice::new(
        Event::OperationFinished,
        at,
        format!(
            "Operation {} ({}) by {} {}: {} of {} done{failed}.",
            op.id, op.kind, op.requested_by, op.status, op.done, op.total
        ),
        &links::operation(&op.id.to_string()),
    );
    n.application = Some(application.to_owned());
    n.operation = Some(op.id.to_string());
    n.action = Some(op.status.clone());
    n.reason = Some(format!("requested by {}", op.requested_by));
    n.counts = Some(Counts {
        total: op.total,
        done: op.done,
        failed: op.failed,
    });
    n
}

/// Tells each application the operation touched that it ended, in `txn`, which records the end.
pub(super) async fn tell(
    txn: &impl ConnectionTrait,
    op: &operations::Model,
    at: DateTime<Utc>,
) -> ServiceResult<()> {
    let stored: Option<Stored> = serde_json::from_value(op.params.clone()).ok();
    for app in stored.map(|s| s.applications).unwrap_or_default() {
        notifications::raise(txn, finished_notice(op, &app, at), at).await?;
    }
    Ok(())
}
