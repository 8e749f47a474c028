//! Bulk actions on selected launch settings and groups: refused whole for the wrong role or an
//! out-of-bounds selection, otherwise each entity acted on alone, its own outcome and audit
//! entry.

use super::{actor, runtime::setup};
use crate::on_both_backends;
use am_domain::read::audit::AuditFilter;
use am_domain::{roles::Role, usage::EntityRef};
use am_services::{
    ServiceError, audit,
    bulk::{self, BulkAction, Done, MAX_SELECTED},
};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

on_both_backends!(
    a_selection_is_refused_whole_for_a_viewer_or_out_of_bounds,
    each_selected_entity_is_acted_on_alone_with_its_own_outcome,
    interrupting_a_group_stops_its_run_and_its_member,
);

fn ls(id: &str) -> EntityRef {
    EntityRef::LaunchSetting(id.into())
}

async fn a_selection_is_refused_whole_for_a_viewer_or_out_of_bounds(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let one = [ls("demo.echo.1")];
    let viewer = bulk::act(
        db,
        &cfg,
        &actor(Role::Viewer),
        &[],
        BulkAction::Disable,
        "t",
    )
    .await;
    assert!(
        matches!(viewer, Err(ServiceError::Forbidden { .. })),
        "the role is checked before the selection: {viewer:?}"
    );
    let op = actor(Role::Operator);
    let too_many: Vec<EntityRef> = (0..=MAX_SELECTED).map(|_| ls("demo.echo.1")).collect();
    for keys in [
        &[][..],
        &too_many[..],
        &[ls("demo.echo.1"), EntityRef::Pool("p".into())][..],
    ] {
        let out = bulk::act(db, &cfg, &op, keys, BulkAction::Disable, "t").await;
        assert!(matches!(out, Err(ServiceError::Invalid(_))), "{out:?}");
    }
    let status = am_services::run_status::of_launch_settings(db, &op, &["demo.echo.1".into()])
        .await
        .expect("status");
    assert_ne!(
        status.get("demo.echo.1").map(|s| s.current.as_str()),
        Some("disabled"),
        "a refused selection changed nothing"
    );
    let done = bulk::act(db, &cfg, &op, &one, BulkAction::Disable, "t").await;
    assert!(
        matches!(done.as_deref(), Ok([Ok(Done::Switched)])),
        "{done:?}"
    );
}

async fn each_selected_entity_is_acted_on_alone_with_its_own_outcome(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let op = actor(Role::Operator);
    let selected = [
        ls("demo.echo.1"),
        ls("no.such.1"),
        EntityRef::ScheduleGroup("demo.nightly".into()),
    ];
    let disabled = bulk::act(db, &cfg, &op, &selected, BulkAction::Disable, "in a test")
        .await
        .expect("a selection in bounds");
    assert!(matches!(disabled[0], Ok(Done::Switched)), "{disabled:?}");
    assert!(
        matches!(disabled[1], Err(ServiceError::NotFound(_))),
        "{disabled:?}"
    );
    assert!(matches!(disabled[2], Ok(Done::Switched)), "{disabled:?}");
    let entries = audit::list(
        db,
        &actor(Role::Admin),
        &AuditFilter {
            entity_id: Some("demo.echo.1".into()),
            entity_type: Some("launch_setting".into()),
            action: Some("update".into()),
            ..AuditFilter::default()
        },
        None,
        10,
    )
    .await
    .expect("audit");
    assert_eq!(
        entries
            .entries
            .iter()
            .map(|e| e.cause.as_deref())
            .collect::<Vec<_>>(),
        [Some(
            "disabled by test-operator in a test, one of 3 selected"
        )]
    );

    let ran = bulk::act(
        db,
        &cfg,
        &op,
        &[ls("demo.echo.1"), ls("demo.sleep.nightly")],
        BulkAction::RunNow,
        "in a test",
    )
    .await
    .expect("a selection in bounds");
    assert!(
        matches!(ran[0], Err(ServiceError::Conflict(_))),
        "a disabled launch setting does not run: {ran:?}"
    );
    let Ok(Done::Started(started)) = ran[1] else {
        panic!("the other one still runs: {ran:?}");
    };

    let stopped = bulk::act(
        db,
        &cfg,
        &op,
        &[
            ls("demo.sleep.nightly"),
            ls("demo.flaky.1"),
            ls("no.such.1"),
        ],
        BulkAction::Interrupt,
        "in a test",
    )
    .await
    .expect("a selection in bounds");
    assert!(
        matches!(&stopped[0], Ok(Done::Interrupted(runs)) if runs == &[started]),
        "{stopped:?}"
    );
    assert!(
        matches!(stopped[1], Err(ServiceError::Conflict(_))),
        "nothing to interrupt is said: {stopped:?}"
    );
    assert!(
        matches!(stopped[2], Err(ServiceError::NotFound(_))),
        "{stopped:?}"
    );
    let run = am_services::activations::summary(db, &op, &started.to_string())
        .await
        .expect("the run");
    assert_eq!(
        run.status, "interrupted",
        "a run without a node ends at once"
    );
}

/// *Interrupt* on a schedule group stops the group's own run (not its members', which it
/// takes with it): the run and its waiting member end at once, no further member starts.
async fn interrupting_a_group_stops_its_run_and_its_member(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    let op = actor(Role::Operator);
    let group = EntityRef::ScheduleGroup("demo.nightly".into());
    let ran = bulk::act(
        db,
        &cfg,
        &op,
        std::slice::from_ref(&group),
        BulkAction::RunNow,
        "in a test",
    )
    .await
    .expect("a selection in bounds");
    let Ok(Done::Started(run)) = ran[0] else {
        panic!("the group runs: {ran:?}");
    };

    let stopped = bulk::act(
        db,
        &cfg,
        &op,
        &[
            group.clone(),
            EntityRef::ScheduleGroup("demo.failing".into()),
        ],
        BulkAction::Interrupt,
        "in a test",
    )
    .await
    .expect("a selection in bounds");
    assert!(
        matches!(&stopped[0], Ok(Done::Interrupted(runs)) if runs == &[run]),
        "only the group's own run is named: {stopped:?}"
    );
    assert!(
        matches!(stopped[1], Err(ServiceError::Conflict(_))),
        "a group not running has nothing to interrupt: {stopped:?}"
    );
    let summary = |id: uuid::Uuid| {
        let op = &op;
        async move {
            am_services::activations::summary(db, op, &id.to_string())
                .await
                .expect("the run")
        }
    };
    assert_eq!(summary(run).await.status, "interrupted");
    let members = am_services::entity::activations::Entity::find()
        .filter(am_services::entity::activations::Column::ParentId.eq(run))
        .all(db)
        .await
        .expect("members");
    assert_eq!(members.len(), 1, "no further member started: {members:?}");
    assert_eq!(members[0].status, "interrupted", "{members:?}");

    let again = bulk::act(db, &cfg, &op, &[group], BulkAction::Interrupt, "in a test")
        .await
        .expect("a selection in bounds");
    assert!(
        matches!(again[0], Err(ServiceError::Conflict(_))),
        "asked again, nothing is left: {again:?}"
    );
}
