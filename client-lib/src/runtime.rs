//! The node's tasks: the connection supervisor, the control-queue listener, launches with
//! their overlap policy on a bounded pool, standalone runs, and heartbeats.

use crate::{
    AgentError, AgentSpec, Classifier, NodeBuilder, Topology,
    agent::Registered,
    breaker::{Breaker, Trip},
    broker::{self, Link, MIN_BACKOFF, next_backoff},
    consumer,
    context::RunInfo,
    outbox::Outbox,
};
use am_domain::{
    params::effective_values,
    wire::{
        self, ActivationEvent, ActivationId, ActivationResult, BreakerTripped, Counters,
        FailureReport, Heartbeat, Launch, Publication, QUARANTINE_REASON_HEADER,
        RunningLaunchSetting, ToManager, ToNode,
    },
};
use futures_util::StreamExt;
use lapin::{
    BasicProperties, Connection, ConnectionProperties, Event,
    message::Delivery,
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
        BasicRejectOptions, ConfirmSelectOptions,
    },
    types::{AMQPValue, FieldTable, LongString},
};
use std::{
    collections::HashMap,
    future::Future,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// One activation running (or about to run) on this node.
#[derive(Debug)]
struct Running {
    id: ActivationId,
    cancel: CancellationToken,
    /// Cancelled when the activation has fully ended (reports sent, message returned).
    finished: CancellationToken,
}

/// Counters and breaker of one launch setting on this node.
#[derive(Debug)]
pub(crate) struct LsStats {
    pub(crate) processed: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) retried: AtomicU64,
    pub(crate) dead_lettered: AtomicU64,
    breaker: Mutex<Breaker>,
}

impl LsStats {
    fn counters(&self) -> Counters {
        Counters {
            processed: self.processed.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            retried: self.retried.load(Ordering::Relaxed),
            dead_lettered: self.dead_lettered.load(Ordering::Relaxed),
        }
    }

    fn breaker(&self) -> MutexGuard<'_, Breaker> {
        self.breaker.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn success(&self) {
        self.breaker().success();
    }

    pub(crate) fn failure(&self, err: &AgentError) -> Option<Trip> {
        self.breaker().failure(err.error_type(), err.message())
    }
}

/// Everything the node's tasks share.
pub(crate) struct Shared {
    pub(crate) application: String,
    pub(crate) host: String,
    version: String,
    amqp_url: String,
    pub(crate) topology: Topology,
    capacity: u32,
    heartbeat_every: Duration,
    pub(crate) interrupt_grace: Duration,
    shutdown_timeout: Duration,
    pub(crate) default_idle_timeout: Duration,
    agents: HashMap<String, (AgentSpec, Registered)>,
    classifiers: Vec<Classifier>,
    pub(crate) link: Link,
    pub(crate) outbox: Arc<Outbox>,
    running: Mutex<HashMap<String, Vec<Running>>>,
    stats: Mutex<HashMap<String, Arc<LsStats>>>,
    slots: Arc<Semaphore>,
    quarantined: AtomicU64,
    /// Stops taking commands.
    stop_intake: CancellationToken,
    /// Parent of every activation's cancellation.
    runs: CancellationToken,
    /// Stops the connection, the outbox and heartbeats: the very last step.
    stop_io: CancellationToken,
    pub(crate) ready: watch::Sender<bool>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("application", &self.application)
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

pub(crate) fn start(b: NodeBuilder) -> Arc<Shared> {
    let (tx, link) = broker::link();
    let shared = Arc::new(Shared {
        application: b.application,
        host: b.host,
        version: b.version,
        amqp_url: b.amqp_url,
        topology: b.topology,
        capacity: b.capacity,
        heartbeat_every: b.heartbeat_every,
        interrupt_grace: b.interrupt_grace,
        shutdown_timeout: b.shutdown_timeout,
        default_idle_timeout: b.default_idle_timeout,
        agents: b
            .agents
            .into_iter()
            .map(|(spec, agent)| (spec.id.clone(), (spec, agent)))
            .collect(),
        classifiers: b.classifiers,
        link,
        outbox: Arc::new(Outbox::new(b.outbox_capacity)),
        running: Mutex::new(HashMap::new()),
        stats: Mutex::new(HashMap::new()),
        slots: Arc::new(Semaphore::new(b.capacity as usize)),
        quarantined: AtomicU64::new(0),
        stop_intake: CancellationToken::new(),
        runs: CancellationToken::new(),
        stop_io: CancellationToken::new(),
        ready: watch::Sender::new(false),
    });
    let span = tracing::info_span!("node", application = %shared.application, host = %shared.host);
    tokio::spawn(supervise(Arc::clone(&shared), tx).instrument(span.clone()));
    tokio::spawn(control_loop(Arc::clone(&shared)).instrument(span.clone()));
    tokio::spawn(heartbeat_loop(Arc::clone(&shared)).instrument(span.clone()));
    let outbox = Arc::clone(&shared.outbox);
    let (link, queue, stop) = (
        shared.link.clone(),
        shared.topology.names().reports_queue(),
        shared.stop_io.clone(),
    );
    tokio::spawn(async move { outbox.run(link, queue, stop).await }.instrument(span));
    shared
}

pub(crate) async fn shutdown(shared: &Arc<Shared>) {
    tracing::info!(host = %shared.host, "node shutting down");
    shared.stop_intake.cancel();
    shared.runs.cancel();
    let finished: Vec<CancellationToken> = shared
        .running()
        .values()
        .flatten()
        .map(|r| r.finished.clone())
        .collect();
    let all = futures_util::future::join_all(finished.iter().map(|f| f.cancelled()));
    if tokio::time::timeout(shared.shutdown_timeout, all)
        .await
        .is_err()
    {
        tracing::warn!("activations still running at the end of the shutdown timeout");
    }
    if !shared.outbox.flush(Duration::from_secs(5)).await {
        tracing::warn!(
            pending = shared.outbox.pending(),
            "reports not confirmed at shutdown"
        );
    }
    shared.stop_io.cancel();
    shared.ready.send_replace(false);
}

pub(crate) async fn abort(shared: &Arc<Shared>) {
    // Close first so that nothing in flight gets acknowledged on the way out.
    shared.stop_io.cancel();
    shared.stop_intake.cancel();
    if let Some(conn) = shared.link.current() {
        let _ = conn.close(320, "node aborted".into()).await;
    }
    shared.runs.cancel();
    shared.ready.send_replace(false);
}

impl Shared {
    fn running(&self) -> MutexGuard<'_, HashMap<String, Vec<Running>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn stats(&self, launch_setting: &str) -> Arc<LsStats> {
        let mut map = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(map.entry(launch_setting.to_owned()).or_insert_with(|| {
            Arc::new(LsStats {
                processed: AtomicU64::new(0),
                failed: AtomicU64::new(0),
                retried: AtomicU64::new(0),
                dead_lettered: AtomicU64::new(0),
                breaker: Mutex::new(Breaker::new(am_domain::catalog::DEFAULT_FAILURE_THRESHOLD)),
            })
        }))
    }

    fn publication(&self) -> Publication {
        let mut agents: Vec<_> = self
            .agents
            .values()
            .map(|(spec, agent)| spec.publish(agent.input()))
            .collect();
        agents.sort_by(|a, b| a.id.cmp(&b.id));
        Publication {
            application: self.application.clone(),
            host: self.host.clone(),
            version: self.version.clone(),
            capacity: self.capacity,
            agents,
            classifiers: self.classifiers.iter().map(Classifier::publish).collect(),
        }
    }

    pub(crate) fn report_failure(
        &self,
        info: &RunInfo,
        err: &AgentError,
        attempt: u32,
        data_message_id: Option<String>,
        disposition: Option<&str>,
    ) {
        tracing::warn!(
            error_type = err.error_type(),
            error = err.message(),
            attempt,
            disposition,
            "agent failed"
        );
        self.outbox.push(&ToManager::Failure(FailureReport {
            application: self.application.clone(),
            host: self.host.clone(),
            activation_id: info.activation_id.clone(),
            launch_setting: info.launch_setting.clone(),
            agent: info.agent.clone(),
            error_type: err.error_type().to_owned(),
            message: err.message().to_owned(),
            details: err.details().to_owned(),
            data_message_id,
            attempt,
            temporary: err.is_temporary(),
            disposition: disposition.map(str::to_owned),
            at: chrono::Utc::now(),
        }));
    }

    pub(crate) fn report_trip(&self, info: &RunInfo, trip: Trip) {
        tracing::warn!(
            consecutive = trip.consecutive,
            same_type = trip.same_type,
            "breaker tripped"
        );
        self.outbox.push(&ToManager::BreakerTripped(BreakerTripped {
            application: self.application.clone(),
            host: self.host.clone(),
            activation_id: info.activation_id.clone(),
            launch_setting: info.launch_setting.clone(),
            consecutive_failures: trip.consecutive,
            same_type_failures: trip.same_type,
            last_errors: trip.last_errors,
            at: chrono::Utc::now(),
        }));
    }

    fn command(self: &Arc<Self>, cmd: ToNode) {
        match cmd {
            ToNode::Launch(launch) => self.launch(launch),
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
                let found = running
                    .values()
                    .flatten()
                    .find(|r| r.id == int.activation_id);
                tracing::info!(activation_id = %int.activation_id, reason = %int.reason,
                    found = found.is_some(), "interrupt");
                if let Some(r) = found {
                    r.cancel.cancel();
                }
            }
        }
    }

    fn launch(self: &Arc<Self>, launch: Launch) {
        let info = Arc::new(RunInfo {
            application: self.application.clone(),
            host: self.host.clone(),
            activation_id: launch.activation_id.clone(),
            launch_setting: launch.launch_setting.clone(),
            agent: launch.agent.clone(),
            fencing_token: launch.fencing_token,
            cancel: self.runs.child_token(),
            outbox: Arc::clone(&self.outbox),
        });
        let span = tracing::info_span!("activation", activation_id = %launch.activation_id,
            launch_setting = %launch.launch_setting, host = %self.host, agent = %launch.agent);
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
        let mut wait_for = Vec::new();
        let permit = {
            let mut running = self.running();
            if running
                .values()
                .flatten()
                .any(|r| r.id == launch.activation_id)
            {
                // A command delivered twice (at-least-once) must not run the activation twice.
                drop(running);
                tracing::info!("duplicate launch ignored: the activation already runs here");
                return;
            }
            let list = running.entry(launch.launch_setting.clone()).or_default();
            let mut permit = None;
            match launch.overlap {
                am_domain::catalog::OverlapPolicy::Allow => {}
                am_domain::catalog::OverlapPolicy::Skip => {
                    if !list.is_empty() {
                        drop(running);
                        return skip("an activation of this launch setting is still running (overlap policy: skip)".into());
                    }
                }
                am_domain::catalog::OverlapPolicy::Interrupt => {
                    for r in list.iter() {
                        tracing::info!(interrupted = %r.id, "interrupting the running activation (overlap policy: interrupt)");
                        r.cancel.cancel();
                        wait_for.push(r.finished.clone());
                    }
                }
            }
            if wait_for.is_empty() {
                match Arc::clone(&self.slots).try_acquire_owned() {
                    Ok(p) => permit = Some(p),
                    Err(_) => {
                        drop(running);
                        return skip(format!("node at capacity ({} activations)", self.capacity));
                    }
                }
            }
            list.push(Running {
                id: launch.activation_id.clone(),
                cancel: info.cancel.clone(),
                finished: finished.clone(),
            });
            permit
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
                                shared.report_failure(&info, &e, 1, None, None);
                                (ActivationResult::Failed, Some(e.to_string()))
                            }
                        },
                    }
                };
                tracing::info!(?result, error = error.as_deref(), "finished");
                info.report(ActivationEvent::Finished { result, error });
                drop(permit);
                {
                    let mut running = shared.running();
                    if let Some(list) = running.get_mut(&info.launch_setting) {
                        list.retain(|r| r.id != info.activation_id);
                        if list.is_empty() {
                            running.remove(&info.launch_setting);
                        }
                    }
                }
                finished.cancel();
            }
            .instrument(span.clone()),
        );
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
                stats.processed.fetch_add(1, Ordering::Relaxed);
                stats.success();
                (ActivationResult::Succeeded, None)
            }
            Err(e) if e.is_interrupted() || info.cancel.is_cancelled() => {
                (ActivationResult::Interrupted, None)
            }
            Err(e) => {
                stats.failed.fetch_add(1, Ordering::Relaxed);
                self.report_failure(info, &e, 1, None, None);
                if !e.is_temporary()
                    && let Some(trip) = stats.failure(&e)
                {
                    self.report_trip(info, trip);
                }
                (ActivationResult::Failed, Some(e.to_string()))
            }
        }
    }
}

/// Runs an agent's future; once cancelled it gets `grace` to finish before it is dropped.
pub(crate) async fn with_grace<F>(
    fut: F,
    cancel: &CancellationToken,
    grace: Duration,
) -> Result<(), AgentError>
where
    F: Future<Output = Result<(), AgentError>>,
{
    tokio::select! {
        biased;
        r = fut => r,
        () = async { cancel.cancelled().await; tokio::time::sleep(grace).await } => {
            tracing::warn!(?grace, "the agent ignored the interruption; abandoned");
            Err(AgentError::interrupted())
        }
    }
}

async fn sleep_or_stop(d: Duration, stop: &CancellationToken) -> bool {
    tokio::select! {
        () = tokio::time::sleep(d) => true,
        () = stop.cancelled() => false,
    }
}

/// Keeps one connection up, declares the node's topology on each, publishes the node.
async fn supervise(shared: Arc<Shared>, tx: watch::Sender<Option<Arc<Connection>>>) {
    let shown = broker::redact(&shared.amqp_url);
    let mut backoff = MIN_BACKOFF;
    loop {
        let props =
            ConnectionProperties::default().with_connection_name(LongString::from(format!(
                "am-node {}@{} ({})",
                shared.application,
                shared.host,
                shared.topology.names().prefix()
            )));
        let attempt = tokio::select! {
            r = Connection::connect(&shared.amqp_url, props) => r,
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
                                    if let Event::Error(e) = event {
                                        return e.to_string();
                                    }
                                }
                                "connection closed".to_owned()
                            } => r,
                            () = shared.stop_io.cancelled() => {
                                tx.send_replace(None);
                                let _ = conn.close(200, "node shutting down".into()).await;
                                return;
                            }
                        };
                        tracing::warn!(broker = %shown, %reason, "lost the broker connection");
                        tx.send_replace(None);
                    }
                    Err(e) => {
                        tracing::warn!(broker = %shown, error = %e, "cannot declare the node's topology");
                        let _ = conn.close(200, "topology failed".into()).await;
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
    let channel = conn.create_channel().await?;
    shared
        .topology
        .declare_node(&channel, &shared.application, &shared.host)
        .await?;
    channel.close(200, "declared".into()).await
}

/// Listens to the node's control queue, resubscribing after every reconnect.
async fn control_loop(shared: Arc<Shared>) {
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
                shared.command(cmd);
                delivery.acker.ack(BasicAckOptions::default()).await?;
            }
            Err(e) => {
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
) -> Result<(), String> {
    let mut headers = delivery.properties.headers().clone().unwrap_or_default();
    headers.insert(
        QUARANTINE_REASON_HEADER.into(),
        AMQPValue::LongString(LongString::from(reason)),
    );
    headers.insert(
        wire::DL_HOST_HEADER.into(),
        AMQPValue::LongString(LongString::from(shared.host.as_str())),
    );
    let confirm = channel
        .basic_publish(
            "".into(),
            shared.topology.names().quarantine_queue().as_str().into(),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            &delivery.data,
            BasicProperties::default()
                .with_headers(headers)
                .with_delivery_mode(2),
        )
        .await
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| e.to_string())?;
    if confirm.is_ack() && confirm.take_message().is_none() {
        Ok(())
    } else {
        Err("the broker did not take the quarantined message".into())
    }
}

/// Sends a heartbeat while connected: the node's capacity, load and each running launch
/// setting's activations and counters.
async fn heartbeat_loop(shared: Arc<Shared>) {
    loop {
        if !sleep_or_stop(shared.heartbeat_every, &shared.stop_io).await {
            return;
        }
        if !shared.link.is_up() {
            continue;
        }
        let running: Vec<(String, Vec<ActivationId>)> = shared
            .running()
            .iter()
            .map(|(ls, list)| (ls.clone(), list.iter().map(|r| r.id.clone()).collect()))
            .collect();
        let running = running
            .into_iter()
            .map(|(ls, activations)| RunningLaunchSetting {
                counters: shared.stats(&ls).counters(),
                launch_setting: ls,
                activations,
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
