//! Re-running a failed activation from where it broke: a group from its failed member (or any
//! member), a `MANY` run only on the hosts that failed, or on another host of the pool.

use super::{
    actor,
    runtime::{activation, apply, finished, hosts_of, node_up, report, setup},
};
use crate::on_both_backends;
use am_domain::{
    catalog::Concurrency, read::operations::OperationRequest, roles::Role, usage::EntityRef,
    wire::ActivationResult,
};
use am_services::{
    ServiceError, Services, Settings, catalog,
    entity::{activation_events, activations},
    health::BrokerStatus,
    operations::{self, RunEnd, status},
    runtime::{
        RuntimeConfig,
        run::{Rerun, choices, rerun, run_now},
    },
};
use chrono::Utc;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use uuid::Uuid;

on_both_backends!(
    a_failed_group_is_rerun_from_its_failed_member_or_any_other,
    a_many_run_is_rerun_on_the_hosts_that_failed_or_on_another,
    a_bulk_rerun_starts_each_from_where_it_broke,
);

async fn members(db: &DatabaseConnection, group_run: Uuid) -> Vec<activations::Model> {
    activations::Entity::find()
        .filter(activations::Column::ParentId.eq(group_run))
        .order_by_asc(activations::Column::Position)
        .all(db)
        .await
        .expect("members")
}

async fn events(db: &DatabaseConnection, a: Uuid) -> Vec<(String, String)> {
    activation_events::Entity::find()
        .filter(activation_events::Column::ActivationId.eq(a))
        .order_by_asc(activation_events::Column::Id)
        .all(db)
        .await
        .expect("events")
        .into_iter()
        .map(|e| (e.kind, e.detail.unwrap_or_default()))
        .collect()
}

/// Ends the run of `member` on its host with `result`.
async fn end(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    member: &activations::Model,
    result: ActivationResult,
) {
    let host = hosts_of(db, member.id).await[0].host.clone();
    let ls = member.launch_setting_id.clone().expect("a launch setting");
    apply(
        db,
        cfg,
        &[report(&host, member.id, &ls, 1, finished(result))],
        Utc::now(),
    )
    .await;
}

fn from(member: &str) -> Rerun {
    Rerun {
        from_member: Some(member.into()),
        ..Rerun::default()
    }
}

async fn a_failed_group_is_rerun_from_its_failed_member_or_any_other(db: &DatabaseConnection) {
    let cfg = setup(db).await;
    node_up(db, "demo-a", Utc::now()).await;
    let operator = actor(Role::Operator);
    let group = EntityRef::ScheduleGroup("demo.nightly".into());
    let first = run_now(db, &cfg, &operator, &group).await.expect("runs");

    let e = rerun(db, &cfg, &operator, &first.to_string(), &Rerun::default())
        .await
        .expect_err("still running");
    assert!(matches!(e, ServiceError::Conflict(_)), "{e:?}");

    end(
        db,
        &cfg,
        &members(db, first).await[0],
        ActivationResult::Succeeded,
    )
    .await;
    end(
        db,
        &cfg,
        &members(db, first).await[1],
        ActivationResult::Failed,
    )
    .await;
    assert_eq!(activation(db, first).await.status, "failed");

    let e = rerun(
        db,
        &cfg,
        &actor(Role::Viewer),
        &first.to_string(),
        &Rerun::default(),
    )
    .await
    .expect_err("viewers may not");
    assert!(matches!(e, ServiceError::Forbidden { .. }), "{e:?}");
    let e = rerun(
        db,
        &cfg,
        &operator,
        &first.to_string(),
        &from("demo.fail.nightly"),
    )
    .await
    .expect_err("not a member");
    let ServiceError::Invalid(errors) = e else {
        panic!("{e:?}")
    };
    assert_eq!(errors.0[0].path, "from_member");
    assert!(
        errors.0[0]
            .message
            .contains("demo.sleep.nightly, demo.echo.drain"),
        "{errors:?}"
    );
    let e = rerun(
        db,
        &cfg,
        &operator,
        &first.to_string(),
        &Rerun {
            only_failed_hosts: true,
            ..Rerun::default()
        },
    )
    .await
    .expect_err("hosts are the group's choice");
    assert!(matches!(e, ServiceError::Invalid(_)), "{e:?}");

    let offered = choices(db, &cfg, &operator, &first.to_string())
        .await
        .expect("choices")
        .expect("an operator may re-run an ended activation");
    assert_eq!(offered.members, ["demo.sleep.nightly", "demo.echo.drain"]);
    assert_eq!(offered.from, Some(1), "from the member that failed");
    let viewer = choices(db, &cfg, &actor(Role::Viewer), &first.to_string()).await;
    assert_eq!(viewer.expect("viewers may look"), None);

    // By default from the member that failed: the one that succeeded does not run again.
    let second = rerun(db, &cfg, &operator, &first.to_string(), &Rerun::default())
        .await
        .expect("re-runs");
    let runs = members(db, second).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(
        runs[0].launch_setting_id.as_deref(),
        Some("demo.echo.drain")
    );
    assert_eq!(runs[0].position, Some(1));
    let rerun_row = activation(db, second).await;
    assert_eq!(rerun_row.trigger, "rerun");
    assert_eq!(rerun_row.group_id.as_deref(), Some("demo.nightly"));
    assert!(
        events(db, first)
            .await
            .contains(&("rerun".into(), format!("re-run as {second}")))
    );
    let theirs = events(db, second).await;
    assert!(
        theirs.contains(&("rerun-of".into(), format!("re-run of {first}"))),
        "{theirs:?}"
    );
    assert!(
        theirs.contains(&(
            "rerun-from".into(),
            "from member demo.echo.drain (2 of 2)".into()
        )),
        "{theirs:?}"
    );
    end(db, &cfg, &runs[0], ActivationResult::Succeeded).await;
    assert_eq!(activation(db, second).await.status, "succeeded");

    // Every member succeeded now: a re-run must say where to start.
    let e = rerun(db, &cfg, &operator, &second.to_string(), &Rerun::default())
        .await
        .expect_err("nothing failed");
    assert!(matches!(e, ServiceError::Conflict(_)), "{e:?}");
    // From any member; a member run re-runs its group from that member.
    let third = rerun(
        db,
        &cfg,
        &operator,
        &second.to_string(),
        &from("demo.sleep.nightly"),
    )
    .await
    .expect("re-runs");
    assert_eq!(members(db, third).await[0].position, Some(0));
    end(
        db,
        &cfg,
        &members(db, third).await[0],
        ActivationResult::Failed,
    )
    .await;
    let failed_member = members(db, third).await[0].id;
    let fourth = rerun(
        db,
        &cfg,
        &operator,
        &failed_member.to_string(),
        &Rerun::default(),
    )
    .await
    .expect("re-runs the member's group");
    let runs = members(db, fourth).await;
    assert_eq!(
        runs[0].launch_setting_id.as_deref(),
        Some("demo.sleep.nightly")
    );
    assert_eq!(
        activation(db, fourth).await.group_id.as_deref(),
        Some("demo.nightly")
    );
}

/// The demo catalog with the `fail` agent in `MANY` mode (its launch setting runs on every
/// host of its pool) and two live nodes.
async fn many_setup(db: &DatabaseConnection) -> RuntimeConfig {
    let cfg = setup(db).await;
    let admin = actor(Role::Admin);
    let mut c = catalog::export(db, &admin).await.expect("export");
    c.agents
        .iter_mut()
        .find(|a| a.id == "fail")
        .expect("the fail agent")
        .concurrency = Concurrency::Many;
    catalog::import(db, &admin, c).await.expect("import");
    let now = Utc::now();
    node_up(db, "demo-a", now).await;
    node_up(db, "demo-b", now).await;
    cfg
}

/// A run of the `MANY` launch setting that succeeded on demo-a and failed on demo-b.
async fn many_failed_on_b(db: &DatabaseConnection, cfg: &RuntimeConfig) -> Uuid {
    let ls = "demo.fail.nightly";
    let run = run_now(
        db,
        cfg,
        &actor(Role::Operator),
        &EntityRef::LaunchSetting(ls.into()),
    )
    .await
    .expect("runs");
    assert_eq!(hosts_of(db, run).await.len(), 2, "MANY: on both hosts");
    apply(
        db,
        cfg,
        &[
            report("demo-a", run, ls, 1, finished(ActivationResult::Succeeded)),
            report("demo-b", run, ls, 1, finished(ActivationResult::Failed)),
        ],
        Utc::now(),
    )
    .await;
    assert_eq!(activation(db, run).await.status, "failed");
    run
}

async fn a_many_run_is_rerun_on_the_hosts_that_failed_or_on_another(db: &DatabaseConnection) {
    let cfg = many_setup(db).await;
    let now = Utc::now();
    let operator = actor(Role::Operator);
    let ls = "demo.fail.nightly";
    let first = many_failed_on_b(db, &cfg).await;

    let offered = choices(db, &cfg, &operator, &first.to_string())
        .await
        .expect("choices")
        .expect("offered");
    assert_eq!(offered.failed_hosts, ["demo-b"]);
    assert_eq!(offered.pool_hosts, ["demo-a", "demo-b"]);
    assert!(offered.members.is_empty());

    let only_failed = Rerun {
        only_failed_hosts: true,
        ..Rerun::default()
    };
    let second = rerun(db, &cfg, &operator, &first.to_string(), &only_failed)
        .await
        .expect("re-runs");
    let hosts: Vec<String> = hosts_of(db, second)
        .await
        .into_iter()
        .map(|h| h.host)
        .collect();
    assert_eq!(hosts, ["demo-b"], "only where it failed");
    assert_eq!(activation(db, second).await.trigger, "rerun");
    apply(
        db,
        &cfg,
        &[report(
            "demo-b",
            second,
            ls,
            1,
            finished(ActivationResult::Succeeded),
        )],
        now,
    )
    .await;
    let e = rerun(db, &cfg, &operator, &second.to_string(), &only_failed)
        .await
        .expect_err("no host failed");
    assert!(matches!(e, ServiceError::Conflict(_)), "{e:?}");

    // On another node of the pool; a host that is not live is refused, not waited for.
    let third = rerun(
        db,
        &cfg,
        &operator,
        &first.to_string(),
        &Rerun {
            host: Some("demo-a".into()),
            ..Rerun::default()
        },
    )
    .await
    .expect("re-runs on demo-a");
    let hosts: Vec<String> = hosts_of(db, third)
        .await
        .into_iter()
        .map(|h| h.host)
        .collect();
    assert_eq!(hosts, ["demo-a"]);
    let e = rerun(
        db,
        &cfg,
        &operator,
        &first.to_string(),
        &Rerun {
            host: Some("demo-z".into()),
            ..Rerun::default()
        },
    )
    .await
    .expect_err("no such live node");
    assert!(
        matches!(&e, ServiceError::Conflict(m) if m.contains("demo-z")),
        "{e:?}"
    );
    let e = rerun(
        db,
        &cfg,
        &operator,
        &first.to_string(),
        &from("demo.fail.nightly"),
    )
    .await
    .expect_err("not a group's");
    assert!(matches!(e, ServiceError::Invalid(_)), "{e:?}");
}

async fn a_bulk_rerun_starts_each_from_where_it_broke(db: &DatabaseConnection) {
    let cfg = many_setup(db).await;
    let services = Services::new(db.clone(), BrokerStatus::default(), Settings::default())
        .with_runtime(cfg.clone());
    let operator = actor(Role::Operator);
    let many = many_failed_on_b(db, &cfg).await;
    let group = run_now(
        db,
        &cfg,
        &operator,
        &EntityRef::ScheduleGroup("demo.nightly".into()),
    )
    .await
    .expect("runs");
    end(
        db,
        &cfg,
        &members(db, group).await[0],
        ActivationResult::Succeeded,
    )
    .await;
    let failed_member = members(db, group).await[1].clone();
    end(db, &cfg, &failed_member, ActivationResult::Failed).await;
    assert_eq!(activation(db, group).await.status, "failed");

    // The group's run and its failed member's run stand for one re-run of the group.
    let started = operations::start(
        &services,
        &operator,
        OperationRequest::RerunActivations {
            ids: vec![many, failed_member.id, group],
            filter: Default::default(),
            from_where_it_broke: true,
        },
    )
    .await
    .expect("starts");
    assert_eq!(started.total, 2, "one re-run per launch setting or group");
    assert_eq!(
        operations::run(db, &cfg, started.id, &super::operations::NoBroker)
            .await
            .expect("runs"),
        RunEnd::Finished(status::SUCCEEDED)
    );
    let reruns: Vec<activations::Model> = activations::Entity::find()
        .filter(activations::Column::Trigger.eq("rerun"))
        .filter(activations::Column::ParentId.is_null())
        .all(db)
        .await
        .expect("read");
    assert_eq!(reruns.len(), 2, "{reruns:?}");
    let ls_rerun = reruns
        .iter()
        .find(|a| a.group_id.is_none())
        .expect("the MANY launch setting's re-run");
    let hosts: Vec<String> = hosts_of(db, ls_rerun.id)
        .await
        .into_iter()
        .map(|h| h.host)
        .collect();
    assert_eq!(hosts, ["demo-b"], "only on the host that failed");
    let group_rerun = reruns
        .iter()
        .find(|a| a.group_id.is_some())
        .expect("the group's re-run");
    let runs = members(db, group_rerun.id).await;
    assert_eq!(
        runs.len(),
        1,
        "the member that succeeded does not run again"
    );
    assert_eq!(
        runs[0].launch_setting_id.as_deref(),
        Some("demo.echo.drain")
    );
    assert!(
        events(db, group)
            .await
            .contains(&("rerun".into(), format!("re-run as {}", group_rerun.id)))
    );

    // Nothing broke in a selection of successes: refused, the field named, nothing recorded.
    end(db, &cfg, &runs[0], ActivationResult::Succeeded).await;
    let e = operations::start(
        &services,
        &operator,
        OperationRequest::RerunActivations {
            ids: vec![group_rerun.id],
            filter: Default::default(),
            from_where_it_broke: true,
        },
    )
    .await
    .expect_err("nothing broke");
    let ServiceError::Invalid(errors) = e else {
        panic!("{e:?}")
    };
    assert_eq!(errors.0[0].path, "from_where_it_broke");
}
