//! Notifications as the API and the page list them (never their secret).

use crate::notify::{Delivery, Event, Notice};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Which notifications a list shows; empty fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::IntoParams),
    into_params(parameter_in = Query)
)]
pub struct NotificationFilter {
    /// An event name (`breaker_tripped`, `node_lost`, …).
    pub event: Option<String>,
    /// `pending`, `delivered` or `failed`.
    pub status: Option<String>,
    pub application: Option<String>,
    pub launch_setting: Option<String>,
}

/// One notification as lists and the API show it (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotificationEntry {
    pub id: i64,
    pub event: Event,
    pub application: Option<String>,
    pub launch_setting: Option<String>,
    pub group: Option<String>,
    /// The channel kind (`webhook`).
    pub channel: String,
    /// Where it is sent.
    pub endpoint: String,
    /// Whether the body is signed.
    pub signed: bool,
    pub status: Delivery,
    pub attempts: i32,
    pub last_error: Option<String>,
    /// How many times the event happened within the folding window.
    pub count: i32,
    pub created_at: DateTime<Utc>,
    pub last_event_at: DateTime<Utc>,
    /// When it is tried next, while pending.
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub delivered_at: Option<DateTime<Utc>>,
    /// What is sent (its `url` relative to the manager).
    pub payload: Notice,
}

/// One page of notifications, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotificationPage {
    pub items: Vec<NotificationEntry>,
    /// Cursor (`after`) of the next, older page, when there is one.
    pub next: Option<i64>,
}
