//! Reading activations for the console and the API: a filtered list, newest first, and one
//! activation with its member runs (for a group), its dispatch to each host, its timeline per
//! host and its failures.

use crate::{
    Principal,
    entity::{activation_events, activation_hosts, activations, failure_logs},
    error::{ServiceError, ServiceResult},
    failures, filters, status,
};
use am_domain::read::activations::{
    ActivationDetail, ActivationFilter, ActivationPage, ActivationSummary, HostRun, HostTimeline,
    TimelineEvent,
};
use am_domain::roles::Operation;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Select,
    sea_query::{Asterisk, Expr, ExprTrait, Query},
};
use std::collections::HashMap;
use uuid::Uuid;

/// Activations per page unless asked otherwise.
pub const PAGE: u64 = 50;
/// Largest page.
pub const MAX_PAGE: u64 = 200;
/// Failures an activation's page shows (the drill-down has them all).
pub const RECENT_FAILURES: u64 = 20;

/// The status filter's word for the activations not ended yet (waiting, dispatched or running):
/// what the dashboard's *Active runs* counts.
pub const ACTIVE: &str = "active";

/// What the status filter takes: [`ACTIVE`] or one of [`STATUSES`].
pub fn filter_statuses() -> impl Iterator<Item = &'static str> {
    std::iter::once(ACTIVE).chain(STATUSES)
}

/// Every status an activation can have.
pub const STATUSES: [&str; 7] = [
    status::activation::WAITING,
    status::activation::DISPATCHED,
    status::activation::RUNNING,
    status::activation::SUCCEEDED,
    status::activation::FAILED,
    status::activation::INTERRUPTED,
    status::activation::SKIPPED,
];

/// The activations `filter` selects, unordered; bulk operations select the same rows as the
/// list the operator searched.
pub fn matching(filter: &ActivationFilter) -> ServiceResult<Select<activations::Entity>> {
    use activations::Column as C;
    let (from, to) = filters::range(&filter.from, &filter.to)?;
    let mut q = activations::Entity::find();
    if let Some(ls) = filters::text(&filter.launch_setting) {
        q = q.filter(C::LaunchSettingId.eq(ls));
    }
    if let Some(g) = filters::text(&filter.group) {
        q = q.filter(C::GroupId.eq(g));
    }
    if let Some(a) = filters::text(&filter.application) {
        q = q.filter(C::ApplicationId.eq(a));
    }
    if let Some(s) = filters::text(&filter.status) {
        if !filter_statuses().any(|f| f == s) {
            return Err(ServiceError::invalid(
                "status",
                format!(
                    "unknown status `{s}`; one of {}",
                    filter_statuses().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        q = q.filter(if s == ACTIVE {
            C::Status.is_in(status::activation::ACTIVE)
        } else {
            C::Status.eq(s)
        });
    }
    if let Some(h) = filters::text(&filter.host) {
        q = q.filter(
            C::Id.in_subquery(
                Query::select()
                    .column(activation_hosts::Column::ActivationId)
                    .from(activation_hosts::Entity)
                    .and_where(Expr::col(activation_hosts::Column::Host).eq(h))
                    .to_owned(),
            ),
        );
    }
    if let Some(e) = filters::text(&filter.error_type) {
        let failed_with = Query::select()
            .column(failure_logs::Column::ActivationId)
            .from(failure_logs::Entity)
            .and_where(Expr::col(failure_logs::Column::ErrorType).eq(e))
            .cond_where(failures::kinds::real_failures())
            .to_owned();
        let parents_of = Query::select()
            .column(C::ParentId)
            .from(activations::Entity)
            .and_where(Expr::col(C::Id).in_subquery(failed_with.clone()))
            .to_owned();
        q = q.filter(
            Condition::any()
                .add(C::Id.in_subquery(failed_with))
                .add(C::Id.in_subquery(parents_of)),
        );
    }
    if let Some(t) = from {
        q = q.filter(C::CreatedAt.gte(t));
    }
    if let Some(t) = to {
        q = q.filter(C::CreatedAt.lt(t));
    }
    if filter.top_level == Some(true) {
        q = q.filter(C::ParentId.is_null());
    }
    Ok(q)
}

/// Activations matching `filter`, newest first; `page` is one-based.
pub async fn list(
    db: &impl ConnectionTrait,
    actor: &Principal,
    filter: &ActivationFilter,
    page: Option<u64>,
    limit: Option<u64>,
) -> ServiceResult<ActivationPage> {
    use activations::Column as C;
    actor.require(Operation::Read)?;
    let limit = filters::limit(limit, PAGE, MAX_PAGE);
    let (page, offset) = filters::page(page, limit)?;
    let q = matching(filter)?;
    let total = q.clone().count(db).await?;
    let mut rows = q
        .order_by_desc(C::CreatedAt)
        .order_by_desc(C::Id)
        .offset(offset)
        .limit(limit + 1)
        .all(db)
        .await?;
    let has_more = rows.len() as u64 > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    Ok(ActivationPage {
        items: summaries(db, rows).await?,
        total,
        page,
        limit,
        has_more,
    })
}

/// One activation as lists show it (status, hosts, failures), without its timeline: what a
/// page polls to show the outcome of a re-run or an interrupt.
pub async fn summary(
    db: &impl ConnectionTrait,
    actor: &Principal,
    id: &str,
) -> ServiceResult<ActivationSummary> {
    actor.require(Operation::Read)?;
    let not_found = || ServiceError::NotFound(format!("activation '{id}'"));
    let uuid = Uuid::parse_str(id.trim()).map_err(|_| not_found())?;
    let row = activations::Entity::find_by_id(uuid)
        .one(db)
        .await?
        .ok_or_else(not_found)?;
    summaries(db, vec![row]).await?.pop().ok_or_else(not_found)
}

/// One activation: its member runs (for a group activation), its timeline per host with each
/// host's dispatches, and its failures.
pub async fn get(
    db: &impl ConnectionTrait,
    actor: &Principal,
    id: &str,
) -> ServiceResult<ActivationDetail> {
    actor.require(Operation::Read)?;
    let not_found = || ServiceError::NotFound(format!("activation '{id}'"));
    let uuid = Uuid::parse_str(id.trim()).map_err(|_| not_found())?;
    let row = activations::Entity::find_by_id(uuid)
        .one(db)
        .await?
        .ok_or_else(not_found)?;
    let members = activations::Entity::find()
        .filter(activations::Column::ParentId.eq(uuid))
        .order_by_asc(activations::Column::Position)
        .order_by_asc(activations::Column::CreatedAt)
        .all(db)
        .await?;
    let mut ids = vec![uuid];
    ids.extend(members.iter().map(|m| m.id));
    let failures = failures::of_activations(db, &ids, RECENT_FAILURES).await?;
    let mut summaries = summaries(db, std::iter::once(row).chain(members).collect()).await?;
    let activation = summaries.remove(0);

    let runs = activation_hosts::Entity::find()
        .filter(activation_hosts::Column::ActivationId.eq(uuid))
        .order_by_asc(activation_hosts::Column::Attempt)
        .order_by_asc(activation_hosts::Column::Host)
        .all(db)
        .await?;
    let events = activation_events::Entity::find()
        .filter(activation_events::Column::ActivationId.eq(uuid))
        .order_by_asc(activation_events::Column::At)
        .order_by_asc(activation_events::Column::Id)
        .all(db)
        .await?;
    let per_host: HashMap<String, i64> = failure_logs::Entity::find()
        .select_only()
        .column(failure_logs::Column::Host)
        .column_as(Expr::col(Asterisk).count(), "n")
        .filter(failure_logs::Column::ActivationId.eq(uuid))
        .filter(failures::kinds::real_failures())
        .group_by(failure_logs::Column::Host)
        .into_tuple::<(String, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    Ok(ActivationDetail {
        activation,
        members: summaries,
        timeline: timeline(runs, events, per_host),
        failures,
    })
}

/// Events and dispatches grouped by host: the manager's lane (no host) first, then the hosts
/// in the order they first appear.
fn timeline(
    runs: Vec<activation_hosts::Model>,
    events: Vec<activation_events::Model>,
    failures: HashMap<String, i64>,
) -> Vec<HostTimeline> {
    let mut lanes: Vec<HostTimeline> = vec![HostTimeline {
        host: None,
        runs: vec![],
        events: vec![],
        failures: 0,
    }];
    fn lane(lanes: &mut Vec<HostTimeline>, host: Option<String>) -> &mut HostTimeline {
        let i = match lanes.iter().position(|l| l.host == host) {
            Some(i) => i,
            None => {
                lanes.push(HostTimeline {
                    host,
                    runs: vec![],
                    events: vec![],
                    failures: 0,
                });
                lanes.len() - 1
            }
        };
        &mut lanes[i]
    }
    for e in events {
        lane(&mut lanes, e.host).events.push(TimelineEvent {
            at: e.at,
            kind: e.kind,
            detail: e.detail,
        });
    }
    for r in runs {
        lane(&mut lanes, Some(r.host.clone())).runs.push(HostRun {
            host: r.host,
            application: r.application_id,
            attempt: r.attempt,
            fencing_token: r.fencing_token,
            status: r.status,
            dispatched_at: r.dispatched_at,
            accepted_at: r.accepted_at,
            started_at: r.started_at,
            last_heartbeat_at: r.last_heartbeat_at,
            finished_at: r.finished_at,
            stop_requested_at: r.stop_requested_at,
            processed: r.processed,
            failed: r.failed,
            retried: r.retried,
            dead_lettered: r.dead_lettered,
            error: r.error,
        });
    }
    for (host, n) in failures {
        lane(&mut lanes, Some(host)).failures = u64::try_from(n).unwrap_or(0);
    }
    lanes.retain(|l| l.host.is_some() || !l.events.is_empty());
    lanes
}

/// Rows as summaries, with their hosts and failure counts (a group activation counts the
/// failures of its member runs), in the order given.
async fn summaries(
    db: &impl ConnectionTrait,
    rows: Vec<activations::Model>,
) -> ServiceResult<Vec<ActivationSummary>> {
    if rows.is_empty() {
        return Ok(vec![]);
    }
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let mut hosts: HashMap<Uuid, Vec<String>> = HashMap::new();
    for (a, h) in activation_hosts::Entity::find()
        .select_only()
        .columns([
            activation_hosts::Column::ActivationId,
            activation_hosts::Column::Host,
        ])
        .filter(activation_hosts::Column::ActivationId.is_in(ids.iter().copied()))
        .into_tuple::<(Uuid, String)>()
        .all(db)
        .await?
    {
        let list = hosts.entry(a).or_default();
        if !list.contains(&h) {
            list.push(h);
        }
    }
    // Group activations report through their member runs.
    let groups: Vec<Uuid> = rows
        .iter()
        .filter(|r| r.parent_id.is_none() && r.group_id.is_some())
        .map(|r| r.id)
        .collect();
    let mut parent_of: HashMap<Uuid, Uuid> = HashMap::new();
    if !groups.is_empty() {
        for (member, parent) in activations::Entity::find()
            .select_only()
            .columns([activations::Column::Id, activations::Column::ParentId])
            .filter(activations::Column::ParentId.is_in(groups))
            .into_tuple::<(Uuid, Option<Uuid>)>()
            .all(db)
            .await?
        {
            if let Some(parent) = parent {
                parent_of.insert(member, parent);
            }
        }
    }
    let mut counted: Vec<Uuid> = ids.clone();
    counted.extend(parent_of.keys().filter(|m| !ids.contains(m)));
    let mut failures: HashMap<Uuid, u64> = HashMap::new();
    for (a, n) in failure_logs::Entity::find()
        .select_only()
        .column(failure_logs::Column::ActivationId)
        .column_as(Expr::col(Asterisk).count(), "n")
        .filter(failure_logs::Column::ActivationId.is_in(counted))
        .filter(failures::kinds::real_failures())
        .group_by(failure_logs::Column::ActivationId)
        .into_tuple::<(Uuid, i64)>()
        .all(db)
        .await?
    {
        let n = u64::try_from(n).unwrap_or(0);
        *failures.entry(a).or_default() += n;
        if let Some(parent) = parent_of.get(&a) {
            *failures.entry(*parent).or_default() += n;
        }
    }
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut h = hosts.remove(&r.id).unwrap_or_default();
            h.sort();
            ActivationSummary {
                failures: failures.get(&r.id).copied().unwrap_or(0),
                hosts: h,
                id: r.id,
                launch_setting: r.launch_setting_id,
                group: r.group_id,
                parent: r.parent_id,
                position: r.position,
                application: r.application_id,
                trigger: r.trigger,
                status: r.status,
                requested_by: r.requested_by,
                created_at: r.created_at,
                started_at: r.started_at,
                finished_at: r.finished_at,
                error: r.error,
            }
        })
        .collect())
}
