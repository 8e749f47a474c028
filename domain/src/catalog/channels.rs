//! Where an entity's notifications go: the six fields an application, a launch setting and a
//! schedule group each carry, declared once. Part of the catalog.

use crate::notify::{Event, WebhookFormat};
use serde::{
    Deserialize, Deserializer, Serialize,
    de::{self, IgnoredAny, MapAccess, Visitor},
};
use std::fmt;

/// The notification channels of an application (every notification of its agents), a launch
/// setting or a schedule group (what is told about it, in place of its application's):
/// docs/notifications.md. In documents its fields sit beside the entity's own
/// (`#[serde(flatten)]`).
///
/// ```
/// use am_domain::catalog::{Application, Channels};
/// let app: Application = serde_json::from_str(
///     r#"{"id": "billing", "default_pool": "p", "notify_email": "ops@example.com"}"#,
/// ).unwrap();
/// assert_eq!(app.channels.notify_email.as_deref(), Some("ops@example.com"));
/// assert_eq!(app.channels.webhook_url, None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Channels {
    /// Gets the notifications as a signed JSON POST (for a launch setting or a group: in place
    /// of its application's webhook).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_url: Option<String>,
    /// The key that signs what the webhook gets (`X-Agent-Manager-Signature`). Write-only:
    /// never serialized (pages, API answers, export, audit); a write that leaves it out keeps
    /// the stored one and an empty string removes it ([`super::keep_secrets`]).
    #[serde(default, skip_serializing)]
    pub webhook_secret: Option<String>,
    /// `json` (the default) or `chat` (a Slack- or Mattermost-compatible incoming webhook).
    #[serde(default, skip_serializing_if = "WebhookFormat::is_json")]
    pub webhook_format: WebhookFormat,
    /// Addresses, separated by commas, that get the notifications as an e-mail
    /// ([`crate::notify::email_recipients`]); a launch setting's or a group's list replaces
    /// its application's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify_email: Option<String>,
    /// The events the webhook is told; empty: every event ([`crate::notify::wants`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub webhook_events: Vec<Event>,
    /// The events the e-mail addresses are told; empty: every event.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub email_events: Vec<Event>,
}

impl Channels {
    /// The field names, as documents spell them.
    pub const FIELDS: [&'static str; 6] = [
        "webhook_url",
        "webhook_secret",
        "webhook_format",
        "notify_email",
        "webhook_events",
        "email_events",
    ];

    /// The field a deserialization error of these channels is about, and the error without
    /// it. A flattened struct is read from serde's buffer of the entity's other fields, which
    /// no path tracker follows, so each field's error names the field
    /// (`webhook_format: unknown variant ...`) for the reader to put back on the error's path.
    ///
    /// ```
    /// use am_domain::catalog::Channels;
    /// assert_eq!(
    ///     Channels::field_of_error("webhook_format: unknown variant `xml`"),
    ///     Some(("webhook_format", "unknown variant `xml`"))
    /// );
    /// assert_eq!(Channels::field_of_error("title: too long"), None);
    /// ```
    pub fn field_of_error(message: &str) -> Option<(&'static str, &str)> {
        let (field, rest) = message.split_once(FIELD_SEPARATOR)?;
        let field = Self::FIELDS.into_iter().find(|f| *f == field)?;
        Some((field, rest))
    }
}

/// Between the field and the error in the message of a field's error.
const FIELD_SEPARATOR: &str = ": ";

impl<'de> Deserialize<'de> for Channels {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // As a struct: flattened, serde then hands over these fields only and leaves the
        // others for the entity to accept or refuse.
        deserializer.deserialize_struct("Channels", &Self::FIELDS, ChannelsVisitor)
    }
}

struct ChannelsVisitor;

impl<'de> Visitor<'de> for ChannelsVisitor {
    type Value = Channels;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("notification channels")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Channels, A::Error> {
        let mut c = Channels::default();
        let mut seen = [false; Channels::FIELDS.len()];
        while let Some(key) = map.next_key::<String>()? {
            let Some(i) = Channels::FIELDS.iter().position(|f| *f == key) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let field = Channels::FIELDS[i];
            if std::mem::replace(&mut seen[i], true) {
                return Err(de::Error::duplicate_field(field));
            }
            match i {
                0 => c.webhook_url = value(&mut map, field)?,
                1 => c.webhook_secret = value(&mut map, field)?,
                2 => c.webhook_format = value(&mut map, field)?,
                3 => c.notify_email = value(&mut map, field)?,
                4 => c.webhook_events = value(&mut map, field)?,
                _ => c.email_events = value(&mut map, field)?,
            }
        }
        Ok(c)
    }
}

/// The value of `field`, an error naming the field ([`Channels::field_of_error`]).
fn value<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    map: &mut A,
    field: &'static str,
) -> Result<T, A::Error> {
    map.next_value()
        .map_err(|e| de::Error::custom(format_args!("{field}{FIELD_SEPARATOR}{e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Application, ScheduleGroup};

    fn app(doc: serde_json::Value) -> Result<Application, String> {
        serde_json::from_value(doc).map_err(|e| e.to_string())
    }

    #[test]
    fn the_fields_sit_beside_the_entitys_and_read_back_the_same() {
        let doc = serde_json::json!({
            "id": "a", "title": "A", "default_pool": "p",
            "webhook_url": "https://hooks.example/x", "webhook_secret": "k",
            "webhook_format": "chat", "notify_email": "ops@example.com",
            "webhook_events": ["breaker_tripped"], "email_events": ["node_lost"],
        });
        let read = app(doc.clone()).expect("an application");
        assert_eq!(read.channels.webhook_secret.as_deref(), Some("k"));
        assert_eq!(read.channels.webhook_format, WebhookFormat::Chat);
        let mut written = serde_json::to_value(&read).expect("json");
        assert_eq!(written.get("webhook_secret"), None, "write-only");
        written["webhook_secret"] = "k".into();
        assert_eq!(written, doc);
        // Defaults are left out, as before.
        let plain = app(serde_json::json!({"id": "a", "default_pool": "p"})).expect("plain");
        assert_eq!(plain.channels, Channels::default());
        assert_eq!(
            serde_json::to_value(&plain).expect("json"),
            serde_json::json!({"id": "a", "title": "", "default_pool": "p"})
        );
    }

    #[test]
    fn an_error_names_its_field_and_unknown_fields_are_still_refused() {
        let e = app(serde_json::json!({"id": "a", "default_pool": "p", "webhook_format": "xml"}))
            .expect_err("bad format");
        let (field, rest) = Channels::field_of_error(&e).expect("named");
        assert_eq!(field, "webhook_format");
        assert!(rest.starts_with("unknown variant `xml`"), "{rest}");
        let e =
            app(serde_json::json!({"id": "a", "default_pool": "p", "webhook_events": ["nope"]}))
                .expect_err("bad event");
        assert_eq!(
            Channels::field_of_error(&e).map(|(f, _)| f),
            Some("webhook_events")
        );
        let e = app(serde_json::json!({"id": "a", "default_pool": "p", "colour": "red"}))
            .expect_err("unknown field");
        assert!(e.contains("unknown field `colour`"), "{e}");
        let g: Result<ScheduleGroup, _> = serde_json::from_str(
            r#"{"id":"g","application":"a","cron":"0 2 * * *","notify_email":"x@example.com","notify_email":"y@example.com"}"#,
        );
        let e = g.expect_err("a field twice").to_string();
        assert!(e.contains("duplicate field `notify_email`"), "{e}");
    }
}
