//! The manager's side of the breaker (docs/concepts.md, Breaker; docs/runtime.md, Breaker
//! policy): what a node's trip disables.
//!
//! - a member of a schedule group → the whole group (the group of the tripped run, or every
//!   group containing the launch setting when it ran alone);
//! - `ANY` → the launch setting at once;
//! - `MANY` → the tripped host is quarantined (no launch of that launch setting until it is
//!   cleared or the launch setting re-enabled); the launch setting is disabled once two hosts of
//!   its pool are quarantined, or no live host of its pool is left outside the quarantine.
//!
//! Disabling goes through the catalog service (revision, audit entry with the cause); the
//! watchdog then sends *stop* to every node still running the launch setting.

use super::{Metrics, RuntimeConfig, resolve::Resolver};
use crate::{
    Principal, catalog,
    entity::{activations, launch_settings, schedule_group_members, schedule_groups},
    error::ServiceResult,
    notifications::events,
};
use am_domain::{notify::action, policy::many_disables, usage::EntityRef, wire::BreakerTripped};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect, TransactionTrait,
};
use uuid::Uuid;

/// Applies the policy to one trip; returns what it disabled.
pub async fn apply_trip(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    trip: &BreakerTripped,
    now: DateTime<Utc>,
) -> ServiceResult<Vec<EntityRef>> {
    let Some(ls) = launch_settings::Entity::find_by_id(trip.launch_setting.clone())
        .one(db)
        .await?
    else {
        return Ok(Vec::new());
    };
    let activation = Uuid::parse_str(&trip.activation_id.0).ok();
    let last = trip
        .last_errors
        .last()
        .map(|e| format!("; last: {}: {}", e.error_type, e.message))
        .unwrap_or_default();
    let cause = format!(
        "breaker tripped on {} for {}: {} consecutive failures{last}",
        trip.host, ls.id, trip.consecutive_failures
    );

    let parent_group = match activation {
        Some(a) => match activations::Entity::find_by_id(a).one(db).await? {
            Some(run) => match run.parent_id {
                Some(p) => activations::Entity::find_by_id(p)
                    .one(db)
                    .await?
                    .and_then(|p| p.group_id),
                None => None,
            },
            None => None,
        },
        None => None,
    };
    let groups: Vec<String> = match parent_group {
        Some(g) => vec![g],
        None => {
            schedule_group_members::Entity::find()
                .select_only()
                .column(schedule_group_members::Column::GroupId)
                .filter(schedule_group_members::Column::LaunchSettingId.eq(ls.id.as_str()))
                .into_tuple()
                .all(db)
                .await?
        }
    };
    let mut targets = Vec::new();
    if !groups.is_empty() {
        for g in groups {
            let enabled = schedule_groups::Entity::find_by_id(g.clone())
                .one(db)
                .await?
                .is_some_and(|g| g.enabled);
            if enabled {
                targets.push(EntityRef::ScheduleGroup(g));
            }
        }
    } else if ls.enabled {
        let concurrency =
            crate::catalog::agent_concurrency(db, &ls.application_id, &ls.agent_id).await?;
        if concurrency != am_domain::catalog::Concurrency::Many {
            targets.push(EntityRef::LaunchSetting(ls.id.clone()));
        } else {
            let txn = db.begin().await?;
            let new =
                crate::quarantine::add(&txn, &ls.id, &trip.host, activation, &cause, now).await?;
            if new {
                crate::recovery::count(&txn, &ls.id, crate::recovery::kind::QUARANTINE).await?;
                let did = format!("host {} is quarantined for it", trip.host);
                let notice = events::breaker_tripped(trip, action::QUARANTINED, &did, now);
                crate::notifications::raise(&txn, notice, now).await?;
            }
            txn.commit().await?;
            if new {
                Metrics::inc(&cfg.metrics.quarantines);
                tracing::warn!(launch_setting = %ls.id, host = %trip.host, %cause, "host quarantined");
            }
            if many_should_disable(db, cfg, &ls, now).await? {
                targets.push(EntityRef::LaunchSetting(ls.id.clone()));
            }
        }
    }
    let breaker = Principal::system("breaker");
    for t in &targets {
        let why = catalog::Cause {
            text: &cause,
            activation,
            trip: Some(trip),
        };
        catalog::set_enabled(db, &breaker, t, false, why).await?;
        Metrics::inc(&cfg.metrics.breaker_disables);
        tracing::warn!(disabled = %t, %cause, "breaker policy disabled");
    }
    Ok(targets)
}

/// `MANY`: two hosts of the launch setting's pool quarantined, or none of its live hosts left
/// outside the quarantine ([`many_disables`]). Trips count across activations: a quarantine
/// lasts until the launch setting is re-enabled or the host cleared.
async fn many_should_disable(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    ls: &launch_settings::Model,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    let resolver = Resolver::load(db, std::slice::from_ref(&ls.id), now, cfg.node_timeout).await?;
    let Some(target) = resolver.target(&ls.id) else {
        return Ok(false);
    };
    let quarantined = target.quarantined.intersection(&target.hosts).count();
    Ok(many_disables(quarantined, resolver.eligible(target).len()))
}
