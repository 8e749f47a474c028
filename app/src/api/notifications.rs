//! Server functions of the notifications page: the list (filters from the URL, keyset pages)
//! and *Resend*.

use crate::error::UiError;
use am_domain::notify::{Delivery, Notice};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The filters of the page, as in its URL (`?event=&status=&application=&launch_setting=&after=`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationsQuery {
    pub event: String,
    pub status: String,
    pub application: String,
    pub launch_setting: String,
    /// The cursor: the `next` of the previous page.
    pub after: String,
}

/// One notification as the page lists it (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationRow {
    pub id: i64,
    pub notice: Notice,
    pub endpoint: String,
    /// `webhook` or `chat`.
    pub channel: String,
    pub signed: bool,
    pub status: Delivery,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub count: i32,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub next_attempt_at: Option<chrono::DateTime<chrono::Utc>>,
    pub delivered_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The payload, pretty-printed.
    pub payload: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationsView {
    pub rows: Vec<NotificationRow>,
    pub next: Option<i64>,
    pub can_operate: bool,
    /// When the server read the list: the base of its relative times.
    pub now: chrono::DateTime<chrono::Utc>,
}

#[cfg(feature = "ssr")]
fn row(n: am_services::notifications::NotificationEntry) -> NotificationRow {
    NotificationRow {
        id: n.id,
        payload: serde_json::to_string_pretty(&n.payload).unwrap_or_default(),
        notice: n.payload,
        endpoint: n.endpoint,
        channel: n.channel,
        signed: n.signed,
        status: n.status,
        attempts: n.attempts,
        last_error: n.last_error,
        count: n.count,
        created_at: n.created_at,
        next_attempt_at: n.next_attempt_at,
        delivered_at: n.delivered_at,
    }
}

#[cfg(feature = "ssr")]
fn opt(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}

#[server(prefix = "/ui", endpoint = "notifications", input = Json)]
pub async fn list_notifications(query: NotificationsQuery) -> Result<NotificationsView, UiError> {
    use super::ssr::*;
    use am_services::notifications::{self, NotificationFilter};
    let who = require(Operation::Read)?;
    let filter = NotificationFilter {
        event: opt(&query.event),
        status: opt(&query.status),
        application: opt(&query.application),
        launch_setting: opt(&query.launch_setting),
    };
    let after = match opt(&query.after) {
        Some(a) => Some(a.parse::<i64>().map_err(|_| {
            am_services::ServiceError::invalid("after", format!("`{a}` is not a notification id"))
        })?),
        None => None,
    };
    let page = notifications::list(&services()?.db, &who, &filter, after, None).await?;
    Ok(NotificationsView {
        rows: page.items.into_iter().map(row).collect(),
        next: page.next,
        can_operate: who.role.may(Operation::Notify),
        now: chrono::Utc::now(),
    })
}

/// Sends a delivered or failed notification again (operators).
#[server(prefix = "/ui", endpoint = "resend_notification", input = Json)]
pub async fn resend_notification(id: i64) -> Result<(), UiError> {
    use super::ssr::*;
    let who = require(Operation::Notify)?;
    am_services::notifications::resend(&services()?.db, &who, id).await?;
    Ok(())
}

/// One notification, as the list shows it: what *Send test* polls for the endpoint's answer.
#[server(prefix = "/ui", endpoint = "notification", input = Json)]
pub async fn notification(id: i64) -> Result<NotificationRow, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    Ok(row(am_services::notifications::get(
        &services()?.db,
        &who,
        id,
    )
    .await?))
}

/// *Send test* of the webhook of an application or launch setting (operators); returns the
/// test notification's id.
#[server(prefix = "/ui", endpoint = "send_test_notification", input = Json)]
pub async fn send_test_notification(
    key: super::catalog::Key,
    #[server(default)] channel: Option<am_domain::notify::Channel>,
) -> Result<i64, UiError> {
    use super::ssr::*;
    let who = require(Operation::Notify)?;
    let key = am_domain::usage::EntityRef::from(key);
    Ok(am_services::notifications::send_test(&services()?.db, &who, &key, channel).await?)
}

/// Sets (or, empty, removes) the secret that signs the webhook of an application or launch
/// setting (admins). It is never read back.
#[server(prefix = "/ui", endpoint = "set_webhook_secret", input = Json)]
pub async fn set_webhook_secret(key: super::catalog::Key, secret: String) -> Result<(), UiError> {
    use super::ssr::*;
    let who = require(Operation::EditCatalog)?;
    let key = am_domain::usage::EntityRef::from(key);
    am_services::catalog::set_webhook_secret(&services()?.db, &who, &key, secret.trim()).await?;
    Ok(())
}
