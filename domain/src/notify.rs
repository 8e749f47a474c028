//! Notifications (docs/notifications.md): the events operators are told about, the payload each
//! channel receives, the retry schedule of a delivery and how repeats are folded. Pure: the
//! manager writes and delivers them, the browser shows them.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

mod email;

pub use email::{EMAIL_SUBJECT_CHARS, MAX_EMAIL_RECIPIENTS, email_recipients};

/// Something that needs an operator. The serde name is the stable `event` of the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// A launch setting's breaker tripped (it is disabled with it).
    BreakerTripped,
    /// A launch setting was disabled by an operator or the command line.
    LaunchSettingDisabled,
    /// A schedule group was disabled, by its breaker or by someone.
    ScheduleGroupDisabled,
    /// The watchdog gave an activation up as lost: no heartbeat within the work timeout.
    ActivationLost,
    /// A node stopped sending heartbeats.
    NodeLost,
    /// A lost node is heard from again.
    NodeBack,
    /// A launch setting's dead letters reached its `notify_threshold` (told again only after
    /// they fell below it).
    DeadLettersThreshold,
    /// A schedule group's fire was dropped by its misfire policy `skip`.
    ScheduleMissed,
    /// An activation of a launch setting that asks for it (`notify_on_failure`) failed.
    ActivationFailed,
    /// A bulk operation ended (succeeded, failed for some items, or was cancelled), with its
    /// counts; told to the applications it touched.
    OperationFinished,
    /// A data queue's exchange is held on the broker by someone else (another manager) with
    /// other arguments: the manager leaves it alone, and its launch settings get none of what
    /// is published there. Told when a pass first meets it.
    BrokerConflict,
    /// A channel's *Send test*.
    Test,
}

impl Event {
    pub const ALL: [Event; 12] = [
        Event::BreakerTripped,
        Event::LaunchSettingDisabled,
        Event::ScheduleGroupDisabled,
        Event::ActivationLost,
        Event::NodeLost,
        Event::NodeBack,
        Event::DeadLettersThreshold,
        Event::ScheduleMissed,
        Event::ActivationFailed,
        Event::OperationFinished,
        Event::BrokerConflict,
        Event::Test,
    ];

    /// The serde name, as stored, sent and filtered on.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::BreakerTripped => "breaker_tripped",
            Event::LaunchSettingDisabled => "launch_setting_disabled",
            Event::ScheduleGroupDisabled => "schedule_group_disabled",
            Event::ActivationLost => "activation_lost",
            Event::NodeLost => "node_lost",
            Event::NodeBack => "node_back",
            Event::DeadLettersThreshold => "dead_letters_threshold",
            Event::ScheduleMissed => "schedule_missed",
            Event::ActivationFailed => "activation_failed",
            Event::OperationFinished => "operation_finished",
            Event::BrokerConflict => "broker_conflict",
            Event::Test => "test",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == s)
    }
}

/// What a bulk operation did, as its notice tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Counts {
    /// Items it selected.
    pub total: i64,
    /// Items it processed (the failed ones included).
    pub done: i64,
    pub failed: i64,
}

/// What a notification says: the JSON body of a generic webhook, and what the other channel
/// kinds render. Empty fields are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Notice {
    pub event: Event,
    /// When it happened (the first time, for folded repeats).
    pub at: DateTime<Utc>,
    /// One sentence an operator understands without opening anything.
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_setting: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Why: the error type of the failure that caused it, or who did it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// What the manager did about it ([`action`]): a breaker's trip that disabled something
    /// and one that quarantined a host are told apart, and not folded into one another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The bulk operation it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// A bulk operation's counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// The data queue it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_queue: Option<String>,
    /// How many times it happened within the folding window (1 unless repeats were folded in).
    pub count: u32,
    /// The page that explains it, absolute when the manager knows its public address.
    pub url: String,
}

impl Notice {
    /// A notice of `event` now-ish with only the summary and link; the raiser fills the rest.
    pub fn new(event: Event, at: DateTime<Utc>, summary: impl Into<String>, path: &str) -> Self {
        Self {
            event,
            at,
            summary: summary.into(),
            application: None,
            launch_setting: None,
            group: None,
            activation: None,
            host: None,
            reason: None,
            error_type: None,
            error_message: None,
            action: None,
            operation: None,
            counts: None,
            data_queue: None,
            count: 1,
            url: path.to_owned(),
        }
    }

    /// What makes two notices repeats of one another: the event, what it is about and what
    /// the manager did.
    pub fn fold_key(&self) -> String {
        let part = |v: &Option<String>| v.as_deref().unwrap_or("").replace('|', "||");
        let key = format!(
            "{}|{}|{}|{}|{}",
            self.event.as_str(),
            part(&self.launch_setting),
            part(&self.group),
            part(&self.host),
            part(&self.action)
        );
        // Each operation and each data queue is its own subject: two operations ending close
        // together are two notices. Events without one keep the keys they always had.
        let key = match &self.operation {
            Some(op) => format!("{key}|{}", op.replace('|', "||")),
            None => key,
        };
        match &self.data_queue {
            Some(dq) => format!("{key}|dq:{}", dq.replace('|', "||")),
            None => key,
        }
    }

    /// The text of a chat message: the summary, how many times, and the link in the
    /// `<url|label>` form Slack and Mattermost both turn into a link.
    pub fn chat_text(&self) -> String {
        let repeats = if self.count > 1 {
            format!(" ({} times)", self.count)
        } else {
            String::new()
        };
        format!(
            "{}{repeats}\n<{}|Open in Agent Manager>",
            self.summary, self.url
        )
    }
}

/// What a webhook expects (`webhook_format` of an application or launch setting).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum WebhookFormat {
    /// The [`Notice`] as JSON, for programs.
    #[default]
    Json,
    /// A Slack- or Mattermost-compatible incoming webhook: `{"text": …}`, a sentence and the
    /// link, for people.
    Chat,
}

impl WebhookFormat {
    pub const ALL: [WebhookFormat; 2] = [WebhookFormat::Json, WebhookFormat::Chat];

    /// The serde name, as stored and in forms.
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookFormat::Json => "json",
            WebhookFormat::Chat => "chat",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == s)
    }

    pub fn is_json(&self) -> bool {
        *self == WebhookFormat::Json
    }

    /// The channel that delivers this format.
    pub fn channel(self) -> Channel {
        match self {
            WebhookFormat::Json => Channel::Webhook,
            WebhookFormat::Chat => Channel::Chat,
        }
    }
}

/// The [`Notice::action`]s.
pub mod action {
    /// A launch setting or schedule group was disabled.
    pub const DISABLED: &str = "disabled";
    /// A host was quarantined for a launch setting (`MANY` breaker).
    pub const QUARANTINED: &str = "quarantined";
    /// A schedule group was still running its previous fire when the next one came.
    pub const OVERRAN: &str = "overran";
    /// A schedule group had no succeeded run within its dead man's switch window.
    pub const NO_SUCCESS: &str = "no_success";
}

/// How a notification reaches its endpoint. The serde name is what is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// A JSON `POST` of the [`Notice`], signed when the endpoint has a secret.
    Webhook,
    /// A JSON `POST` of `{"text": …}` ([`Notice::chat_text`]) to a Slack- or
    /// Mattermost-compatible incoming webhook.
    Chat,
    /// A plain-text e-mail ([`Notice::email_subject`], [`Notice::email_text`]) over the
    /// manager's SMTP relay (`AM_SMTP_URL`) to the addresses of `notify_email`.
    Email,
}

impl Channel {
    pub const ALL: [Channel; 3] = [Channel::Webhook, Channel::Chat, Channel::Email];

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Webhook => "webhook",
            Channel::Chat => "chat",
            Channel::Email => "email",
        }
    }

    /// Its place in [`Channel::ALL`], for per-channel counters.
    pub fn index(self) -> usize {
        match self {
            Channel::Webhook => 0,
            Channel::Chat => 1,
            Channel::Email => 2,
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// Delivery state of a notification. The serde name is what is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Not delivered yet; tried again at its next attempt time.
    Pending,
    Delivered,
    /// Given up on after the retry budget; *Resend* makes it pending again.
    Failed,
}

impl Delivery {
    pub const ALL: [Delivery; 3] = [Delivery::Pending, Delivery::Delivered, Delivery::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Pending => "pending",
            Delivery::Delivered => "delivered",
            Delivery::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

/// Longest wait between two tries of a delivery.
pub const MAX_RETRY_DELAY: Duration = Duration::minutes(10);

/// How long after failed try number `attempts` (1 = the first) the next one is made: `first`,
/// doubling, at most [`MAX_RETRY_DELAY`].
pub fn retry_delay(attempts: u32, first: Duration) -> Duration {
    let exp = attempts.saturating_sub(1).min(20);
    let ms = first.num_milliseconds().max(1).saturating_mul(1_i64 << exp);
    Duration::milliseconds(ms).min(MAX_RETRY_DELAY)
}

/// Whether a delivery first tried at `first` is given up on at `now` after a failed try.
pub fn give_up(first: DateTime<Utc>, now: DateTime<Utc>, budget: Duration) -> bool {
    now - first >= budget
}

/// Whether a channel that chose `events` (empty: every event) is told `event`. A *Send test*
/// always goes: it checks the channel, whatever it listens to.
pub fn wants(events: &[Event], event: Event) -> bool {
    event == Event::Test || events.is_empty() || events.contains(&event)
}

/// A channel's chosen events as stored: their names, separated by commas (`None`: every event).
pub fn events_to_text(events: &[Event]) -> Option<String> {
    (!events.is_empty()).then(|| {
        events
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join(",")
    })
}

/// The events of [`events_to_text`]; a name this version does not know is left out.
pub fn events_from_text(text: Option<&str>) -> Vec<Event> {
    text.unwrap_or_default()
        .split(',')
        .filter_map(|name| Event::parse(name.trim()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_channel_is_told_the_events_it_chose_and_every_test() {
        assert!(wants(&[], Event::NodeLost), "none chosen: every event");
        let chosen = [Event::BreakerTripped, Event::ScheduleMissed];
        assert!(wants(&chosen, Event::ScheduleMissed));
        assert!(!wants(&chosen, Event::NodeLost));
        assert!(wants(&chosen, Event::Test));
        let text = events_to_text(&chosen);
        assert_eq!(text.as_deref(), Some("breaker_tripped,schedule_missed"));
        assert_eq!(events_from_text(text.as_deref()), chosen);
        assert!(events_from_text(None).is_empty());
        assert_eq!(events_to_text(&[]), None);
    }

    #[test]
    fn events_and_states_are_stored_by_their_serde_names() {
        for e in Event::ALL {
            let json = serde_json::to_string(&e).expect("json");
            assert_eq!(json, format!("\"{}\"", e.as_str()));
            assert_eq!(Event::parse(e.as_str()), Some(e));
        }
        for c in Channel::ALL {
            let json = serde_json::to_string(&c).expect("json");
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(Channel::parse(c.as_str()), Some(c));
            assert_eq!(Channel::ALL[c.index()], c);
        }
        assert_eq!(WebhookFormat::Chat.channel(), Channel::Chat);
        for f in WebhookFormat::ALL {
            let json = serde_json::to_string(&f).expect("json");
            assert_eq!(json, format!("\"{}\"", f.as_str()));
            assert_eq!(WebhookFormat::parse(f.as_str()), Some(f));
        }
        assert_eq!(
            serde_json::to_string(&WebhookFormat::Chat).expect("json"),
            "\"chat\""
        );
        for d in Delivery::ALL {
            let json = serde_json::to_string(&d).expect("json");
            assert_eq!(json, format!("\"{}\"", d.as_str()));
            assert_eq!(Delivery::parse(d.as_str()), Some(d));
        }
        assert_eq!(Event::parse("breaker"), None);
    }

    #[test]
    fn retries_grow_and_are_capped() {
        let ten = Duration::seconds(10);
        let secs: Vec<i64> = (1..=9).map(|a| retry_delay(a, ten).num_seconds()).collect();
        assert_eq!(secs, [10, 20, 40, 80, 160, 320, 600, 600, 600]);
        assert_eq!(retry_delay(0, ten).num_seconds(), 10);
        assert_eq!(retry_delay(u32::MAX, ten).num_seconds(), 600);
        assert_eq!(
            retry_delay(3, Duration::milliseconds(100)).num_milliseconds(),
            400
        );
    }

    #[test]
    fn repeats_fold_by_event_and_subject_only() {
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let mut a = Notice::new(Event::BreakerTripped, at, "x", "/failures/ls");
        a.launch_setting = Some("ls".into());
        let mut b = a.clone();
        b.summary = "other words".into();
        b.at = at + Duration::minutes(3);
        assert_eq!(a.fold_key(), b.fold_key());
        b.host = Some("h1".into());
        assert_ne!(a.fold_key(), b.fold_key());
        let mut quarantined = b.clone();
        quarantined.action = Some(action::QUARANTINED.into());
        b.action = Some(action::DISABLED.into());
        assert_ne!(quarantined.fold_key(), b.fold_key());
        // A separator inside an id cannot make two subjects collide.
        let mut c = Notice::new(Event::NodeLost, at, "x", "/");
        c.launch_setting = Some("a|".into());
        let mut d = Notice::new(Event::NodeLost, at, "x", "/");
        d.group = Some("|a".into());
        assert_ne!(c.fold_key(), d.fold_key());
        // Two data queues' conflicts are two subjects.
        let mut e = Notice::new(Event::BrokerConflict, at, "x", "/broker");
        e.data_queue = Some("orders".into());
        let mut f = e.clone();
        assert_eq!(e.fold_key(), f.fold_key());
        f.data_queue = Some("events".into());
        assert_ne!(e.fold_key(), f.fold_key());
    }

    #[test]
    fn the_chat_text_has_the_summary_the_repeats_and_the_link() {
        let mut n = Notice::new(
            Event::NodeLost,
            DateTime::<Utc>::UNIX_EPOCH,
            "Node h1 of billing is lost.",
            "https://am.example/nodes#host-h1",
        );
        assert_eq!(
            n.chat_text(),
            "Node h1 of billing is lost.\n<https://am.example/nodes#host-h1|Open in Agent Manager>"
        );
        n.count = 3;
        assert!(
            n.chat_text()
                .starts_with("Node h1 of billing is lost. (3 times)\n")
        );
    }

    #[test]
    fn the_budget_is_counted_from_the_first_try() {
        let first = DateTime::<Utc>::UNIX_EPOCH;
        assert!(!give_up(
            first,
            first + Duration::minutes(59),
            Duration::hours(1)
        ));
        assert!(give_up(
            first,
            first + Duration::hours(1),
            Duration::hours(1)
        ));
    }
}
