//! The broker side of the replays (dead letters, unrouted messages): a publisher-confirms channel on the manager's
//! broker connection, opened when first needed and again after the connection was lost.

use crate::broker::Link;
use am_domain::wire::names::Names;
use am_services::{
    entity::dead_letters,
    operations::{ReplayBroker, ReplayError, UnroutedBatch},
};
use lapin::{Channel, options::ConfirmSelectOptions};
use std::time::Duration;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// How long a replay batch waits for the broker before its rows count as failed (and stay
/// dead letters, to be replayed again).
const CONNECT_WAIT: Duration = Duration::from_secs(30);

pub struct BrokerPublisher {
    link: Link,
    names: Names,
    stop: CancellationToken,
    channel: Mutex<Option<Channel>>,
}

impl BrokerPublisher {
    pub fn new(link: Link, names: Names, stop: CancellationToken) -> Self {
        Self {
            link,
            names,
            stop,
            channel: Mutex::new(None),
        }
    }

    async fn open(&self) -> Result<Channel, ReplayError> {
        let mut cached = self.channel.lock().await;
        if let Some(c) = cached.as_ref().filter(|c| c.status().connected()) {
            return Ok(c.clone());
        }
        let conn = tokio::time::timeout(CONNECT_WAIT, self.link.connected(&self.stop))
            .await
            .map_err(|_| ReplayError::Unreachable)?
            .ok_or(ReplayError::Stopping)?;
        let channel = conn
            .create_channel()
            .await
            .map_err(|e| ReplayError::NoChannel(e.to_string()))?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| ReplayError::NoConfirms(e.to_string()))?;
        *cached = Some(channel.clone());
        Ok(channel)
    }
}

impl ReplayBroker for BrokerPublisher {
    async fn publish(
        &self,
        rows: &[dead_letters::Model],
        replayed_by: &str,
    ) -> Vec<Result<(), ReplayError>> {
        match self.open().await {
            Ok(channel) => {
                crate::dead_letter_messages::publish_batch(&channel, &self.names, rows, replayed_by)
                    .await
            }
            Err(e) => rows.iter().map(|_| Err(e.clone())).collect(),
        }
    }

    async fn replay_unrouted(
        &self,
        data_queue: &str,
        address: &str,
        max: u64,
        replayed_by: &str,
    ) -> UnroutedBatch {
        match self.open().await {
            Ok(channel) => {
                crate::unrouted::replay_batch(
                    &channel,
                    &self.names,
                    data_queue,
                    address,
                    max,
                    replayed_by,
                )
                .await
            }
            Err(error) => UnroutedBatch {
                moved: 0,
                error: Some(error),
            },
        }
    }
}
