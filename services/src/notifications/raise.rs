//! Raising a notification, inside the transaction of the event that causes it: one row per
//! channel endpoint that wants it (per channel, the launch setting's or group's own, else its
//! application's),
//! or, for a repeat within the folding window, one more on the count of the row already there.

use super::FOLD_WINDOW;
use crate::{
    entity::{applications, launch_settings, notifications, schedule_groups},
    error::{ServiceError, ServiceResult},
};
use am_domain::notify::{
    Channel, Delivery, Event, Notice, WebhookFormat, email_recipients, events_from_text, wants,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

/// Where one notification goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub channel: Channel,
    pub url: String,
    pub secret: Option<String>,
}

/// The application of what `notice` is about, when it names only a launch setting or group.
pub(super) async fn application_of(
    db: &impl ConnectionTrait,
    notice: &Notice,
) -> ServiceResult<Option<String>> {
    if notice.application.is_some() {
        return Ok(notice.application.clone());
    }
    if let Some(ls) = &notice.launch_setting {
        return Ok(launch_settings::Entity::find_by_id(ls.as_str())
            .select_only()
            .column(launch_settings::Column::ApplicationId)
            .into_tuple()
            .one(db)
            .await?);
    }
    if let Some(group) = &notice.group {
        return Ok(schedule_groups::Entity::find_by_id(group.as_str())
            .select_only()
            .column(schedule_groups::Column::ApplicationId)
            .into_tuple()
            .one(db)
            .await?);
    }
    Ok(None)
}

/// The channels of an application or launch setting as its row stores them: webhook URL,
/// secret, format and events, and e-mail addresses and events.
type Hooks = (
    Option<String>,
    Option<String>,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// A channel that is set, with the events it chose.
struct Chosen {
    endpoint: Endpoint,
    events: Vec<Event>,
}

fn webhook((url, secret, format, _, events, _): &Hooks) -> Option<Chosen> {
    let format = WebhookFormat::parse(format).unwrap_or_default();
    url.clone().map(|url| Chosen {
        endpoint: Endpoint {
            channel: format.channel(),
            url,
            secret: secret.clone(),
        },
        events: events_from_text(events.as_deref()),
    })
}

/// The e-mail endpoint: the addresses, normalized, as one endpoint (one message to all of
/// them). A list the catalog would refuse (it was checked when saved) sends nothing.
fn email((_, _, _, list, _, events): &Hooks) -> Option<Chosen> {
    let to = email_recipients(list.as_deref()?).ok()?;
    Some(Chosen {
        endpoint: Endpoint {
            channel: Channel::Email,
            url: to.join(", "),
            secret: None,
        },
        events: events_from_text(events.as_deref()),
    })
}

/// The endpoints of what `notice` is about. Each channel is chosen on its own: the launch
/// setting's (or, for a notice about a group alone, the group's) webhook when it has one,
/// otherwise its application's; the same for e-mail. The chosen channel is told only the
/// events it wants ([`wants`]): a launch setting's own webhook that leaves an event out
/// silences it for that launch setting.
pub async fn endpoints(db: &impl ConnectionTrait, notice: &Notice) -> ServiceResult<Vec<Endpoint>> {
    let own: Option<Hooks> = match (&notice.launch_setting, &notice.group) {
        (Some(ls), _) => {
            use launch_settings::Column as L;
            launch_settings::Entity::find_by_id(ls.as_str())
                .select_only()
                .columns([
                    L::WebhookUrl,
                    L::WebhookSecret,
                    L::WebhookFormat,
                    L::NotifyEmail,
                    L::WebhookEvents,
                    L::EmailEvents,
                ])
                .into_tuple()
                .one(db)
                .await?
        }
        (None, Some(group)) => {
            use schedule_groups::Column as G;
            schedule_groups::Entity::find_by_id(group.as_str())
                .select_only()
                .columns([
                    G::WebhookUrl,
                    G::WebhookSecret,
                    G::WebhookFormat,
                    G::NotifyEmail,
                    G::WebhookEvents,
                    G::EmailEvents,
                ])
                .into_tuple()
                .one(db)
                .await?
        }
        (None, None) => None,
    };
    let own_hook = own.as_ref().and_then(webhook);
    let own_email = own.as_ref().and_then(email);
    let app_hooks: Option<Hooks> = if own_hook.is_none() || own_email.is_none() {
        match application_of(db, notice).await? {
            Some(app) => {
                use applications::Column as A;
                applications::Entity::find_by_id(app)
                    .select_only()
                    .columns([
                        A::WebhookUrl,
                        A::WebhookSecret,
                        A::WebhookFormat,
                        A::NotifyEmail,
                        A::WebhookEvents,
                        A::EmailEvents,
                    ])
                    .into_tuple()
                    .one(db)
                    .await?
            }
            None => None,
        }
    } else {
        None
    };
    let hook = own_hook.or_else(|| app_hooks.as_ref().and_then(webhook));
    let mail = own_email.or_else(|| app_hooks.as_ref().and_then(email));
    Ok(hook
        .into_iter()
        .chain(mail)
        .filter(|c| wants(&c.events, notice.event))
        .map(|c| c.endpoint)
        .collect())
}

/// Records `notice` for every endpoint that wants it, in the caller's transaction, so it is
/// sent if and only if the event is committed. A repeat (same event and subject, same endpoint)
/// within [`FOLD_WINDOW`] of the first is folded into it: its count grows, nothing new is sent.
/// Returns how many new notifications were queued.
pub async fn raise(
    db: &impl ConnectionTrait,
    mut notice: Notice,
    now: DateTime<Utc>,
) -> ServiceResult<usize> {
    notice.application = application_of(db, &notice).await?;
    let endpoints = endpoints(db, &notice).await?;
    let key = notice.fold_key();
    let mut queued = 0;
    for endpoint in endpoints {
        if fold(db, &key, &endpoint.url, now).await? {
            continue;
        }
        queue_for(db, &notice, endpoint, now).await?;
        queued += 1;
    }
    if queued > 0 {
        tracing::info!(event = notice.event.as_str(), queued, "notification raised");
    }
    Ok(queued)
}

/// Queues `notice` for `endpoint` as a new notification, due now, without folding; returns
/// its id.
pub async fn queue_for(
    db: &impl ConnectionTrait,
    notice: &Notice,
    endpoint: Endpoint,
    now: DateTime<Utc>,
) -> ServiceResult<i64> {
    let payload = serde_json::to_value(notice)
        .map_err(|e| ServiceError::Internal(format!("notification payload: {e}")))?;
    let row = notifications::ActiveModel {
        event: Set(notice.event.as_str().to_owned()),
        fold_key: Set(notice.fold_key()),
        application_id: Set(notice.application.clone()),
        launch_setting_id: Set(notice.launch_setting.clone()),
        group_id: Set(notice.group.clone()),
        channel: Set(endpoint.channel.as_str().to_owned()),
        endpoint: Set(endpoint.url),
        secret: Set(endpoint.secret),
        payload: Set(payload),
        count: Set(1),
        status: Set(Delivery::Pending.as_str().to_owned()),
        attempts: Set(0),
        last_error: Set(None),
        created_at: Set(now),
        last_event_at: Set(now),
        next_attempt_at: Set(now),
        claimed_by: Set(None),
        claimed_until: Set(None),
        delivered_at: Set(None),
        resent_at: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(row.id)
}

/// Folds a repeat into the newest notification of the same key and endpoint raised within the
/// window; false when there is none. The payload's count follows, so a notification still
/// pending is sent with it.
async fn fold(
    db: &impl ConnectionTrait,
    key: &str,
    endpoint: &str,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    let Some(first) = notifications::Entity::find()
        .filter(notifications::Column::FoldKey.eq(key))
        .filter(notifications::Column::Endpoint.eq(endpoint))
        .filter(notifications::Column::CreatedAt.gt(now - FOLD_WINDOW))
        .order_by_desc(notifications::Column::CreatedAt)
        .one(db)
        .await?
    else {
        return Ok(false);
    };
    let count = first.count.saturating_add(1);
    let mut payload = first.payload.clone();
    if let Some(p) = payload.as_object_mut() {
        p.insert("count".to_owned(), count.into());
    }
    let mut row: notifications::ActiveModel = first.into();
    row.count = Set(count);
    row.payload = Set(payload);
    row.last_event_at = Set(now);
    row.update(db).await?;
    Ok(true)
}
