//! The notifier: delivers the notifications runtime and catalog transactions raised
//! (docs/notifications.md). Due rows are claimed first, so several replicas never send one
//! twice; each delivery runs as its own task with a bounded timeout, so one slow endpoint never
//! holds the others up; an endpoint gets at most its per-minute share, the rest wait. Webhooks
//! are `POST`ed; e-mails go through the SMTP relay of `AM_SMTP_URL`.

use am_domain::notify::{Channel, Delivery, Notice};
use am_services::{
    entity::notifications,
    notifications::delivery,
    runtime::{Metrics, RuntimeConfig, SmtpSettings},
};
use chrono::Utc;
use lettre::{
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor,
    message::{Mailbox, header::ContentType},
};
use sea_orm::DatabaseConnection;
use std::{
    collections::{HashMap, HashSet, VecDeque},
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, Instant},
};
use tokio::{sync::Semaphore, task::JoinSet};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Rows claimed per round.
const BATCH: u64 = 200;
/// Deliveries in flight at once.
const IN_FLIGHT: usize = 64;
/// Deliveries in flight at once to one endpoint: a hanging endpoint holds these, the other
/// slots stay for everybody else.
const IN_FLIGHT_PER_ENDPOINT: usize = 8;
const IDLE: Duration = Duration::from_millis(250);
/// The pause after a round that started something: claiming again at once would only find
/// the rows under way, while completions trickle in.
const BUSY: Duration = Duration::from_millis(10);
/// How much of an endpoint's answer is kept as the error.
const ANSWER_CHARS: usize = 300;

/// Why one delivery did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error("the endpoint answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("cannot reach the endpoint: {0}")]
    Connect(String),
    #[error("cannot build the request: {0}")]
    Request(String),
    #[error("no SMTP relay is configured: set AM_SMTP_URL (docs/notifications.md)")]
    NoRelay,
    #[error("the SMTP relay refused the e-mail: {0}")]
    Refused(String),
}

/// The SMTP side of a [`Sender`]: the relay and the sender address.
#[derive(Clone)]
struct Mailer {
    relay: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl Mailer {
    fn new(smtp: &SmtpSettings, timeout: Duration) -> Result<Self, DeliveryError> {
        let relay = AsyncSmtpTransport::<Tokio1Executor>::from_url(&smtp.url)
            .map_err(|e| DeliveryError::Request(format!("AM_SMTP_URL: {e}")))?
            .timeout(Some(timeout))
            .build();
        let from = smtp
            .from
            .parse()
            .map_err(|e| DeliveryError::Request(format!("AM_SMTP_FROM: {e}")))?;
        Ok(Self { relay, from })
    }
}

/// Sends notifications; cheap to clone.
#[derive(Clone)]
pub struct Sender {
    client: reqwest::Client,
    mailer: Option<Mailer>,
    public_url: Option<String>,
    timeout: Duration,
}

impl Sender {
    pub fn new(cfg: &RuntimeConfig) -> Result<Self, DeliveryError> {
        let client = reqwest::Client::builder()
            .timeout(cfg.notify.timeout)
            .connect_timeout(cfg.notify.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("agent-manager/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| DeliveryError::Request(e.to_string()))?;
        let mailer = match &cfg.notify.smtp {
            Some(smtp) => Some(Mailer::new(smtp, cfg.notify.timeout)?),
            None => None,
        };
        Ok(Self {
            client,
            mailer,
            public_url: cfg
                .notify
                .public_url
                .as_deref()
                .map(|u| u.trim_end_matches('/').to_owned()),
            timeout: cfg.notify.timeout,
        })
    }

    /// The body sent for `n`: for a webhook, its notice with an absolute link, its id and the
    /// time of this try, so the signature (over the body) also covers when it was sent; for a
    /// chat webhook, `{"text": …}` with the sentence and the link.
    pub fn body(&self, n: &notifications::Model) -> Result<Vec<u8>, DeliveryError> {
        let notice = self.notice(n)?;
        if Channel::parse(&n.channel) == Some(Channel::Chat) {
            return serde_json::to_vec(&serde_json::json!({ "text": notice.chat_text() }))
                .map_err(|e| DeliveryError::Request(e.to_string()));
        }
        let mut value =
            serde_json::to_value(&notice).map_err(|e| DeliveryError::Request(e.to_string()))?;
        if let Some(o) = value.as_object_mut() {
            o.insert("id".to_owned(), n.id.into());
            o.insert("sent_at".to_owned(), Utc::now().to_rfc3339().into());
        }
        serde_json::to_vec(&value).map_err(|e| DeliveryError::Request(e.to_string()))
    }

    /// The stored notice of `n`, its link made absolute when the manager knows its address.
    fn notice(&self, n: &notifications::Model) -> Result<Notice, DeliveryError> {
        let mut notice: Notice = serde_json::from_value(n.payload.clone())
            .map_err(|e| DeliveryError::Request(format!("stored payload: {e}")))?;
        if let Some(base) = &self.public_url
            && notice.url.starts_with('/')
        {
            notice.url = format!("{base}{}", notice.url);
        }
        Ok(notice)
    }

    /// The e-mail of `n`: from the configured sender to every address of its endpoint, the
    /// subject and plain text of its notice.
    pub fn email(&self, n: &notifications::Model, from: Mailbox) -> Result<Message, DeliveryError> {
        let notice = self.notice(n)?;
        let mut message = Message::builder()
            .from(from)
            .subject(notice.email_subject())
            .header(ContentType::TEXT_PLAIN);
        for address in n
            .endpoint
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
        {
            let to: Mailbox = address
                .parse()
                .map_err(|e| DeliveryError::Request(format!("recipient '{address}': {e}")))?;
            message = message.to(to);
        }
        message
            .body(notice.email_text())
            .map_err(|e| DeliveryError::Request(e.to_string()))
    }

    /// One try of an e-mail: handed to the relay, which answers for the whole message.
    async fn send_email(&self, n: &notifications::Model) -> Result<(), DeliveryError> {
        let Some(mailer) = &self.mailer else {
            return Err(DeliveryError::NoRelay);
        };
        let message = self.email(n, mailer.from.clone())?;
        match tokio::time::timeout(self.timeout, mailer.relay.send(message)).await {
            Err(_) => Err(DeliveryError::Timeout(self.timeout)),
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) if e.is_timeout() => Err(DeliveryError::Timeout(self.timeout)),
            Ok(Err(e)) if e.is_permanent() || e.is_transient() => {
                Err(DeliveryError::Refused(e.to_string()))
            }
            Ok(Err(e)) => Err(DeliveryError::Connect(e.to_string())),
        }
    }

    /// One try: an e-mail through the relay, or a `POST` of the body, signed when the
    /// endpoint has a secret; any 2xx is delivered.
    pub async fn send(&self, n: &notifications::Model) -> Result<(), DeliveryError> {
        if Channel::parse(&n.channel) == Some(Channel::Email) {
            return self.send_email(n).await;
        }
        let body = self.body(n)?;
        let mut req = self
            .client
            .post(&n.endpoint)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("X-Agent-Manager-Event", n.event.as_str())
            .header("X-Agent-Manager-Delivery", n.id.to_string())
            .header(
                "X-Agent-Manager-Timestamp",
                Utc::now().timestamp().to_string(),
            );
        if let Some(secret) = &n.secret {
            req = req.header(
                "X-Agent-Manager-Signature",
                delivery::signature(secret, &body),
            );
        }
        let answer = req.body(body).send().await.map_err(|e| {
            if e.is_timeout() {
                DeliveryError::Timeout(self.timeout)
            } else {
                DeliveryError::Connect(e.to_string())
            }
        })?;
        let status = answer.status();
        if status.is_success() {
            return Ok(());
        }
        let text = answer.text().await.unwrap_or_default();
        Err(DeliveryError::Status {
            status: status.as_u16(),
            body: text.chars().take(ANSWER_CHARS).collect(),
        })
    }
}

/// What this process is sending now: the notifications (so a row still claimed is not sent
/// twice) and how many per endpoint.
#[derive(Default)]
struct InFlight {
    ids: HashSet<i64>,
    per_endpoint: HashMap<String, usize>,
}

impl InFlight {
    /// Takes a slot for `n` unless it is under way already or its endpoint has its share.
    fn start(&mut self, n: &notifications::Model) -> bool {
        let busy = self.per_endpoint.get(&n.endpoint).copied().unwrap_or(0);
        if busy >= IN_FLIGHT_PER_ENDPOINT || self.ids.contains(&n.id) {
            return false;
        }
        self.ids.insert(n.id);
        *self.per_endpoint.entry(n.endpoint.clone()).or_default() += 1;
        true
    }

    fn end(&mut self, n: &notifications::Model) {
        self.ids.remove(&n.id);
        if let Some(busy) = self.per_endpoint.get_mut(&n.endpoint) {
            *busy = busy.saturating_sub(1);
            if *busy == 0 {
                self.per_endpoint.remove(&n.endpoint);
            }
        }
    }
}

/// Deliveries per endpoint within the last minute, per process.
#[derive(Default)]
struct RateCap {
    sent: HashMap<String, VecDeque<Instant>>,
}

impl RateCap {
    /// Whether `endpoint` may get one more now; counts it when so.
    fn allow(&mut self, endpoint: &str, per_minute: u32, now: Instant) -> bool {
        let window = self.sent.entry(endpoint.to_owned()).or_default();
        while window
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
        {
            window.pop_front();
        }
        if window.len() >= per_minute as usize {
            return false;
        }
        window.push_back(now);
        true
    }
}

pub async fn run(db: DatabaseConnection, cfg: Arc<RuntimeConfig>, stop: CancellationToken) {
    let sender = match Sender::new(&cfg) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "the notifier cannot start; notifications wait in the database");
            return;
        }
    };
    let me = format!("notifier-{}", Uuid::new_v4().simple());
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let in_flight = Arc::new(Mutex::new(InFlight::default()));
    let mut cap = RateCap::default();
    let mut tasks = JoinSet::new();
    loop {
        while tasks.try_join_next().is_some() {}
        let now = Utc::now();
        let rows = match delivery::claim(&db, &me, now, BATCH).await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!(error = %e, "the notifier cannot read its notifications");
                Vec::new()
            }
        };
        let mut started = 0;
        for n in rows {
            // Under way, or its endpoint has its share: it stays claimed and comes back.
            if !in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .start(&n)
            {
                continue;
            }
            if !cap.allow(
                &n.endpoint,
                cfg.notify.per_endpoint_per_minute,
                Instant::now(),
            ) {
                let later = now + chrono::Duration::seconds(5);
                if let Err(e) = delivery::postpone(&db, n.id, &me, later).await {
                    tracing::warn!(error = %e, "cannot postpone a notification");
                }
                in_flight
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .end(&n);
                continue;
            }
            let Ok(permit) = slots.clone().acquire_owned().await else {
                return;
            };
            let (db, cfg, sender, me, in_flight) = (
                db.clone(),
                cfg.clone(),
                sender.clone(),
                me.clone(),
                in_flight.clone(),
            );
            started += 1;
            tasks.spawn(async move {
                deliver(&db, &cfg, &sender, &me, &n).await;
                in_flight
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .end(&n);
                drop(permit);
            });
        }
        let pause = if started == 0 { IDLE } else { BUSY };
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = stop.cancelled() => break,
        }
    }
    // Deliveries under way finish (each is bounded by the timeout); what is not claimed waits.
    while tasks.join_next().await.is_some() {}
}

/// One delivery and its outcome, recorded under the claim.
#[tracing::instrument(skip_all, fields(notification = n.id, event = %n.event, endpoint = %n.endpoint))]
async fn deliver(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    sender: &Sender,
    me: &str,
    n: &notifications::Model,
) {
    match delivery::holds(db, n.id, me, Utc::now()).await {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            tracing::warn!(error = %e, "cannot check a notification's claim; it comes back");
            return;
        }
    }
    let outcome = sender.send(n).await;
    let now = Utc::now();
    let channel = Channel::parse(&n.channel);
    let recorded = match outcome {
        Ok(()) => {
            Metrics::inc(&cfg.metrics.notifications_delivered);
            if let Some(c) = channel {
                cfg.metrics.deliveries.delivered(c);
            }
            delivery::delivered(db, n.id, me, now).await.map(|_| ())
        }
        Err(e) => {
            let error = e.to_string();
            tracing::warn!(%error, attempt = n.attempts + 1, "notification not delivered");
            Metrics::inc(&cfg.metrics.notification_failures);
            if let Some(c) = channel {
                cfg.metrics.deliveries.failed(c);
            }
            let retry = delivery::Retry {
                first: cfg.notify.retry_first,
                budget: cfg.notify.give_up,
            };
            match delivery::attempt_failed(db, n, me, &error, retry, now).await {
                Ok(Delivery::Failed) => {
                    Metrics::inc(&cfg.metrics.notifications_given_up);
                    tracing::error!(%error, "notification given up after its retry budget");
                    Ok(())
                }
                Ok(_) => Ok(()),
                Err(e) => Err(e),
            }
        }
    };
    if let Err(e) = recorded {
        // The claim expires and the notification is tried again: at least once, never lost.
        tracing::warn!(error = %e, "cannot record a notification's delivery");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, endpoint: &str) -> notifications::Model {
        notifications::Model {
            id,
            event: "node_lost".into(),
            fold_key: String::new(),
            application_id: None,
            launch_setting_id: None,
            group_id: None,
            channel: "webhook".into(),
            endpoint: endpoint.into(),
            secret: None,
            payload: serde_json::Value::Null,
            count: 1,
            status: "pending".into(),
            attempts: 0,
            last_error: None,
            created_at: Utc::now(),
            last_event_at: Utc::now(),
            next_attempt_at: Utc::now(),
            claimed_by: None,
            claimed_until: None,
            delivered_at: None,
            resent_at: None,
        }
    }

    #[test]
    fn a_chat_webhook_gets_the_sentence_and_an_absolute_link() {
        let mut cfg = RuntimeConfig::new("t");
        cfg.notify.public_url = Some("https://am.example/".into());
        let sender = Sender::new(&cfg).expect("a client");
        let notice = am_domain::notify::Notice::new(
            am_domain::notify::Event::NodeLost,
            Utc::now(),
            "Node h1 of demo is lost.",
            "/nodes#host-h1",
        );
        let mut n = row(7, "http://chat");
        n.payload = serde_json::to_value(&notice).expect("json");
        n.channel = "chat".into();
        let body: serde_json::Value =
            serde_json::from_slice(&sender.body(&n).expect("a body")).expect("json");
        assert_eq!(
            body,
            serde_json::json!({
                "text": "Node h1 of demo is lost.\n<https://am.example/nodes#host-h1|Open in Agent Manager>"
            })
        );
        n.channel = "webhook".into();
        let body: serde_json::Value =
            serde_json::from_slice(&sender.body(&n).expect("a body")).expect("json");
        assert_eq!(body["url"], "https://am.example/nodes#host-h1");
        assert_eq!(body["id"], 7);
        assert!(body["sent_at"].is_string());
    }

    #[test]
    fn one_endpoint_takes_at_most_its_share_of_the_slots() {
        let mut f = InFlight::default();
        let slow: Vec<_> = (0..20).map(|i| row(i, "http://slow")).collect();
        let started = slow.iter().filter(|n| f.start(n)).count();
        assert_eq!(started, IN_FLIGHT_PER_ENDPOINT);
        assert!(
            f.start(&row(100, "http://fast")),
            "another endpoint goes on"
        );
        assert!(!f.start(&row(100, "http://fast")), "never twice at once");
        f.end(&slow[0]);
        assert!(f.start(&slow[19]), "a slot came free");
    }

    #[test]
    fn an_endpoint_gets_its_share_per_minute_and_then_waits() {
        let mut cap = RateCap::default();
        let t0 = Instant::now();
        assert!(cap.allow("a", 2, t0));
        assert!(cap.allow("a", 2, t0));
        assert!(!cap.allow("a", 2, t0));
        assert!(cap.allow("b", 2, t0), "another endpoint has its own share");
        assert!(cap.allow("a", 2, t0 + Duration::from_secs(60)));
    }
}
