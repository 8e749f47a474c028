//! Server functions of the notifications page: the list (filters from the URL, keyset pages)
//! and *Resend*.

use crate::error::UiError;
use am_domain::read::notifications::{NotificationEntry, NotificationFilter, NotificationPage};
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

/// The filters of the page, as in its URL (`?event=&status=&application=&launch_setting=&after=`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationsQuery {
    #[serde(flatten)]
    pub filter: NotificationFilter,
    /// The cursor: the `next` of the previous page.
    pub after: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationsView {
    pub page: NotificationPage,
    pub can_operate: bool,
    /// When the server read the list: the base of its relative times.
    pub now: chrono::DateTime<chrono::Utc>,
}

#[server(prefix = "/ui", endpoint = "notifications", input = Json)]
pub async fn list_notifications(query: NotificationsQuery) -> Result<NotificationsView, UiError> {
    use super::ssr::*;
    use am_services::notifications;
    let who = require(Operation::Read)?;
    let after = match query.after.trim() {
        "" => None,
        a => Some(a.parse::<i64>().map_err(|_| {
            am_services::ServiceError::invalid("after", format!("`{a}` is not a notification id"))
        })?),
    };
    let page = notifications::list(&services()?.db, &who, &query.filter, after, None).await?;
    Ok(NotificationsView {
        page,
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
pub async fn notification(id: i64) -> Result<NotificationEntry, UiError> {
    use super::ssr::*;
    let who = require(Operation::Read)?;
    Ok(am_services::notifications::get(&services()?.db, &who, id).await?)
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
