//! Demo traffic for the data queues (`AM_DEMO_PRODUCE`, see the binary's documentation).

use agent_client::BrokerAddresses;
use anyhow::Context as _;
use lapin::{
    BasicProperties, Connection, ConnectionProperties, ExchangeKind,
    options::{BasicPublishOptions, ConfirmSelectOptions, ExchangeDeclareOptions},
    types::{AMQPValue, FieldTable, LongString},
};
use std::{convert::Infallible, time::Duration};

/// The addresses of the demo catalog's data queues (`demo/catalog.json`).
const DEMO_EXCHANGES: &str = "demo.events,demo.later";

/// Every this many events, one is poisoned.
const POISON_EVERY: u64 = 10;

const SITES: [&str; 3] = ["par", "lyo", "mrs"];

const MIN_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Demo traffic for the data queues (`AM_DEMO_PRODUCE`, see the module documentation).
pub(crate) struct Producer {
    brokers: BrokerAddresses,
    host: String,
    interval: Duration,
    exchanges: Vec<String>,
    /// Makes message ids unique across restarts.
    started: i64,
}

impl Producer {
    /// `None` when `AM_DEMO_PRODUCE` is unset or `0`.
    pub(crate) fn from_env(amqp_url: &str, host: &str) -> anyhow::Result<Option<Self>> {
        let Ok(raw) = std::env::var("AM_DEMO_PRODUCE") else {
            return Ok(None);
        };
        let millis: u64 = raw
            .trim()
            .parse()
            .with_context(|| format!("AM_DEMO_PRODUCE: `{raw}` is not a number of milliseconds"))?;
        if millis == 0 {
            return Ok(None);
        }
        let exchanges: Vec<String> = std::env::var("AM_DEMO_EXCHANGES")
            .unwrap_or_else(|_| DEMO_EXCHANGES.to_owned())
            .split(',')
            .map(|e| e.trim().to_owned())
            .filter(|e| !e.is_empty())
            .collect();
        anyhow::ensure!(
            !exchanges.is_empty(),
            "AM_DEMO_EXCHANGES: name at least one exchange"
        );
        Ok(Some(Self {
            brokers: BrokerAddresses::parse(amqp_url)
                .context("AM_AMQP_URL")?
                .spread_by(host),
            host: host.to_owned(),
            interval: Duration::from_millis(millis),
            exchanges,
            started: chrono::Utc::now().timestamp_millis(),
        }))
    }

    /// Publishes for ever, reconnecting with backoff after any broker error.
    pub(crate) async fn run(self) {
        let mut sent = 0;
        let mut backoff = MIN_BACKOFF;
        loop {
            let props = ConnectionProperties::default()
                .with_connection_name(LongString::from(format!("am-demo-producer {}", self.host)));
            match agent_client::connect(self.brokers.next_url(), props).await {
                Ok(conn) => {
                    let Err(e) = self.publish(&conn, &mut sent, &mut backoff).await;
                    tracing::warn!(error = %e, retry_in = ?backoff,
                        "demo producer: broker error; reconnecting");
                    let _ = conn.close(200, "demo producer reconnects".into()).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, retry_in = ?backoff,
                        "demo producer: cannot connect");
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).clamp(MIN_BACKOFF, MAX_BACKOFF);
        }
    }

    async fn publish(
        &self,
        conn: &Connection,
        sent: &mut u64,
        backoff: &mut Duration,
    ) -> anyhow::Result<Infallible> {
        let channel = conn.create_channel().await?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await?;
        // The manager declares the exchanges from its catalog; until it has, wait and retry.
        for exchange in &self.exchanges {
            channel
                .exchange_declare(
                    exchange.as_str().into(),
                    ExchangeKind::Headers,
                    ExchangeDeclareOptions {
                        passive: true,
                        ..ExchangeDeclareOptions::default()
                    },
                    FieldTable::default(),
                )
                .await
                .with_context(|| format!("exchange `{exchange}` is not declared yet"))?;
        }
        tracing::info!(exchanges = ?self.exchanges, interval = ?self.interval,
            "demo producer publishing");
        *backoff = MIN_BACKOFF;
        let mut tick = tokio::time::interval(self.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            // A span per event, whose context the event carries: the runs that handle it link
            // to it.
            let span = tracing::info_span!("produce", n = *sent);
            let (body, properties) = span.in_scope(|| self.event(*sent));
            for exchange in &self.exchanges {
                let confirmation = channel
                    .basic_publish(
                        exchange.as_str().into(),
                        "".into(),
                        BasicPublishOptions::default(),
                        &body,
                        properties.clone(),
                    )
                    .await?
                    .await?;
                anyhow::ensure!(
                    confirmation.is_ack(),
                    "the broker refused event {sent} on `{exchange}`"
                );
            }
            tracing::debug!(n = *sent, body = %String::from_utf8_lossy(&body),
                "demo event published");
            *sent += 1;
        }
    }

    /// Event number `n`: a JSON body and its properties (message id, `site` header).
    fn event(&self, n: u64) -> (Vec<u8>, BasicProperties) {
        let site = SITES
            .get(n as usize % SITES.len())
            .copied()
            .unwrap_or("par");
        // The fourth event is the first poisoned one, so a fresh demo shows dead letters early.
        let text = if n % POISON_EVERY == 3 {
            "this one is poison"
        } else {
            "hello"
        };
        let body = serde_json::json!({
            "n": n,
            "from": self.host,
            "site": site,
            "at": chrono::Utc::now().to_rfc3339(),
            "text": text,
        });
        let mut headers = FieldTable::default();
        headers.insert("site".into(), AMQPValue::LongString(LongString::from(site)));
        agent_client::telemetry::TraceHeaders::current().add_to(&mut headers);
        let properties = BasicProperties::default()
            .with_message_id(format!("{}-{}-{n}", self.host, self.started).into())
            .with_content_type("application/json".into())
            .with_delivery_mode(2)
            .with_headers(headers);
        (body.to_string().into_bytes(), properties)
    }
}
