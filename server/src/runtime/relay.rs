//! The outbox relay: publishes broker commands written by runtime transactions, with publisher
//! confirms, and marks them sent. Rows are claimed first, so several replicas relay without
//! sending a row twice; a claim that outlives its replica expires and another one takes over.
//! A broker outage only delays: unsent rows stay in the table.

use crate::broker::Link;
use am_services::{
    entity::outbox,
    runtime::{Metrics, RuntimeConfig},
};
use chrono::Utc;
use lapin::{
    BasicProperties,
    options::{BasicPublishOptions, ConfirmSelectOptions},
};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait, Query},
};
use std::{sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Rows per round.
const BATCH: u64 = 1000;
/// How long a claim holds before another replica may take the rows.
const CLAIM: chrono::Duration = chrono::Duration::seconds(30);
const IDLE: Duration = Duration::from_millis(100);

pub async fn run(
    db: DatabaseConnection,
    cfg: Arc<RuntimeConfig>,
    link: Link,
    stop: CancellationToken,
) {
    let me = format!("relay-{}", Uuid::new_v4().simple());
    loop {
        let Some(conn) = link.connected(&stop).await else {
            return;
        };
        let channel = match conn.create_channel().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "relay cannot open a channel");
                if pause(&stop, Duration::from_millis(500)).await {
                    return;
                }
                continue;
            }
        };
        if let Err(e) = channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
        {
            tracing::warn!(error = %e, "relay cannot enable publisher confirms");
            continue;
        }
        loop {
            match round(&db, &cfg, &channel, &me).await {
                Ok(0) => {
                    if pause(&stop, IDLE).await {
                        return;
                    }
                }
                Ok(_) => {
                    if stop.is_cancelled() {
                        return;
                    }
                }
                Err(RoundError::Broker(e)) => {
                    tracing::warn!(error = %e, "relay lost the broker; unsent commands wait in the outbox");
                    break;
                }
                Err(RoundError::Db(e)) => {
                    tracing::warn!(error = %e, "relay cannot read the outbox");
                    if pause(&stop, Duration::from_secs(1)).await {
                        return;
                    }
                }
            }
        }
        if pause(&stop, Duration::from_millis(200)).await {
            return;
        }
    }
}

/// `true` when stopping.
async fn pause(stop: &CancellationToken, d: Duration) -> bool {
    tokio::select! {
        () = tokio::time::sleep(d) => false,
        () = stop.cancelled() => true,
    }
}

#[derive(Debug, thiserror::Error)]
enum RoundError {
    #[error("{0}")]
    Broker(String),
    #[error("{0}")]
    Db(#[from] sea_orm::DbErr),
}

/// Claims, publishes and marks one batch; returns how many rows it published.
#[tracing::instrument(skip_all)]
async fn round(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    channel: &lapin::Channel,
    me: &str,
) -> Result<usize, RoundError> {
    let now = Utc::now();
    let claimable = Query::select()
        .column(outbox::Column::Id)
        .from(outbox::Entity)
        .and_where(outbox::Column::SentAt.is_null())
        .and_where(outbox::Column::AvailableAt.lte(now))
        .cond_where(
            sea_orm::Condition::any()
                .add(outbox::Column::ClaimedUntil.is_null())
                .add(outbox::Column::ClaimedUntil.lt(now)),
        )
        .order_by(outbox::Column::Id, sea_orm::Order::Asc)
        .limit(BATCH)
        .to_owned();
    outbox::Entity::update_many()
        .col_expr(outbox::Column::ClaimedBy, Expr::value(Some(me.to_owned())))
        .col_expr(outbox::Column::ClaimedUntil, Expr::value(Some(now + CLAIM)))
        .filter(outbox::Column::Id.in_subquery(claimable))
        .exec(db)
        .await?;
    let rows = outbox::Entity::find()
        .filter(outbox::Column::ClaimedBy.eq(me))
        .filter(outbox::Column::SentAt.is_null())
        .filter(outbox::Column::ClaimedUntil.gt(now))
        .order_by_asc(outbox::Column::Id)
        .limit(BATCH)
        .all(db)
        .await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let mut pending = Vec::with_capacity(rows.len());
    let mut broken = None;
    for row in &rows {
        let published = channel
            .basic_publish(
                row.exchange.as_str().into(),
                row.routing_key.as_str().into(),
                BasicPublishOptions::default(),
                &row.payload,
                BasicProperties::default()
                    .with_delivery_mode(2)
                    .with_content_type("application/json".into())
                    .with_message_id(row.message_id.as_str().into()),
            )
            .await;
        match published {
            Ok(confirm) => pending.push((row.id, confirm)),
            Err(e) => {
                broken = Some(e.to_string());
                break;
            }
        }
    }
    let mut sent = Vec::with_capacity(pending.len());
    for (id, confirm) in pending {
        match confirm.await {
            Ok(c) if c.is_ack() => sent.push(id),
            Ok(_) => {}
            Err(e) => {
                broken.get_or_insert(e.to_string());
            }
        }
    }
    let done = Utc::now();
    for chunk in sent.chunks(500) {
        outbox::Entity::update_many()
            .col_expr(outbox::Column::SentAt, Expr::value(Some(done)))
            .filter(outbox::Column::Id.is_in(chunk.iter().copied()))
            .exec(db)
            .await?;
    }
    Metrics::add(&cfg.metrics.outbox_published, sent.len() as u64);
    // What the broker refused or what the connection lost goes back, a little later.
    let unsent: Vec<i64> = rows
        .iter()
        .map(|r| r.id)
        .filter(|id| !sent.contains(id))
        .collect();
    if !unsent.is_empty() {
        let reason = broken
            .clone()
            .unwrap_or_else(|| "the broker did not confirm the publication".to_owned());
        Metrics::add(&cfg.metrics.outbox_failures, unsent.len() as u64);
        for chunk in unsent.chunks(500) {
            outbox::Entity::update_many()
                .col_expr(
                    outbox::Column::ClaimedBy,
                    Expr::value(Option::<String>::None),
                )
                .col_expr(
                    outbox::Column::ClaimedUntil,
                    Expr::value(Option::<chrono::DateTime<Utc>>::None),
                )
                .col_expr(
                    outbox::Column::Attempts,
                    Expr::col(outbox::Column::Attempts).add(1),
                )
                .col_expr(outbox::Column::LastError, Expr::value(Some(reason.clone())))
                .col_expr(
                    outbox::Column::AvailableAt,
                    Expr::value(done + chrono::Duration::seconds(1)),
                )
                .filter(outbox::Column::Id.is_in(chunk.iter().copied()))
                .exec(db)
                .await?;
        }
    }
    match broken {
        Some(e) => Err(RoundError::Broker(e)),
        None => Ok(sent.len()),
    }
}
