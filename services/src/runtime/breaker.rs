//! The manager's side of the breaker (docs/concepts.md, Breaker; docs/runtime.md, Breaker
//! policy): what a node's trip disables.
//!
//! - a member of a schedule group → the whole group (the group of the tripped run, or every
//!   group containing the launch setting when it ran alone);
//! - `ANY` → the launch setting at once;
//! - `MANY` → the launch setting once trips of the same activation came from two distinct
//!   hosts, or from every live host when fewer than two are live.
//!
//! Disabling goes through the catalog service (revision, audit entry with the cause); the
//! watchdog then sends *stop* to every node still running the launch setting.

use super::{Metrics, RuntimeConfig};
use crate::{
    Principal, catalog,
    entity::{
        activations, agents, breaker_trips, launch_settings, schedule_group_members,
        schedule_groups,
    },
    error::ServiceResult,
    registry,
};
use am_domain::{usage::EntityRef, wire::BreakerTripped};
use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect};
use std::collections::BTreeSet;
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
            agents::Entity::find_by_id((ls.application_id.clone(), ls.agent_id.clone()))
                .one(db)
                .await?
                .map(|a| a.concurrency)
                .unwrap_or_default();
        if concurrency != "MANY" || many_should_disable(db, cfg, &ls, activation, now).await? {
            targets.push(EntityRef::LaunchSetting(ls.id.clone()));
        }
    }
    let breaker = Principal::system("breaker");
    for t in &targets {
        catalog::set_enabled(db, &breaker, t, false, &cause).await?;
        Metrics::inc(&cfg.metrics.breaker_disables);
        tracing::warn!(disabled = %t, %cause, "breaker policy disabled");
    }
    Ok(targets)
}

/// `MANY`: trips of this activation from two distinct hosts, or from every live host of the
/// application when fewer than two are live.
async fn many_should_disable(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    ls: &launch_settings::Model,
    activation: Option<Uuid>,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    let hosts: BTreeSet<String> = breaker_trips::Entity::find()
        .select_only()
        .column(breaker_trips::Column::Host)
        .filter(breaker_trips::Column::LaunchSettingId.eq(ls.id.as_str()))
        .filter(breaker_trips::Column::ActivationId.eq(activation))
        .into_tuple::<String>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let live = registry::live_nodes(db, &ls.application_id, now, cfg.node_timeout)
        .await?
        .len();
    Ok(hosts.len() >= 2.min(live.max(1)))
}
