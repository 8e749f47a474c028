//! Samples what the broker holds: ready messages and consumers of every queue nodes consume
//! and of every unrouted queue, by passive declares (read-only), into the replica's
//! [`DepthsHandle`] for the API, the Broker page and `/metrics`.

use super::apply::is_not_found;
use am_services::topology::{self as rules, Depths, DepthsHandle};
use chrono::Utc;
use lapin::{Channel, Connection, options::QueueDeclareOptions, types::FieldTable};
use sea_orm::DatabaseConnection;

/// One sample of every queue the reconciler applied.
pub(super) async fn sample(
    db: &DatabaseConnection,
    conn: &Connection,
    into: &DepthsHandle,
) -> anyhow::Result<()> {
    let (applied, _) = rules::applied(db).await?;
    let mut queues = rules::sampled_queues(&applied.objects);
    let mut channel: Option<Channel> = None;
    for q in &mut queues {
        let ch = match channel.as_ref().filter(|c| c.status().connected()) {
            Some(c) => c.clone(),
            None => {
                let c = conn.create_channel().await?;
                channel = Some(c.clone());
                c
            }
        };
        let declared = ch
            .queue_declare(
                q.queue.as_str().into(),
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await;
        match declared {
            Ok(d) => {
                q.ready = d.message_count();
                q.consumers = d.consumer_count();
            }
            // Missing right now (the next full pass declares it again): shown as empty.
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(c) = channel.filter(|c| c.status().connected()) {
        let _ = c.close(200, "sampled".into()).await;
    }
    let sample = Depths {
        sampled_at: Some(Utc::now()),
        queues,
    };
    if let Ok(mut d) = into.write() {
        *d = sample;
    }
    Ok(())
}
