//! Keeping enabled stream launch settings running: one activation each, on every live node of
//! its pool for `MANY` (a node that joins later joins the running activation), consuming the
//! queue the catalog says: a stream whose agent moved to another data queue, or whose data
//! queue changed kind, is interrupted and started again on the new queue (the old queue then
//! leaves the broker as the topology reconciler retires it: docs/runtime.md, Streams follow
//! the catalog).

use super::*;
use crate::runtime::{ending::end_activation, stopping::Ending};
use am_domain::{catalog::LaunchKind, status::EventKind};

/// Enabled stream launch settings run: one activation each (on every live node for `MANY`).
pub(super) async fn keep_streams(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let streams: Vec<String> = launch_settings::Entity::find()
        .select_only()
        .column(launch_settings::Column::Id)
        .filter(launch_settings::Column::Enabled.eq(true))
        .filter(launch_settings::Column::Kind.eq(LaunchKind::Stream.as_str()))
        .into_tuple()
        .all(db)
        .await?;
    if streams.is_empty() {
        return Ok(());
    }
    let mut resolver = Resolver::load(db, &streams, now, cfg.node_timeout).await?;
    for ls in streams {
        let Some(target) = resolver.target(&ls).cloned() else {
            continue;
        };
        let latest = activations::Entity::find()
            .filter(activations::Column::LaunchSettingId.eq(ls.as_str()))
            .filter(activations::Column::ParentId.is_null())
            .order_by_desc(activations::Column::CreatedAt)
            .order_by_desc(activations::Column::Id)
            .one(db)
            .await?;
        match latest {
            Some(a) if status::activation::ACTIVE.contains(&a.status.as_str()) => {
                if a.status == status::activation::WAITING {
                    // Not dispatched yet: its dispatch takes the catalog as it is then.
                    continue;
                }
                if follow_catalog(db, cfg, &target, &a, now).await? {
                    continue;
                }
                if target.concurrency() == Concurrency::Many {
                    join_new_nodes(db, cfg, &mut resolver, &target, &a, now).await?;
                }
            }
            Some(a)
                if a.finished_at
                    .is_some_and(|f| f > now - cfg.stream_restart_delay) => {}
            previous => {
                let key = format!(
                    "stream:{ls}:{}",
                    previous
                        .map(|p| p.id.to_string())
                        .unwrap_or_else(|| "first".into())
                );
                let txn = crate::runtime::begin_write(db).await?;
                let mut plan = Plan::default();
                let start = tracing::info_span!("stream_start", launch_setting = %ls, key = %key);
                let planned = start.in_scope(|| {
                    plan_activation(
                        &mut plan,
                        &mut resolver,
                        cfg,
                        NewActivation {
                            ls: ls.clone(),
                            trigger: Trigger::Stream,
                            requested_by: None,
                            parent: None,
                            group: None,
                            fire_key: Some(key),
                            pinned_host: None,
                            only_hosts: None,
                        },
                        now,
                    )
                });
                if planned.is_err() {
                    continue;
                }
                // Another replica started it first: the unique key refuses the second.
                match plan.write(&txn).await {
                    Ok(()) => txn.commit().await?,
                    Err(e) => {
                        tracing::debug!(launch_setting = %ls, error = %e, "stream activation not started");
                        txn.rollback().await?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Interrupts a running stream activation whose dispatches consume another queue than the
/// catalog now gives its launch setting (once per host: the stop request is a compare-and-set),
/// so that [`keep_streams`] starts it again on the right one. True when it is being restarted.
async fn follow_catalog(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    target: &crate::runtime::resolve::Target,
    a: &activations::Model,
    now: DateTime<Utc>,
) -> ServiceResult<bool> {
    let wanted = target.consumed_queue(&cfg.names);
    let consumed: BTreeSet<String> = activation_hosts::Entity::find()
        .select_only()
        .column(activation_hosts::Column::Consumes)
        .filter(activation_hosts::Column::ActivationId.eq(a.id))
        .filter(activation_hosts::Column::Status.is_in(status::host::ACTIVE))
        .filter(activation_hosts::Column::Consumes.is_not_null())
        .into_tuple::<Option<String>>()
        .all(db)
        .await?
        .into_iter()
        .flatten()
        .collect();
    let Some(stale) = consumed
        .iter()
        .find(|q| wanted.as_deref() != Some(q.as_str()))
    else {
        return Ok(false);
    };
    let reason = match &wanted {
        Some(new) => {
            format!("the catalog moved its messages from `{stale}` to `{new}`: restarting it there")
        }
        None => {
            format!("the catalog no longer gives it messages to consume (it consumed `{stale}`)")
        }
    };
    tracing::info!(activation_id = %a.id, launch_setting = %target.ls.id, %reason,
        "stream follows the catalog");
    end_activation(db, cfg, a, &reason, Ending::Interrupt, now).await?;
    Ok(true)
}

/// A `MANY` stream runs on every live node: nodes that came up since get their launch.
async fn join_new_nodes(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    resolver: &mut Resolver,
    target: &crate::runtime::resolve::Target,
    a: &activations::Model,
    now: DateTime<Utc>,
) -> ServiceResult<()> {
    let running: BTreeSet<String> = activation_hosts::Entity::find()
        .select_only()
        .column(activation_hosts::Column::Host)
        .filter(activation_hosts::Column::ActivationId.eq(a.id))
        .filter(activation_hosts::Column::Status.is_in(status::host::ACTIVE))
        .into_tuple::<String>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let missing: Vec<String> = resolver
        .eligible(target)
        .into_iter()
        .map(|n| n.host.clone())
        .filter(|h| !running.contains(h))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let txn = crate::runtime::begin_write(db).await?;
    let attempt = next_attempt(&txn, a.id).await?;
    let mut plan = Plan::default();
    dispatch_hosts(
        &mut plan,
        cfg,
        target,
        a.id,
        &missing,
        a.fencing_token,
        attempt,
        now,
        EventKind::Joined.because("node came up"),
        a.trace_parent.as_deref(),
    );
    plan.write(&txn).await?;
    txn.commit().await?;
    Ok(())
}
