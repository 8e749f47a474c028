//! Notifications to operators (docs/notifications.md): raised in the transaction of the event
//! that causes them (`raise`), delivered by the manager's notifier through the claim and
//! outcome functions of `delivery`, listed and resent here.

pub mod delivery;
pub mod events;
pub mod raise;

use crate::{
    Principal,
    audit::{self, AuditEntry},
    entity::notifications,
    error::{ServiceError, ServiceResult},
    filters,
};
use am_domain::{
    notify::{Channel, Delivery, Event, Notice},
    read::notifications::{NotificationEntry, NotificationFilter, NotificationPage},
    roles::Operation,
};
use chrono::{Duration, Utc};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, sea_query::Expr,
};

pub use raise::raise;

/// Repeats of one event about one subject within this window are folded into one notification.
pub const FOLD_WINDOW: Duration = Duration::minutes(10);

const PAGE: u64 = 50;
const MAX_PAGE: u64 = 500;

/// The rows `filter` selects, or which of its fields is malformed.
fn condition(filter: &NotificationFilter) -> ServiceResult<Condition> {
    use notifications::Column as C;
    let mut c = Condition::all();
    if let Some(e) = filters::text(&filter.event) {
        let event = Event::parse(&e).ok_or_else(|| {
            ServiceError::invalid(
                "event",
                format!(
                    "unknown event '{e}' (one of {})",
                    Event::ALL.map(Event::as_str).join(", ")
                ),
            )
        })?;
        c = c.add(C::Event.eq(event.as_str()));
    }
    if let Some(s) = filters::text(&filter.status) {
        let status = Delivery::parse(&s).ok_or_else(|| {
            ServiceError::invalid(
                "status",
                format!("unknown status '{s}' (pending, delivered or failed)"),
            )
        })?;
        c = c.add(C::Status.eq(status.as_str()));
    }
    if let Some(a) = filters::text(&filter.application) {
        c = c.add(C::ApplicationId.eq(a));
    }
    if let Some(l) = filters::text(&filter.launch_setting) {
        c = c.add(C::LaunchSettingId.eq(l));
    }
    Ok(c)
}

fn entry(m: notifications::Model) -> ServiceResult<NotificationEntry> {
    let bad = |what: &str| ServiceError::Internal(format!("notification {}: {what}", m.id));
    let payload: Notice =
        serde_json::from_value(m.payload.clone()).map_err(|e| bad(&e.to_string()))?;
    let status = Delivery::parse(&m.status).ok_or_else(|| bad("unknown status"))?;
    Ok(NotificationEntry {
        id: m.id,
        event: payload.event,
        application: m.application_id,
        launch_setting: m.launch_setting_id,
        group: m.group_id,
        channel: m.channel,
        endpoint: m.endpoint,
        signed: m.secret.is_some(),
        status,
        attempts: m.attempts,
        last_error: m.last_error,
        count: m.count,
        created_at: m.created_at,
        last_event_at: m.last_event_at,
        next_attempt_at: (status == Delivery::Pending).then_some(m.next_attempt_at),
        delivered_at: m.delivered_at,
        payload,
    })
}

/// Notifications matching `filter`, newest first, `limit` (default 50, at most 500) after the
/// cursor `after` (the `next` of the previous page).
pub async fn list(
    db: &impl ConnectionTrait,
    actor: &Principal,
    filter: &NotificationFilter,
    after: Option<i64>,
    limit: Option<u64>,
) -> ServiceResult<NotificationPage> {
    use notifications::Column as C;
    actor.require(Operation::Read)?;
    let limit = filters::limit(limit, PAGE, MAX_PAGE);
    let mut q = notifications::Entity::find().filter(condition(filter)?);
    if let Some(a) = after {
        q = q.filter(C::Id.lt(a));
    }
    let mut rows = q.order_by_desc(C::Id).limit(limit + 1).all(db).await?;
    let more = rows.len() as u64 > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let next = more.then(|| rows.last().map(|r| r.id)).flatten();
    Ok(NotificationPage {
        items: rows.into_iter().map(entry).collect::<ServiceResult<_>>()?,
        next,
    })
}

/// One notification.
pub async fn get(
    db: &impl ConnectionTrait,
    actor: &Principal,
    id: i64,
) -> ServiceResult<NotificationEntry> {
    actor.require(Operation::Read)?;
    let row = notifications::Entity::find_by_id(id)
        .one(db)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("notification {id}")))?;
    entry(row)
}

/// *Send test* of a channel of an application or launch setting (operators): a `test`
/// notification queued at once, without folding; returns its id, whose delivery status then
/// shows the endpoint's answer. `channel` picks e-mail or the webhook (either format); without
/// it, the webhook when there is one, else e-mail.
pub async fn send_test(
    db: &DatabaseConnection,
    actor: &Principal,
    key: &am_domain::usage::EntityRef,
    channel: Option<Channel>,
) -> ServiceResult<i64> {
    use am_domain::{links, usage::EntityRef};
    actor.require(Operation::Notify)?;
    let now = Utc::now();
    let mut notice = Notice::new(
        Event::Test,
        now,
        format!("A test notification, sent by {} for {key}.", actor.name),
        "/notifications",
    );
    match key {
        EntityRef::Application(id) => {
            notice.application = Some(id.clone());
            notice.url = links::href("/notifications", &[("application", id)]);
        }
        EntityRef::LaunchSetting(id) => {
            notice.launch_setting = Some(id.clone());
            notice.url = links::launch_setting(id);
        }
        EntityRef::ScheduleGroup(id) => {
            notice.group = Some(id.clone());
            notice.url = links::schedule_group(id);
        }
        other => {
            return Err(ServiceError::invalid("", format!("{other} has no webhook")));
        }
    }
    let txn = crate::db::begin_write(db).await?;
    let exists = match key {
        EntityRef::Application(id) => crate::entity::applications::Entity::find_by_id(id.as_str())
            .one(&txn)
            .await?
            .is_some(),
        EntityRef::ScheduleGroup(id) => {
            crate::entity::schedule_groups::Entity::find_by_id(id.as_str())
                .one(&txn)
                .await?
                .is_some()
        }
        _ => crate::entity::launch_settings::Entity::find_by_id(
            notice.launch_setting.clone().unwrap_or_default(),
        )
        .one(&txn)
        .await?
        .is_some(),
    };
    if !exists {
        return Err(ServiceError::NotFound(key.to_string()));
    }
    let endpoints = raise::endpoints(&txn, &notice).await?;
    let wanted = |e: &raise::Endpoint| match channel {
        None => true,
        Some(Channel::Email) => e.channel == Channel::Email,
        Some(_) => e.channel != Channel::Email,
    };
    let Some(endpoint) = endpoints.into_iter().find(wanted) else {
        return Err(if channel == Some(Channel::Email) {
            ServiceError::invalid(
                "notify_email",
                format!(
                    "{key} has no e-mail addresses to test: set its notification e-mail (or its application's) first"
                ),
            )
        } else {
            ServiceError::invalid(
                "webhook_url",
                format!(
                    "{key} has no webhook to test: set its webhook URL (or its application's) first"
                ),
            )
        });
    };
    if notice.application.is_none() {
        notice.application = raise::application_of(&txn, &notice).await?;
    }
    let id = raise::queue_for(&txn, &notice, endpoint, now).await?;
    txn.commit().await?;
    Ok(id)
}

/// Notifications given up on: the dashboard's count of failed deliveries.
pub async fn failed_count(db: &impl ConnectionTrait) -> ServiceResult<u64> {
    Ok(notifications::Entity::find()
        .filter(notifications::Column::Status.eq(Delivery::Failed.as_str()))
        .count(db)
        .await?)
}

/// Sends a notification again (operators): pending and due now, with a fresh retry budget;
/// the attempts so far are kept. A notification still pending is a conflict.
pub async fn resend(db: &DatabaseConnection, actor: &Principal, id: i64) -> ServiceResult<()> {
    use notifications::Column as C;
    actor.require(Operation::Notify)?;
    let now = Utc::now();
    let txn = crate::db::begin_write(db).await?;
    let row = notifications::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("notification {id}")))?;
    if row.status == Delivery::Pending.as_str() {
        return Err(ServiceError::Conflict(format!(
            "notification {id} is still pending: it is sent at its next attempt"
        )));
    }
    notifications::Entity::update_many()
        .col_expr(C::Status, Expr::value(Delivery::Pending.as_str()))
        .col_expr(C::NextAttemptAt, Expr::value(now))
        .col_expr(C::ResentAt, Expr::value(Some(now)))
        .col_expr(C::LastError, Expr::value(Option::<String>::None))
        .filter(C::Id.eq(id))
        .filter(C::Status.eq(row.status.as_str()))
        .exec(&txn)
        .await?;
    audit::record(
        &txn,
        AuditEntry::new(actor, "resend", "notification", &id.to_string()).after(
            &serde_json::json!({ "event": row.event, "endpoint": row.endpoint, "was": row.status }),
        ),
    )
    .await?;
    txn.commit().await?;
    Ok(())
}
