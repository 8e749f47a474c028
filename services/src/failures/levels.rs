//! The grouped levels of the drill-down: launch settings, the activations of one, the hosts of
//! one activation.

use super::{
    ACTIVATIONS_PAGE, ActivationFailures, ActivationFailuresPage, ActivationGroup,
    ActivationHostFailures, ActivationHostType, ErrorTypeCount, FailureFilter, HostCount,
    HostFailures, Id, KeyCount, LAUNCH_SETTINGS_PAGE, LaunchSettingFailures,
    LaunchSettingFailuresPage, MAX_PAGE, Scope, Span, count, kind_counts, merge, queries, sorted,
    total, type_counts,
};
use crate::{
    Principal,
    entity::{activation_hosts, activations, failure_logs, launch_settings},
    error::{ServiceError, ServiceResult},
    filters,
};
use am_domain::roles::Operation;
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter, QuerySelect,
};
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

/// Counts by error type of each of `ids` (launch settings) in `scope`.
async fn launch_setting_counts(
    db: &impl ConnectionTrait,
    scope: &Scope,
    ids: &[String],
) -> ServiceResult<HashMap<String, Vec<ErrorTypeCount>>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let stmt = queries::launch_setting_counts(db.get_database_backend(), scope, ids);
    let mut by_ls: HashMap<String, BTreeMap<String, u64>> = HashMap::new();
    for r in KeyCount::find_by_statement(stmt).all(db).await? {
        by_ls
            .entry(r.key)
            .or_default()
            .insert(r.error_type, count(r.n));
    }
    Ok(by_ls.into_iter().map(|(k, v)| (k, sorted(v))).collect())
}

type Spans = HashMap<String, (Option<DateTime<Utc>>, Option<DateTime<Utc>>)>;

async fn spans(db: &impl ConnectionTrait, stmt: sea_orm::Statement) -> ServiceResult<Spans> {
    Ok(Span::find_by_statement(stmt)
        .all(db)
        .await?
        .into_iter()
        .map(|s| (s.key, (s.first_at, s.last_at)))
        .collect())
}

/// First level: launch settings with failures matching the filter, by id, `limit` per page
/// after the cursor `after` (a launch-setting id). A launch setting in the filter shows only it.
pub async fn launch_settings(
    db: &impl ConnectionTrait,
    actor: &Principal,
    filter: &FailureFilter,
    after: Option<&str>,
    limit: Option<u64>,
) -> ServiceResult<LaunchSettingFailuresPage> {
    actor.require(Operation::Read)?;
    let mut scope = Scope::of(filter)?;
    // The launch setting is this level's key; an activation is no filter of it.
    scope.activation = None;
    let backend = db.get_database_backend();
    let limit = usize::try_from(filters::limit(limit, LAUNCH_SETTINGS_PAGE, MAX_PAGE)).unwrap_or(1);
    let mut found: Vec<(String, Vec<ErrorTypeCount>)> = Vec::new();
    let mut has_more = false;
    if let Some(ls) = scope.launch_setting.clone() {
        let counts = launch_setting_counts(db, &scope, std::slice::from_ref(&ls)).await?;
        found.extend(counts);
    } else {
        let mut cursor = after.map(str::trim).unwrap_or_default().to_owned();
        loop {
            // Unfiltered, every id has failures: count the page and probe one more id.
            // Filtered, some may have none: count whole batches until the page is full.
            let want = limit + 1;
            let batch =
                Id::find_by_statement(queries::next_launch_settings(backend, &cursor, want as u64))
                    .all(db)
                    .await?;
            let exhausted = batch.len() < want;
            let Some(last) = batch.last().map(|i| i.id.clone()) else {
                break;
            };
            let mut counted: Vec<String> = batch.into_iter().map(|i| i.id).collect();
            if !scope.narrowed() {
                has_more = counted.len() > limit;
                counted.truncate(limit);
            }
            let mut counts = launch_setting_counts(db, &scope, &counted).await?;
            found.extend(
                counted
                    .into_iter()
                    .filter_map(|id| counts.remove(&id).map(|c| (id, c))),
            );
            if found.len() > limit {
                found.truncate(limit);
                has_more = true;
            }
            if !scope.narrowed() || has_more || exhausted {
                break;
            }
            cursor = last;
        }
    }
    let ids: Vec<String> = found.iter().map(|(id, _)| id.clone()).collect();
    let mut spans = if ids.is_empty() {
        Spans::new()
    } else {
        spans(db, queries::launch_setting_spans(backend, &scope, &ids)).await?
    };
    // The kinds of the page's launch settings; of the one the filter names even when it has
    // no report of the kind shown (its other reports are what the operator looks for).
    let counted = match &scope.launch_setting {
        Some(ls) => std::slice::from_ref(ls),
        None => ids.as_slice(),
    };
    let kinds = if counted.is_empty() {
        Default::default()
    } else {
        kind_counts(
            db,
            queries::launch_setting_kind_counts(backend, &scope, counted),
        )
        .await?
    };
    let catalog: HashMap<String, (String, String)> = launch_settings::Entity::find()
        .select_only()
        .columns([
            launch_settings::Column::Id,
            launch_settings::Column::ApplicationId,
            launch_settings::Column::AgentId,
        ])
        .filter(launch_settings::Column::Id.is_in(ids.iter().cloned()))
        .into_tuple::<(String, String, String)>()
        .all(db)
        .await?
        .into_iter()
        .map(|(id, app, agent)| (id, (app, agent)))
        .collect();
    // The newest matching failure of each: one short index range per launch setting.
    let mut last_errors: HashMap<String, am_domain::failing::LastFailure> = HashMap::new();
    for ls in &ids {
        let of_ls = Scope {
            launch_setting: Some(ls.clone()),
            ..scope.clone()
        };
        if let Some(f) = failure_logs::Entity::find()
            .from_raw_sql(queries::entries(backend, &of_ls, None, 1))
            .one(db)
            .await?
        {
            last_errors.insert(ls.clone(), super::kinds::last_failure(&f));
        }
    }
    let mut page_counts = BTreeMap::new();
    let items: Vec<LaunchSettingFailures> = found
        .into_iter()
        .map(|(ls, by_error_type)| {
            merge(&mut page_counts, &by_error_type);
            let (first_at, last_at) = spans.remove(&ls).unwrap_or_default();
            let (application, agent) = catalog.get(&ls).cloned().unzip();
            LaunchSettingFailures {
                total: total(&by_error_type),
                last_error: last_errors.remove(&ls),
                launch_setting: ls,
                application,
                agent,
                by_error_type,
                first_at,
                last_at,
            }
        })
        .collect();
    Ok(LaunchSettingFailuresPage {
        next: if has_more {
            items.last().map(|i| i.launch_setting.clone())
        } else {
            None
        },
        by_error_type: sorted(page_counts),
        kinds,
        items,
    })
}

/// Second level: the activations of launch setting `ls` with failures matching the filter,
/// the most recently failing first, with their counts by host and by error type, and the
/// launch setting's counts by error type. `page` is one-based.
pub async fn activations(
    db: &impl ConnectionTrait,
    actor: &Principal,
    ls: &str,
    filter: &FailureFilter,
    page: Option<u64>,
    limit: Option<u64>,
) -> ServiceResult<ActivationFailuresPage> {
    actor.require(Operation::Read)?;
    let mut scope = Scope::of(filter)?;
    scope.launch_setting = Some(ls.to_owned());
    let backend = db.get_database_backend();
    let limit = filters::limit(limit, ACTIVATIONS_PAGE, MAX_PAGE);
    let (page, offset) = filters::page(page, limit)?;
    let by_error_type = type_counts(db, queries::type_counts(backend, &scope)).await?;
    let kinds = kind_counts(db, queries::kind_counts(backend, &scope)).await?;

    let stmt = queries::activation_groups(backend, &scope, ls, limit + 1, offset);
    let mut groups = ActivationGroup::find_by_statement(stmt).all(db).await?;
    // Nothing found for a launch setting that does not exist (and left no failures behind
    // when it was deleted) is no empty page of it: it names nothing.
    if groups.is_empty() && kinds == Default::default() && !known(db, ls).await? {
        return Err(ServiceError::NotFound(format!("launch setting '{ls}'")));
    }
    let activations_total = groups.first().map(|g| count(g.groups)).unwrap_or(0);
    let has_more = groups.len() as u64 > limit;
    groups.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let ids: Vec<Uuid> = groups.iter().map(|g| g.activation_id).collect();

    type Breakdown = (BTreeMap<String, u64>, BTreeMap<String, u64>);
    let mut breakdown: HashMap<Uuid, Breakdown> = HashMap::new();
    if !ids.is_empty() {
        let stmt = queries::activation_breakdown(backend, &scope, &ids);
        for r in ActivationHostType::find_by_statement(stmt).all(db).await? {
            let (hosts, types) = breakdown.entry(r.activation_id).or_default();
            *hosts.entry(r.host).or_default() += count(r.n);
            *types.entry(r.error_type).or_default() += count(r.n);
        }
    }
    let rows: HashMap<Uuid, activations::Model> = activations::Entity::find()
        .filter(activations::Column::Id.is_in(ids.iter().copied()))
        .all(db)
        .await?
        .into_iter()
        .map(|a| (a.id, a))
        .collect();
    let items = groups
        .into_iter()
        .map(|g| {
            let (hosts, types) = breakdown.remove(&g.activation_id).unwrap_or_default();
            let row = rows.get(&g.activation_id);
            ActivationFailures {
                activation: g.activation_id,
                status: row.map(|a| a.status.clone()),
                trigger: row.map(|a| a.trigger.clone()),
                created_at: row.map(|a| a.created_at),
                finished_at: row.and_then(|a| a.finished_at),
                total: count(g.n),
                first_at: g.first_at,
                last_at: g.last_at,
                hosts: hosts
                    .into_iter()
                    .map(|(host, count)| HostCount { host, count })
                    .collect(),
                by_error_type: sorted(types),
            }
        })
        .collect();
    Ok(ActivationFailuresPage {
        launch_setting: ls.to_owned(),
        total: total(&by_error_type),
        by_error_type,
        kinds,
        activations: activations_total,
        items,
        page,
        limit,
        has_more,
    })
}

/// Third level: the hosts of `activation` that reported failures matching the filter, with
/// their counts by error type and the status of their latest dispatch.
pub async fn hosts(
    db: &impl ConnectionTrait,
    actor: &Principal,
    activation: &str,
    filter: &FailureFilter,
) -> ServiceResult<ActivationHostFailures> {
    actor.require(Operation::Read)?;
    // The path names the activation; a query's own `activation` is checked like every filter
    // (a malformed one is refused, not ignored) before the path's replaces it.
    Scope::of(filter)?;
    let mut scope = Scope::of(&FailureFilter {
        activation: Some(activation.to_owned()),
        ..filter.clone()
    })?;
    let Some(id) = scope.activation else {
        return Err(ServiceError::invalid(
            "activation",
            "an activation id is required",
        ));
    };
    let backend = db.get_database_backend();
    let row = activations::Entity::find_by_id(id).one(db).await?;
    if scope.launch_setting.is_none() {
        scope.launch_setting = match row.as_ref().and_then(|a| a.launch_setting_id.clone()) {
            Some(ls) => Some(ls),
            None => {
                failure_logs::Entity::find()
                    .select_only()
                    .column(failure_logs::Column::LaunchSettingId)
                    .filter(failure_logs::Column::ActivationId.eq(id))
                    .into_tuple::<String>()
                    .one(db)
                    .await?
            }
        };
    }

    let mut by_host: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut all = BTreeMap::new();
    let stmt = queries::host_counts(backend, &scope, id);
    for r in KeyCount::find_by_statement(stmt).all(db).await? {
        *all.entry(r.error_type.clone()).or_default() += count(r.n);
        by_host
            .entry(r.key)
            .or_default()
            .insert(r.error_type, count(r.n));
    }
    let mut spans = match &scope.launch_setting {
        Some(ls) => spans(db, queries::host_spans(backend, &scope, ls, id)).await?,
        None => Spans::new(),
    };
    let kinds = kind_counts(db, queries::kind_counts(backend, &scope)).await?;

    // The latest attempt of each host decides the status shown.
    let mut status: HashMap<String, (i32, String)> = HashMap::new();
    for (host, attempt, s) in activation_hosts::Entity::find()
        .select_only()
        .columns([
            activation_hosts::Column::Host,
            activation_hosts::Column::Attempt,
            activation_hosts::Column::Status,
        ])
        .filter(activation_hosts::Column::ActivationId.eq(id))
        .into_tuple::<(String, i32, String)>()
        .all(db)
        .await?
    {
        let e = status.entry(host).or_insert((attempt, s.clone()));
        if attempt >= e.0 {
            *e = (attempt, s);
        }
    }
    let items = by_host
        .into_iter()
        .map(|(host, types)| {
            let by_error_type = sorted(types);
            let (first_at, last_at) = spans.remove(&host).unwrap_or_default();
            HostFailures {
                total: total(&by_error_type),
                status: status.remove(&host).map(|s| s.1),
                host,
                by_error_type,
                first_at,
                last_at,
            }
        })
        .collect();
    let by_error_type = sorted(all);
    Ok(ActivationHostFailures {
        activation: id,
        launch_setting: scope.launch_setting,
        activation_status: row.map(|a| a.status),
        total: total(&by_error_type),
        by_error_type,
        kinds,
        items,
    })
}

/// Whether `ls` is a launch setting, or one deleted that left failures behind.
async fn known(db: &impl ConnectionTrait, ls: &str) -> ServiceResult<bool> {
    if launch_settings::Entity::find_by_id(ls)
        .one(db)
        .await?
        .is_some()
    {
        return Ok(true);
    }
    Ok(failure_logs::Entity::find()
        .filter(failure_logs::Column::LaunchSettingId.eq(ls))
        .one(db)
        .await?
        .is_some())
}
