//! Notifications by e-mail end to end: a breaker tripped by a real node reaches the
//! application's addresses through a real SMTP conversation with a sink started here; a relay
//! that refuses a recipient is tried again; without a relay the notification says why.

use crate::harness::{CatalogBuilder, SHORT, World};
use am_domain::notify::Channel;
use am_services::{
    entity::notifications as rows,
    notifications::{self, events},
    runtime::{RuntimeConfig, SmtpSettings},
    testing::Backend,
};
use sea_orm::{DatabaseConnection, EntityTrait, QueryOrder};
use serde_json::json;
use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::TcpListener,
};

const PUBLIC: &str = "https://manager.example.com";
const TO: &str = "ops@example.org, oncall@example.org";

/// One message the sink accepted.
#[derive(Debug, Clone)]
struct Mail {
    from: String,
    to: Vec<String>,
    /// The message as sent: headers, a blank line, the body (dot-stuffing undone).
    data: String,
}

/// A minimal SMTP server: enough of RFC 5321 for one client, no TLS, no authentication.
#[derive(Clone, Default)]
struct Sink {
    mails: Arc<Mutex<Vec<Mail>>>,
    /// Recipients to refuse (550) before accepting them.
    refuse: Arc<AtomicUsize>,
}

impl Sink {
    fn mails(&self) -> Vec<Mail> {
        self.mails.lock().expect("mails").clone()
    }

    /// Listens on a free local port; returns the port.
    async fn start(&self) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let port = listener.local_addr().expect("address").port();
        let sink = self.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let sink = sink.clone();
                tokio::spawn(async move {
                    let _ = sink.talk(socket).await;
                });
            }
        });
        port
    }

    async fn talk(&self, socket: tokio::net::TcpStream) -> std::io::Result<()> {
        let (read, mut write) = socket.into_split();
        let mut lines = BufReader::new(read).lines();
        write.write_all(b"220 sink.test ESMTP\r\n").await?;
        let (mut from, mut to) = (String::new(), Vec::new());
        while let Some(line) = lines.next_line().await? {
            let upper = line.to_ascii_uppercase();
            let answer: &[u8] = if upper.starts_with("EHLO") {
                b"250-sink.test\r\n250 8BITMIME\r\n"
            } else if upper.starts_with("HELO") || upper.starts_with("NOOP") {
                b"250 OK\r\n"
            } else if upper.starts_with("RSET") {
                (from, to) = (String::new(), Vec::new());
                b"250 OK\r\n"
            } else if upper.starts_with("MAIL FROM:") {
                from = line[10..].trim().to_owned();
                b"250 OK\r\n"
            } else if upper.starts_with("RCPT TO:") {
                let refuse = self
                    .refuse
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                if refuse {
                    b"550 5.1.1 mailbox unavailable\r\n"
                } else {
                    to.push(line[8..].trim().to_owned());
                    b"250 OK\r\n"
                }
            } else if upper == "DATA" {
                write.write_all(b"354 end with <CRLF>.<CRLF>\r\n").await?;
                let mut data = String::new();
                while let Some(l) = lines.next_line().await? {
                    if l == "." {
                        break;
                    }
                    data.push_str(l.strip_prefix('.').unwrap_or(&l));
                    data.push('\n');
                }
                self.mails.lock().expect("mails").push(Mail {
                    from: std::mem::take(&mut from),
                    to: std::mem::take(&mut to),
                    data,
                });
                b"250 OK queued\r\n"
            } else if upper.starts_with("QUIT") {
                write.write_all(b"221 bye\r\n").await?;
                return Ok(());
            } else {
                b"502 not implemented\r\n"
            };
            write.write_all(answer).await?;
        }
        Ok(())
    }
}

fn config(w: &World, relay: Option<u16>) -> RuntimeConfig {
    let mut cfg = w.config();
    cfg.notify.public_url = Some(PUBLIC.into());
    cfg.notify.retry_first = chrono::Duration::milliseconds(200);
    cfg.notify.timeout = Duration::from_secs(2);
    cfg.notify.smtp = relay.map(|port| SmtpSettings {
        url: format!("smtp://127.0.0.1:{port}"),
        from: "Agent Manager <am@manager.example.com>".into(),
    });
    cfg
}

async fn rows_of(db: &DatabaseConnection) -> Vec<rows::Model> {
    rows::Entity::find()
        .order_by_asc(rows::Column::Id)
        .all(db)
        .await
        .expect("notifications")
}

async fn seed_with_email(w: &World) {
    let mut c = CatalogBuilder::new(w, &["h1"])
        .ls(
            "demo.poison",
            "poison",
            "stream",
            json!({
                "stream_mode": "asap",
                "failure_threshold": 3,
                "retry": { "initial_delay": "100ms", "max_delay": "100ms", "max_deliveries": 1 },
            }),
        )
        .build();
    c.applications[0].channels.notify_email = Some(TO.into());
    w.seed(c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_breaker_trip_reaches_the_addresses_through_the_relay_after_a_refusal() {
    let mut w = World::new(Backend::Sqlite).await;
    let sink = Sink::default();
    // The first recipient of the first try is refused: that try fails, the next is accepted.
    sink.refuse.store(1, Ordering::SeqCst);
    let port = sink.start().await;
    seed_with_email(&w).await;
    w.start_node("h1");
    let cfg = config(&w, Some(port));
    let metrics = cfg.metrics.clone();
    let m = w.manager_with(cfg, &crate::harness::amqp_url()).await;
    w.wait_live(&["h1"]).await;
    w.wait("demo.poison running", SHORT, || async {
        let run = w.runs_of("demo.poison").await.pop()?;
        w.hosts_of(run.id)
            .await
            .iter()
            .any(|h| h.status == "running")
            .then_some(())
    })
    .await;

    w.publish("some poison").await;
    let mail = w
        .wait("the breaker's e-mail at the sink", SHORT, || async {
            sink.mails()
                .into_iter()
                .find(|m| m.data.contains("breaker_tripped"))
        })
        .await;
    assert_eq!(mail.from, "<am@manager.example.com>");
    assert_eq!(
        mail.to,
        ["<ops@example.org>", "<oncall@example.org>"],
        "one message to every address"
    );
    let data = mail.data.replace("=\n", "");
    assert!(
        data.contains("Subject: [Agent Manager] breaker_tripped:"),
        "{data}"
    );
    assert!(data.contains("Launch setting: demo.poison"), "{data}");
    assert!(
        data.contains(&format!(
            "Open in Agent Manager: {PUBLIC}/failures/demo.poison/"
        )),
        "the link is absolute: {data}"
    );

    let stored = rows_of(&w.db).await;
    let row = stored
        .iter()
        .find(|r| r.event == "breaker_tripped")
        .expect("the notification");
    assert_eq!((row.channel.as_str(), row.endpoint.as_str()), ("email", TO));
    // Whichever e-mail went first met the refusal: recorded, tried again, delivered.
    let retried = w
        .wait("the refused try made again", SHORT, || async {
            rows_of(&w.db)
                .await
                .into_iter()
                .find(|r| r.channel == "email" && r.status == "delivered" && r.attempts == 2)
        })
        .await;
    let error = retried.last_error.unwrap_or_default();
    assert!(error.contains("mailbox unavailable"), "{error}");
    let (_, ok, failed) = metrics
        .deliveries
        .snapshot()
        .into_iter()
        .find(|(c, _, _)| *c == Channel::Email)
        .expect("the e-mail counters");
    assert_eq!(failed, 1, "one refused try");
    assert!(ok >= 1, "{ok}");
    m.stop().await;
    w.finish(&["demo.poison"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_relay_an_e_mail_waits_and_says_why() {
    let w = World::new(Backend::Sqlite).await;
    seed_with_email(&w).await;
    let now = chrono::Utc::now();
    let notice = events::node(true, "demo", "h9", None, now);
    notifications::raise(&w.db, notice, now)
        .await
        .expect("raises");
    let m = w
        .manager_with(config(&w, None), &crate::harness::amqp_url())
        .await;
    let row = w
        .wait("the first try recorded", SHORT, || async {
            rows_of(&w.db)
                .await
                .into_iter()
                .find(|r| r.channel == "email" && r.attempts >= 1)
        })
        .await;
    assert_eq!(row.status, "pending", "tried again later, not lost");
    let error = row.last_error.unwrap_or_default();
    assert!(error.contains("AM_SMTP_URL"), "{error}");
    m.stop().await;
}
