//! The connection supervisor, the control-queue listener (with the quarantine for unreadable
//! commands) and heartbeats.

use crate::shared::Shared;
use crate::telemetry::TraceHeaders;
use crate::{
    broker::{self, MIN_BACKOFF, next_backoff},
    confirmed::{SendError, landed},
};
use am_domain::wire::{
    self, ActivationCounters, Heartbeat, LaunchHead, QUARANTINE_REASON_HEADER,
    RunningLaunchSetting, ToManager, ToNode,
};
use futures_util::StreamExt;
use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    message::Delivery,
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
        BasicRejectOptions, ConfirmSelectOptions, QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable, LongString},
};
use std::{
    sync::{Arc, atomic::Ordering},
    time::Duration,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

async fn sleep_or_stop(d: Duration, stop: &CancellationToken) -> bool {
    tokio::select! {
        () = tokio::time::sleep(d) => true,
        () = stop.cancelled() => false,
    }
}

/// Keeps one connection up, declares the node's topology on each, publishes the node.
pub(super) async fn supervise(shared: Arc<Shared>, tx: watch::Sender<Option<Arc<Connection>>>) {
    let mut backoff = MIN_BACKOFF;
    loop {
        // Each attempt goes to the next member: after a loss, to another one (addresses.rs).
        let url = shared.brokers.next_url();
        let shown = broker::redact(url);
        let props =
            ConnectionProperties::default().with_connection_name(LongString::from(format!(
                "am-node {}@{} ({})",
                shared.application,
                shared.host,
                shared.topology.names().prefix()
            )));
        let attempt = tokio::select! {
            r = broker::connect(url, props) => r,
            () = shared.stop_io.cancelled() => return,
        };
        match attempt {
            Ok(conn) => {
                let conn = Arc::new(conn);
                let mut events = Box::pin(conn.events_listener());
                match declare(&shared, &conn).await {
                    Ok(()) => {
                        tracing::info!(broker = %shown, "connected to the broker");
                        backoff = MIN_BACKOFF;
                        tx.send_replace(Some(Arc::clone(&conn)));
                        shared
                            .outbox
                            .push(&ToManager::Publication(shared.publication()));
                        let reason = tokio::select! {
                            r = async {
                                while let Some(event) = events.next().await {
                                    if let Some(reason) = broker::lost_by(&conn, &event) {
                                        return reason;
                                    }
                                }
                                "connection closed".to_owned()
                            } => r,
                            () = shared.stop_io.cancelled() => {
                                tx.send_replace(None);
                                broker::close(&conn, 200, "node shutting down").await;
                                return;
                            }
                        };
                        tracing::warn!(broker = %shown, %reason, "lost the broker connection");
                        tx.send_replace(None);
                    }
                    Err(e) => {
                        tracing::warn!(broker = %shown, error = %e, "cannot declare the node's topology");
                        broker::close(&conn, 200, "topology failed").await;
                    }
                }
            }
            Err(e) => {
                tracing::warn!(broker = %shown, error = %e, retry_in = ?backoff, "cannot connect to the broker");
            }
        }
        if !sleep_or_stop(backoff, &shared.stop_io).await {
            return;
        }
        backoff = next_backoff(backoff);
    }
}

async fn declare(shared: &Shared, conn: &Connection) -> Result<(), lapin::Error> {
    let queue = shared
        .topology
        .names()
        .node_queue(&shared.application, &shared.host);
    match declare_once(shared, conn).await {
        // The broker holds the node's queue with other arguments: the classic control queue of
        // a node from before control queues were quorum queues.
        Err(e)
            if broker::is_precondition_failed(&e)
                && e.to_string().contains(&format!("'{queue}'")) =>
        {
            replace_old_node_queue(conn, &queue).await?;
            declare_once(shared, conn).await
        }
        done => done,
    }
}

async fn declare_once(shared: &Shared, conn: &Connection) -> Result<(), lapin::Error> {
    let channel = conn.create_channel().await?;
    shared
        .topology
        .declare_node(&channel, &shared.application, &shared.host)
        .await?;
    channel.close(200, "declared".into()).await
}

/// Deletes the old classic control queue so it can be declared again as a quorum queue, once
/// per node. A launch still waiting in it is dispatched again by the manager's watchdog, which
/// re-dispatches every launch a node did not accept in time.
async fn replace_old_node_queue(conn: &Connection, queue: &str) -> Result<(), lapin::Error> {
    let channel = conn.create_channel().await?;
    let dropped = channel
        .queue_delete(queue.into(), QueueDeleteOptions::default())
        .await?;
    tracing::warn!(
        queue,
        dropped,
        "replaced the node's classic control queue by a quorum queue"
    );
    channel.close(200, "replaced".into()).await
}

/// Listens to the node's control queue, resubscribing after every reconnect.
pub(super) async fn control_loop(shared: Arc<Shared>) {
    let queue = shared
        .topology
        .names()
        .node_queue(&shared.application, &shared.host);
    loop {
        let Some(conn) = shared.link.connected(&shared.stop_intake).await else {
            return;
        };
        if let Err(e) = listen(&shared, &conn, &queue).await {
            tracing::warn!(error = %e, "control consumer ended");
        }
        shared.ready.send_replace(false);
        if !sleep_or_stop(Duration::from_millis(100), &shared.stop_intake).await {
            return;
        }
    }
}

async fn listen(shared: &Arc<Shared>, conn: &Connection, queue: &str) -> Result<(), lapin::Error> {
    let channel = conn.create_channel().await?;
    channel.basic_qos(32, BasicQosOptions::default()).await?;
    let quarantine = conn.create_channel().await?;
    quarantine
        .confirm_select(ConfirmSelectOptions::default())
        .await?;
    let mut consumer = channel
        .basic_consume(
            queue.into(),
            "".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await?;
    shared.ready.send_replace(true);
    loop {
        let delivery = tokio::select! {
            d = consumer.next() => d,
            () = shared.stop_intake.cancelled() => {
                let _ = channel.close(200, "node stopping".into()).await;
                return Ok(());
            }
        };
        let delivery = match delivery {
            Some(d) => d?,
            None => return Ok(()),
        };
        match wire::decode::<ToNode>(&delivery.data) {
            Ok(cmd) => {
                let trace = TraceHeaders::from_amqp(delivery.properties.headers().as_ref());
                shared.command(cmd, &trace);
                delivery.acker.ack(BasicAckOptions::default()).await?;
            }
            Err(e) => {
                if let Some(head) = LaunchHead::of(&delivery.data) {
                    shared.cannot_run(head, &e);
                    delivery.acker.ack(BasicAckOptions::default()).await?;
                    continue;
                }
                shared.quarantined.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(reason = %e, "control message quarantined");
                if let Err(pe) =
                    send_to_quarantine(shared, &quarantine, &delivery, &e.to_string()).await
                {
                    tracing::error!(error = %pe, "cannot quarantine a control message; dropping it");
                    delivery
                        .acker
                        .reject(BasicRejectOptions { requeue: false })
                        .await?;
                } else {
                    delivery.acker.ack(BasicAckOptions::default()).await?;
                }
            }
        }
    }
}

async fn send_to_quarantine(
    shared: &Shared,
    channel: &lapin::Channel,
    delivery: &Delivery,
    reason: &str,
) -> Result<(), SendError> {
    let mut headers = delivery.properties.headers().clone().unwrap_or_default();
    headers.insert(
        QUARANTINE_REASON_HEADER.into(),
        AMQPValue::LongString(LongString::from(reason)),
    );
    headers.insert(
        wire::DL_HOST_HEADER.into(),
        AMQPValue::LongString(LongString::from(shared.host.as_str())),
    );
    let quarantine = shared.topology.names().quarantine_queue();
    let confirm = channel
        .basic_publish(
            "".into(),
            quarantine.as_str().into(),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            &delivery.data,
            BasicProperties::default()
                .with_headers(headers)
                .with_delivery_mode(2),
        )
        .await?
        .await?;
    landed(confirm, &quarantine)
}

/// Sends a heartbeat while connected: the node's capacity, load and each running launch
/// setting's activations and counters.
pub(super) async fn heartbeat_loop(shared: Arc<Shared>) {
    loop {
        if !sleep_or_stop(shared.heartbeat_every, &shared.stop_io).await {
            return;
        }
        if !shared.link.is_up() {
            continue;
        }
        let running: Vec<(String, Vec<ActivationCounters>)> = shared
            .running()
            .iter()
            .map(|(ls, list)| {
                let each = list
                    .iter()
                    .map(|r| ActivationCounters {
                        activation_id: r.id.clone(),
                        counters: r.tally.counters(),
                    })
                    .collect();
                (ls.clone(), each)
            })
            .collect();
        let running = running
            .into_iter()
            .map(|(ls, by_activation)| RunningLaunchSetting {
                counters: shared.stats(&ls).counters(),
                launch_setting: ls,
                activations: by_activation
                    .iter()
                    .map(|a| a.activation_id.clone())
                    .collect(),
                by_activation,
            })
            .collect();
        shared.outbox.push(&ToManager::Heartbeat(Heartbeat {
            application: shared.application.clone(),
            host: shared.host.clone(),
            capacity: shared.capacity,
            running,
            load: load_average().await,
            dropped_reports: shared.outbox.dropped(),
            quarantined: shared.quarantined.load(Ordering::Relaxed),
            at: chrono::Utc::now(),
        }));
    }
}

async fn load_average() -> Option<f64> {
    let text = tokio::fs::read_to_string("/proc/loadavg").await.ok()?;
    text.split_whitespace().next()?.parse().ok()
}
