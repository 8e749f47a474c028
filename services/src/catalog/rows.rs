//! Conversions between catalog rows and domain entities.
//!
//! Enums are stored as their serde names (`stream`, `ANY`, `dead-letter`), durations as
//! milliseconds, parameter schemas and values as JSON.

use crate::{
    ServiceError,
    entity::*,
    error::ServiceResult,
    status::{group as group_status, launch_setting as ls_status},
};
use am_domain::{
    HumanDuration,
    catalog::{
        Agent, Application, Channels, Classifier, ClassifierValue, DataQueue, DeadLetterSettings,
        LaunchSetting, MessageFilter, Pool, RecoveryPolicy, RetryPolicy, ScheduleGroup,
    },
    notify::{events_from_text, events_to_text},
};
use chrono::{DateTime, Utc};
use sea_orm::{ActiveValue::NotSet, Set};
use serde::{Serialize, de::DeserializeOwned};

pub(crate) fn enum_to_str<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}

pub(crate) fn enum_from_str<T: DeserializeOwned>(column: &str, s: &str) -> ServiceResult<T> {
    serde_json::from_value(serde_json::Value::String(s.to_owned()))
        .map_err(|e| ServiceError::Internal(format!("stored {column} '{s}' is not valid: {e}")))
}

fn from_json<T: DeserializeOwned>(column: &str, v: serde_json::Value) -> ServiceResult<T> {
    serde_json::from_value(v)
        .map_err(|e| ServiceError::Internal(format!("stored {column} is not valid: {e}")))
}

fn to_json<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

fn ms(d: HumanDuration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn dur(ms: i64) -> HumanDuration {
    HumanDuration::from_millis(u64::try_from(ms).unwrap_or(0))
}

fn count(n: i32) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

fn int(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// An entity's notification channels from its row: the six columns are named alike in the
/// three tables that have them (applications, launch settings, schedule groups).
macro_rules! channels {
    ($m:ident) => {
        enum_from_str("webhook format", &$m.webhook_format).map(|webhook_format| Channels {
            webhook_url: $m.webhook_url,
            webhook_secret: $m.webhook_secret,
            webhook_format,
            notify_email: $m.notify_email,
            webhook_events: events_from_text($m.webhook_events.as_deref()),
            email_events: events_from_text($m.email_events.as_deref()),
        })
    };
}

/// The six channel columns of `row` from `channels` (as [`channels!`] reads them).
macro_rules! set_channels {
    ($row:ident, $channels:expr) => {{
        let c: &Channels = $channels;
        $row.webhook_url = Set(c.webhook_url.clone());
        $row.webhook_secret = Set(c.webhook_secret.clone());
        $row.webhook_format = Set(enum_to_str(&c.webhook_format));
        $row.notify_email = Set(c.notify_email.clone());
        $row.webhook_events = Set(events_to_text(&c.webhook_events));
        $row.email_events = Set(events_to_text(&c.email_events));
    }};
}

pub(crate) fn application(m: applications::Model) -> ServiceResult<Application> {
    Ok(Application {
        id: m.id,
        title: m.title,
        default_pool: m.default_pool_id,
        channels: channels!(m)?,
    })
}

pub(crate) fn application_row(
    a: &Application,
    now: DateTime<Utc>,
    insert: bool,
) -> applications::ActiveModel {
    let mut row = applications::ActiveModel {
        id: Set(a.id.clone()),
        title: Set(a.title.clone()),
        default_pool_id: Set(a.default_pool.clone()),
        created_at: if insert { Set(now) } else { NotSet },
        updated_at: Set(now),
        ..Default::default()
    };
    set_channels!(row, &a.channels);
    row
}

pub(crate) fn pool(m: pools::Model, hosts: Vec<String>) -> Pool {
    Pool {
        id: m.id,
        title: m.title,
        hosts,
    }
}

pub(crate) fn pool_row(p: &Pool, now: DateTime<Utc>, insert: bool) -> pools::ActiveModel {
    pools::ActiveModel {
        id: Set(p.id.clone()),
        title: Set(p.title.clone()),
        created_at: if insert { Set(now) } else { NotSet },
        updated_at: Set(now),
    }
}

pub(crate) fn data_queue(m: data_queues::Model) -> ServiceResult<DataQueue> {
    Ok(DataQueue {
        kind: enum_from_str("data queue kind", &m.kind)?,
        id: m.id,
        title: m.title,
        address: m.address,
        delay: m.delay_ms.map(dur),
    })
}

pub(crate) fn data_queue_row(
    q: &DataQueue,
    now: DateTime<Utc>,
    insert: bool,
) -> data_queues::ActiveModel {
    data_queues::ActiveModel {
        id: Set(q.id.clone()),
        title: Set(q.title.clone()),
        kind: Set(enum_to_str(&q.kind)),
        address: Set(q.address.clone()),
        delay_ms: Set(q.delay.map(ms)),
        created_at: if insert { Set(now) } else { NotSet },
        updated_at: Set(now),
    }
}

pub(crate) fn classifier(m: classifiers::Model, values: Vec<ClassifierValue>) -> Classifier {
    Classifier {
        application: m.application_id,
        name: m.name,
        title: m.title,
        values,
    }
}

pub(crate) fn classifier_row(c: &Classifier, now: DateTime<Utc>) -> classifiers::ActiveModel {
    classifiers::ActiveModel {
        application_id: Set(c.application.clone()),
        name: Set(c.name.clone()),
        title: Set(c.title.clone()),
        published_at: NotSet,
        updated_at: Set(now),
    }
}

pub(crate) fn classifier_value_rows(c: &Classifier) -> Vec<classifier_values::ActiveModel> {
    c.values
        .iter()
        .enumerate()
        .map(|(i, v)| classifier_values::ActiveModel {
            application_id: Set(c.application.clone()),
            classifier_name: Set(c.name.clone()),
            code: Set(v.code.clone()),
            label: Set(v.label.clone()),
            position: Set(i32::try_from(i).unwrap_or(i32::MAX)),
        })
        .collect()
}

pub(crate) fn agent(m: agents::Model) -> ServiceResult<Agent> {
    Ok(Agent {
        input: enum_from_str("agent input kind", &m.input_kind)?,
        concurrency: enum_from_str("agent concurrency", &m.concurrency)?,
        overlap: enum_from_str("agent overlap policy", &m.overlap_policy)?,
        parameters: from_json("agent parameter schema", m.parameter_schema)?,
        application: m.application_id,
        id: m.id,
        title: m.title,
        data_queue: m.data_queue_id,
    })
}

/// Only the columns operators own through the catalog; publication columns stay untouched.
pub(crate) fn agent_row(a: &Agent, now: DateTime<Utc>, insert: bool) -> agents::ActiveModel {
    let mut row = agents::ActiveModel {
        application_id: Set(a.application.clone()),
        id: Set(a.id.clone()),
        title: Set(a.title.clone()),
        input_kind: Set(enum_to_str(&a.input)),
        data_queue_id: Set(a.data_queue.clone()),
        concurrency: Set(enum_to_str(&a.concurrency)),
        overlap_policy: Set(enum_to_str(&a.overlap)),
        parameter_schema: Set(to_json(&a.parameters)),
        updated_at: Set(now),
        ..Default::default()
    };
    if insert {
        row.declared_by = Set("operator".into());
        row.created_at = Set(now);
        row.suggested_defaults = Set(None);
        row.published_at = Set(None);
        row.published_by_host = Set(None);
        row.published_version = Set(None);
        row.published_schema = Set(None);
    }
    row
}

pub(crate) fn launch_setting(m: launch_settings::Model) -> ServiceResult<LaunchSetting> {
    let filter: Option<MessageFilter> = match m.message_filter {
        Some(v) if !v.is_null() => Some(from_json("message filter", v)?),
        _ => None,
    };
    Ok(LaunchSetting {
        kind: enum_from_str("launch setting kind", &m.kind)?,
        stream_mode: m
            .stream_mode
            .as_deref()
            .map(|s| enum_from_str("stream mode", s))
            .transpose()?,
        parameters: match m.parameters {
            serde_json::Value::Object(map) => map,
            serde_json::Value::Null => serde_json::Map::new(),
            _ => {
                return Err(ServiceError::Internal(format!(
                    "stored parameters of '{}' are not an object",
                    m.id
                )));
            }
        },
        filter,
        failure_threshold: count(m.failure_threshold),
        retry: RetryPolicy {
            initial_delay: dur(m.retry_initial_delay_ms),
            multiplier: m.retry_multiplier,
            max_delay: dur(m.retry_max_delay_ms),
            max_deliveries: count(m.max_deliveries),
        },
        unavailable_for: dur(m.unavailable_for_ms),
        dead_letter: DeadLetterSettings {
            policy: enum_from_str("dead-letter policy", &m.dead_letter_policy)?,
            park_cooldown: dur(m.park_cooldown_ms),
            notify_threshold: m.dead_letter_notify_threshold.map(count),
            forward_to: m.dead_letter_forward_to,
        },
        recovery: RecoveryPolicy {
            start_timeout: dur(m.start_timeout_ms),
            work_timeout: dur(m.work_timeout_ms),
            max_run_time: m.max_run_time_ms.map(dur),
            on_lost: enum_from_str("lost policy", &m.on_lost)?,
        },
        idle_timeout: m.idle_timeout_ms.map(dur),
        id: m.id,
        title: m.title,
        application: m.application_id,
        agent: m.agent_id,
        enabled: m.enabled,
        pool: m.pool_id,
        channels: channels!(m)?,
        notify_on_failure: m.notify_on_failure,
    })
}

/// Catalog columns of a launch setting; the runtime status columns are the runtime's, except
/// that enabling or disabling through the catalog moves the current status with it.
pub(crate) fn launch_setting_row(
    l: &LaunchSetting,
    now: DateTime<Utc>,
    previous_enabled: Option<bool>,
) -> launch_settings::ActiveModel {
    let mut row = launch_settings::ActiveModel {
        id: Set(l.id.clone()),
        title: Set(l.title.clone()),
        application_id: Set(l.application.clone()),
        agent_id: Set(l.agent.clone()),
        kind: Set(enum_to_str(&l.kind)),
        enabled: Set(l.enabled),
        pool_id: Set(l.pool.clone()),
        parameters: Set(serde_json::Value::Object(l.parameters.clone())),
        stream_mode: Set(l.stream_mode.as_ref().map(enum_to_str)),
        message_filter: Set(l.filter.as_ref().map(to_json)),
        failure_threshold: Set(int(l.failure_threshold)),
        retry_initial_delay_ms: Set(ms(l.retry.initial_delay)),
        retry_multiplier: Set(l.retry.multiplier),
        retry_max_delay_ms: Set(ms(l.retry.max_delay)),
        max_deliveries: Set(int(l.retry.max_deliveries)),
        unavailable_for_ms: Set(ms(l.unavailable_for)),
        dead_letter_policy: Set(enum_to_str(&l.dead_letter.policy)),
        park_cooldown_ms: Set(ms(l.dead_letter.park_cooldown)),
        dead_letter_notify_threshold: Set(l.dead_letter.notify_threshold.map(int)),
        dead_letter_forward_to: Set(l.dead_letter.forward_to.clone()),
        start_timeout_ms: Set(ms(l.recovery.start_timeout)),
        work_timeout_ms: Set(ms(l.recovery.work_timeout)),
        max_run_time_ms: Set(l.recovery.max_run_time.map(ms)),
        on_lost: Set(enum_to_str(&l.recovery.on_lost)),
        idle_timeout_ms: Set(l.idle_timeout.map(ms)),
        notify_on_failure: Set(l.notify_on_failure),
        updated_at: Set(now),
        ..Default::default()
    };
    set_channels!(row, &l.channels);
    if previous_enabled != Some(l.enabled) {
        row.current_status = Set(if l.enabled {
            ls_status::WAITING
        } else {
            ls_status::DISABLED
        }
        .to_owned());
        row.disabled_at = Set(if l.enabled { None } else { Some(now) });
        row.disabled_by = Set(None);
        row.disabled_activation = Set(None);
        row.disabled_reason = Set(if l.enabled {
            None
        } else {
            Some("disabled in the catalog".to_owned())
        });
    }
    if previous_enabled.is_none() {
        row.created_at = Set(now);
        row.last_result = Set(None);
        row.last_result_at = Set(None);
        row.last_activation_id = Set(None);
    }
    row
}

pub(crate) fn schedule_group(
    m: schedule_groups::Model,
    members: Vec<String>,
) -> ServiceResult<ScheduleGroup> {
    Ok(ScheduleGroup {
        misfire: enum_from_str("misfire policy", &m.misfire_policy)?,
        id: m.id,
        title: m.title,
        application: m.application_id,
        cron: m.cron,
        time_zone: m.time_zone,
        enabled: m.enabled,
        continue_on_failure: m.continue_on_failure,
        expect_success_within: m.expect_success_within_ms.map(dur),
        channels: channels!(m)?,
        members,
    })
}

pub(crate) fn schedule_group_row(
    g: &ScheduleGroup,
    now: DateTime<Utc>,
    previous_enabled: Option<bool>,
) -> schedule_groups::ActiveModel {
    let mut row = schedule_groups::ActiveModel {
        id: Set(g.id.clone()),
        title: Set(g.title.clone()),
        application_id: Set(g.application.clone()),
        cron: Set(g.cron.clone()),
        time_zone: Set(g.time_zone.clone()),
        misfire_policy: Set(enum_to_str(&g.misfire)),
        enabled: Set(g.enabled),
        continue_on_failure: Set(g.continue_on_failure),
        expect_success_within_ms: Set(g.expect_success_within.map(ms)),
        updated_at: Set(now),
        // The scheduler recomputes it from the (possibly new) cron expression.
        next_fire_at: Set(None),
        ..Default::default()
    };
    set_channels!(row, &g.channels);
    if previous_enabled != Some(g.enabled) {
        row.current_status = Set(if g.enabled {
            group_status::WAITING
        } else {
            group_status::DISABLED
        }
        .to_owned());
        row.disabled_at = Set(if g.enabled { None } else { Some(now) });
        // The dead man's switch counts from here: a group just created or enabled has had no
        // chance to succeed yet.
        if g.enabled {
            row.watch_from = Set(Some(now));
        }
        row.disabled_by = Set(None);
        row.disabled_activation = Set(None);
        row.disabled_reason = Set(if g.enabled {
            None
        } else {
            Some("disabled in the catalog".to_owned())
        });
    }
    if previous_enabled.is_none() {
        row.created_at = Set(now);
        row.last_result = Set(None);
        row.last_result_at = Set(None);
        row.last_fire_at = Set(None);
    }
    row
}
