//! Ending an activation and what follows from it: the end is recorded (`settle.rs`) or asked of
//! the nodes (`stopping.rs`, `overlap.rs`), and a member run's end lets its group go on with the
//! next member (`groups.rs`). Every caller outside those modules ends runs through here, so no
//! group is left waiting for a member that ended.

use super::{
    RuntimeConfig, groups,
    overlap::{self, ActiveRun},
    settle::{self, MemberEnded},
    stopping::{self, Ending},
};
use crate::{entity::activations, error::ServiceResult};
use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection};
use uuid::Uuid;

/// Lets the group of a member run that ended go on.
async fn follow(
    db: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    ended: Option<MemberEnded>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    match ended {
        Some(e) => groups::member_settled(db, cfg, &e.member, e.result, now).await,
        None => Ok(()),
    }
}

/// Ends `activation` if all its hosts are done ([`settle::settle`]), then its group goes on.
pub(crate) async fn settle(
    db: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    activation: Uuid,
    error: Option<String>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let ended = settle::settle(db, &cfg.metrics, activation, error, now).await?;
    follow(db, cfg, ended, now).await
}

/// [`settle`] in a transaction that has locked what settling `activation` may write already.
pub(crate) async fn settle_locked(
    db: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    activation: Uuid,
    error: Option<String>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let ended = settle::settle_locked(db, &cfg.metrics, activation, error, now).await?;
    follow(db, cfg, ended, now).await
}

/// Records the end of a (non-group) activation with `result` ([`settle::finish`]), then its
/// group goes on.
pub(crate) async fn finish(
    db: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    a: &activations::Model,
    result: &'static str,
    error: Option<String>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let ended = settle::finish(db, &cfg.metrics, a, result, error, now).await?;
    follow(db, cfg, ended, now).await
}

/// Ends an activation that must no longer run ([`stopping::end_in`]) in the caller's
/// transaction; a waiting member ends at once and its group goes on.
pub(crate) async fn end_in(
    txn: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    a: &activations::Model,
    reason: &str,
    ending: Ending<'_>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let ended = stopping::end_in(txn, cfg, a, reason, ending, now).await?;
    follow(txn, cfg, ended, now).await
}

/// [`end_in`] in a transaction of its own.
pub(crate) async fn end_activation(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    a: &activations::Model,
    reason: &str,
    ending: Ending<'_>,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let txn = super::begin_write(db).await?;
    end_in(&txn, cfg, a, reason, ending, now).await?;
    txn.commit().await?;
    Ok(())
}

/// Interrupts `running` for a new run of `ls` ([`overlap::interrupt`]) in the transaction
/// that records the new run; a waiting member ends at once and its group goes on.
pub(crate) async fn interrupt(
    txn: &impl ConnectionTrait,
    cfg: &RuntimeConfig,
    ls: &str,
    running: &ActiveRun,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let ended = overlap::interrupt(txn, cfg, ls, running, now).await?;
    follow(txn, cfg, ended, now).await
}
