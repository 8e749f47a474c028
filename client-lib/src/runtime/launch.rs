//! Commands from the manager: launches with their overlap policy on the bounded pool, stop,
//! interrupt; and the run of a standalone agent.

use crate::telemetry::TraceHeaders;
use crate::{
    agent::{Registered, with_grace},
    consumer,
    context::RunInfo,
    shared::{Running, Shared, count},
};
use am_domain::{
    catalog::OverlapPolicy,
    params::effective_values,
    wire::{
        self, ActivationEvent, ActivationReport, ActivationResult, Launch, LaunchHead, ToManager,
        ToNode, WireError,
    },
};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// What became of a launch command on this node.
enum Admission {
    /// Accepted: it runs with `permit`, or once a slot frees (`None`), after the runs it
    /// interrupted have finished (`wait_for`).
    Taken {
        permit: Option<tokio::sync::OwnedSemaphorePermit>,
        wait_for: Vec<CancellationToken>,
    },
    /// Refused by the overlap policy, with why.
    Skipped(String),
    /// The activation already runs here.
    Duplicate,
}

/// Interrupts the run when it is still going after `limit`.
fn watch_max_run_time(
    limit: am_domain::HumanDuration,
    cancel: CancellationToken,
    done: CancellationToken,
) {
    tokio::spawn(
        async move {
            tokio::select! {
                () = tokio::time::sleep(limit.0) => {
                    tracing::warn!(max_run_time = %limit, "maximum run time reached; interrupting");
                    cancel.cancel();
                }
                () = done.cancelled() => {}
            }
        }
        .in_current_span(),
    );
}

impl Shared {
    /// Answers a launch this node cannot read (a word or shape of a later release): `skipped`
    /// with what it could not read, so the manager hears it at once instead of waiting for a
    /// start, and the operator reads why on the activation.
    pub(super) fn cannot_run(&self, head: LaunchHead, why: &WireError) {
        let reason = format!(
            "this node (protocol version {}) cannot run the launch: {why}",
            wire::PROTOCOL_VERSION
        );
        tracing::warn!(activation_id = %head.activation_id, launch_setting = %head.launch_setting,
            %reason, "launch skipped");
        self.outbox.push(&ToManager::Activation(ActivationReport {
            application: self.application.clone(),
            host: self.host.clone(),
            activation_id: head.activation_id,
            launch_setting: head.launch_setting,
            fencing_token: head.fencing_token,
            event: ActivationEvent::Skipped { reason },
            at: chrono::Utc::now(),
        }));
    }

    /// Acts on a command; `trace` is the context it was published under (its run's parent).
    pub(super) fn command(self: &Arc<Self>, cmd: ToNode, trace: &TraceHeaders) {
        match cmd {
            ToNode::Launch(launch) => self.launch(launch, trace),
            ToNode::Stop(stop) => {
                let running = self.running();
                let list = running.get(&stop.launch_setting);
                tracing::info!(launch_setting = %stop.launch_setting, reason = %stop.reason,
                    activations = list.map_or(0, Vec::len), "stop");
                for r in list.into_iter().flatten() {
                    r.cancel.cancel();
                }
            }
            ToNode::Interrupt(int) => {
                let running = self.running();
                let found = running.values().flatten().find(|r| {
                    r.id == int.activation_id
                        && int.up_to_token.is_none_or(|t| r.fencing_token <= t)
                });
                tracing::info!(activation_id = %int.activation_id, reason = %int.reason,
                    found = found.is_some(), "interrupt");
                if let Some(r) = found {
                    r.cancel.cancel();
                }
            }
        }
    }

    fn launch(self: &Arc<Self>, launch: Launch, trace: &TraceHeaders) {
        let info = Arc::new(RunInfo {
            application: self.application.clone(),
            host: self.host.clone(),
            activation_id: launch.activation_id.clone(),
            launch_setting: launch.launch_setting.clone(),
            agent: launch.agent.clone(),
            fencing_token: launch.fencing_token,
            cancel: self.runs.child_token(),
            outbox: Arc::clone(&self.outbox),
            tally: Arc::default(),
        });
        let span = tracing::info_span!("activation", activation_id = %launch.activation_id,
            launch_setting = %launch.launch_setting, host = %self.host, agent = %launch.agent,
            fencing_token = launch.fencing_token);
        trace.parent_of(&span);
        let _enter = span.enter();
        let skip = |reason: String| {
            tracing::info!(%reason, "launch skipped");
            info.report(ActivationEvent::Skipped { reason });
        };
        let Some((spec, agent)) = self.agents.get(&launch.agent) else {
            return skip(format!(
                "agent `{}` is not offered by this node",
                launch.agent
            ));
        };
        if matches!(agent, Registered::Messages(_)) && launch.subscription.is_none() {
            return skip("a messages agent needs a subscription".into());
        }
        let finished = CancellationToken::new();
        let (permit, wait_for) = match self.admit(&launch, &info, &finished) {
            Admission::Taken { permit, wait_for } => (permit, wait_for),
            Admission::Skipped(reason) => return skip(reason),
            Admission::Duplicate => return,
        };
        self.stats(&launch.launch_setting)
            .breaker()
            .set_threshold(launch.failure_threshold);
        info.report(ActivationEvent::Accepted);
        let params = serde_json::Value::Object(effective_values(&spec.params, &launch.parameters));
        let (agent, prefetch) = (agent.clone(), spec.prefetch);
        let shared = Arc::clone(self);
        drop(_enter);
        tokio::spawn(
            async move {
                for w in wait_for {
                    w.cancelled().await;
                }
                let permit = match permit {
                    Some(p) => Ok(p),
                    None => Arc::clone(&shared.slots).acquire_owned().await,
                };
                let (result, error) = if permit.is_err() {
                    (
                        ActivationResult::Interrupted,
                        Some("node stopping".to_owned()),
                    )
                } else if info.cancel.is_cancelled() {
                    (ActivationResult::Interrupted, None)
                } else {
                    info.report(ActivationEvent::Started);
                    tracing::info!("started");
                    if let Some(limit) = launch.max_run_time.filter(|d| !d.is_zero()) {
                        watch_max_run_time(limit, info.cancel.clone(), finished.clone());
                    }
                    match agent {
                        Registered::Standalone(a) => {
                            shared.run_standalone(&info, a.as_ref(), params).await
                        }
                        Registered::Messages(m) => match m.bind(Arc::clone(&info), params) {
                            Ok(handler) => {
                                consumer::run(&shared, &info, handler.as_ref(), &launch, prefetch)
                                    .await
                            }
                            Err(e) => {
                                shared.report_failure(&info, &e, 1, None, None, None);
                                (ActivationResult::Failed, Some(e.to_string()))
                            }
                        },
                    }
                };
                tracing::info!(?result, error = error.as_deref(), "finished");
                info.report(ActivationEvent::Finished {
                    result,
                    error,
                    counters: Some(info.tally.counters()),
                });
                drop(permit);
                shared.forget(&info);
                finished.cancel();
            }
            .instrument(span.clone()),
        );
    }

    /// Takes `launch` onto this node by its overlap policy: at once when a slot is free, else
    /// queued for one (after the runs it interrupts have ended); refused when the policy says
    /// skip; ignored when the activation already runs here (a command delivered twice).
    fn admit(
        &self,
        launch: &Launch,
        info: &Arc<RunInfo>,
        finished: &CancellationToken,
    ) -> Admission {
        let mut wait_for = Vec::new();
        let mut running = self.running();
        if running
            .values()
            .flatten()
            .any(|r| r.id == launch.activation_id)
        {
            // A command delivered twice (at-least-once) must not run the activation twice.
            tracing::info!("duplicate launch ignored: the activation already runs here");
            return Admission::Duplicate;
        }
        let others = running
            .get(&launch.launch_setting)
            .map_or(&[][..], Vec::as_slice);
        let mut permit = None;
        match launch.overlap {
            OverlapPolicy::Allow => {}
            OverlapPolicy::Skip => {
                if !others.is_empty() {
                    return Admission::Skipped(
                        "an activation of this launch setting is still running (overlap policy: skip)"
                            .into(),
                    );
                }
            }
            OverlapPolicy::Interrupt => {
                for r in others {
                    tracing::info!(interrupted = %r.id, "interrupting the running activation (overlap policy: interrupt)");
                    r.cancel.cancel();
                    wait_for.push(r.finished.clone());
                }
            }
        }
        if wait_for.is_empty() {
            // A full node queues the launch: it is accepted now and starts when a slot
            // frees. A scheduled run never vanishes because of a burst; the manager sees
            // the queue in the heartbeat's running count and sends new launches elsewhere.
            match Arc::clone(&self.slots).try_acquire_owned() {
                Ok(p) => permit = Some(p),
                Err(_) => tracing::info!(
                    capacity = self.capacity,
                    "every slot is busy: the launch waits for one"
                ),
            }
        }
        // Only now, when the launch is taken, so refused ones leave no empty entry behind.
        running
            .entry(launch.launch_setting.clone())
            .or_default()
            .push(Running {
                id: launch.activation_id.clone(),
                fencing_token: launch.fencing_token,
                tally: Arc::clone(&info.tally),
                cancel: info.cancel.clone(),
                finished: finished.clone(),
            });
        Admission::Taken { permit, wait_for }
    }

    /// Removes a finished run from the runs of its launch setting.
    fn forget(&self, info: &RunInfo) {
        let mut running = self.running();
        if let Some(list) = running.get_mut(&info.launch_setting) {
            list.retain(|r| r.id != info.activation_id);
            if list.is_empty() {
                running.remove(&info.launch_setting);
            }
        }
    }

    async fn run_standalone(
        &self,
        info: &Arc<RunInfo>,
        agent: &dyn crate::agent::ErasedStandalone,
        params: serde_json::Value,
    ) -> (ActivationResult, Option<String>) {
        let stats = self.stats(&info.launch_setting);
        let outcome = match agent.run(Arc::clone(info), params) {
            Ok(fut) => with_grace(fut, &info.cancel, self.interrupt_grace).await,
            Err(e) => Err(e),
        };
        match outcome {
            Ok(()) => {
                count(&stats, info, |t| &t.processed);
                stats.success();
                (ActivationResult::Succeeded, None)
            }
            Err(e) if e.is_interrupted() || info.cancel.is_cancelled() => {
                (ActivationResult::Interrupted, None)
            }
            Err(e) => {
                count(&stats, info, |t| &t.failed);
                self.report_failure(info, &e, 1, None, None, None);
                if !e.is_temporary()
                    && let Some(trip) = stats.failure(&e, None)
                {
                    self.report_trip(info, trip);
                }
                (ActivationResult::Failed, Some(e.to_string()))
            }
        }
    }
}
