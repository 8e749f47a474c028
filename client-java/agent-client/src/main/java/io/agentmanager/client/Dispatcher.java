package io.agentmanager.client;

import io.agentmanager.client.wire.ActivationCounters;
import io.agentmanager.client.wire.ActivationEvent;
import io.agentmanager.client.wire.ActivationResult;
import io.agentmanager.client.wire.DecodedCommand;
import io.agentmanager.client.wire.Interrupt;
import io.agentmanager.client.wire.Launch;
import io.agentmanager.client.wire.RunningLaunchSetting;
import io.agentmanager.client.wire.Stop;
import io.agentmanager.client.wire.ToNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Commands from the manager: launches with their overlap policy on the node's slots, stop,
 * interrupt; and the life of each activation (accepted → started → finished). The map of
 * runs is guarded by this object's monitor; each run's thread owns the run.
 */
final class Dispatcher {
    private static final Logger LOG = LoggerFactory.getLogger(Dispatcher.class);

    private final NodeRuntime node;
    /** Runs by launch setting, waiting ones included (the heartbeat lists them). */
    private final Map<String, List<ActivationRun>> running = new LinkedHashMap<>();
    /** Set by {@link #shutdown}: every run taken from then on is asked to stop at once. */
    private boolean closing;

    Dispatcher(NodeRuntime node) {
        this.node = node;
    }

    /**
     * Acts on a command; {@code trace} is the context it was published under (a launch's run
     * is its child), or null.
     */
    void command(ToNode command, TraceContext trace) {
        if (command instanceof Launch launch) {
            launch(launch, trace);
        } else if (command instanceof Stop stop) {
            List<ActivationRun> list;
            synchronized (this) {
                list = List.copyOf(running.getOrDefault(stop.launchSetting(), List.of()));
            }
            LOG.info("stop {} ({} activations): {}", stop.launchSetting(), list.size(), stop.reason());
            list.forEach(r -> r.cancel("stop: " + stop.reason()));
        } else if (command instanceof Interrupt interrupt) {
            ActivationRun found = null;
            synchronized (this) {
                for (List<ActivationRun> list : running.values()) {
                    for (ActivationRun r : list) {
                        if (r.activationId.equals(interrupt.activationId())
                                && (interrupt.upToToken() == null || r.fencingToken <= interrupt.upToToken())) {
                            found = r;
                        }
                    }
                }
            }
            LOG.info("interrupt {} (up to token {}; found: {}): {}", interrupt.activationId(),
                    interrupt.upToToken(), found != null, interrupt.reason());
            if (found != null) {
                found.cancel("interrupt: " + interrupt.reason());
            }
        }
    }

    /**
     * A launch this node could not read: answered {@code skipped}, never run; no span, as the
     * Rust node's answer is made before its run's span exists.
     */
    void notUnderstood(DecodedCommand.LaunchNotUnderstood launch) {
        ActivationRun run = new ActivationRun(node, launch.activationId(), launch.launchSetting(),
                launch.agent() == null ? "" : launch.agent(), launch.fencingToken(), Span.NONE);
        LOG.warn("launch {} skipped: {}", launch.activationId(), launch.reason());
        run.report(new ActivationEvent.Skipped(launch.reason()));
    }

    private void launch(Launch launch, TraceContext trace) {
        // Every launch read gets its span, refused ones too (ended at once), as in the Rust node.
        Span span = node.tracer.activation(trace, launch.activationId(), launch.launchSetting(), node.host,
                launch.agent(), launch.fencingToken());
        ActivationRun run = new ActivationRun(node, launch.activationId(), launch.launchSetting(),
                launch.agent(), launch.fencingToken(), span);
        RegisteredAgent agent = node.agents.get(launch.agent());
        if (agent == null) {
            skip(run, "agent `" + launch.agent() + "` is not offered by this node");
            return;
        }
        if (agent.messages() != null && launch.subscription() == null) {
            skip(run, "a messages agent needs a subscription");
            return;
        }
        List<CompletableFuture<Void>> waitFor = new ArrayList<>();
        boolean slot;
        boolean stopNow;
        synchronized (this) {
            if (running.values().stream().flatMap(List::stream)
                    .anyMatch(r -> r.activationId.equals(launch.activationId()))) {
                LOG.info("duplicate launch of {} ignored: the activation already runs here", launch.activationId());
                span.end();
                return;
            }
            List<ActivationRun> others = running.getOrDefault(launch.launchSetting(), List.of());
            switch (launch.overlap()) {
                case SKIP:
                    if (!others.isEmpty()) {
                        skip(run, "an activation of this launch setting is still running (overlap policy: skip)");
                        return;
                    }
                    break;
                case INTERRUPT:
                    for (ActivationRun r : others) {
                        LOG.info("interrupting {} (overlap policy: interrupt)", r.activationId);
                        r.cancel("overlap policy: interrupt, for " + launch.activationId());
                        waitFor.add(r.finished);
                    }
                    break;
                default:
                    break;
            }
            slot = waitFor.isEmpty() && node.slots.tryTake();
            if (!slot && waitFor.isEmpty()) {
                LOG.info("every slot is busy ({}): launch {} waits for one", node.capacity, launch.activationId());
            }
            running.computeIfAbsent(launch.launchSetting(), k -> new ArrayList<>()).add(run);
            stopNow = closing;
        }
        node.stats(launch.launchSetting()).breaker.setThreshold(launch.failureThreshold());
        run.report(new ActivationEvent.Accepted());
        if (stopNow) {
            // A command that was being handled when the shutdown began (Rust: a child of the
            // node's cancelled token): accepted, then ended interrupted without starting.
            run.cancel("node shutting down");
        }
        try {
            node.executor.execute(() -> runActivation(run, launch, agent, slot, waitFor));
        } catch (RejectedExecutionException e) {
            LOG.error("the executor refused activation {}", launch.activationId(), e);
            if (slot) {
                node.slots.give();
            }
            run.report(new ActivationEvent.Finished(ActivationResult.INTERRUPTED, "node stopping",
                    run.tally.counters()));
            forget(run);
            span.end();
            run.finished.complete(null);
        }
    }

    private void skip(ActivationRun run, String reason) {
        LOG.info("launch {} skipped: {}", run.activationId, reason);
        run.report(new ActivationEvent.Skipped(reason));
        run.span.end();
    }

    private void runActivation(ActivationRun run, Launch launch, RegisteredAgent agent, boolean hasSlot,
            List<CompletableFuture<Void>> waitFor) {
        MDC.put("activation_id", run.activationId);
        MDC.put("launch_setting", run.launchSetting);
        MDC.put("host", node.host);
        boolean holdsSlot = hasSlot;
        ActivationResult result = ActivationResult.INTERRUPTED;
        String error = null;
        ScheduledFuture<?> watchdog = null;
        try {
            if (!waitFor.isEmpty()) {
                CompletableFuture.anyOf(CompletableFuture.allOf(waitFor.toArray(CompletableFuture[]::new)),
                        run.cancelledSignal()).join();
            }
            if (!holdsSlot && !run.isCancelled()) {
                CompletableFuture<Void> slot = node.slots.take();
                CompletableFuture.anyOf(slot, run.cancelledSignal()).join();
                if (slot.isDone()) {
                    holdsSlot = true;
                } else {
                    node.slots.abandon(slot);
                }
            }
            if (!run.isCancelled()) {
                run.started = true;
                run.report(new ActivationEvent.Started());
                LOG.info("started {}", launch.agent());
                node.notify(l -> l.activationStarted(run.launchSetting, run.activationId));
                if (launch.maxRunTime() != null && !launch.maxRunTime().isZero()) {
                    watchdog = node.timers.schedule(() -> {
                        LOG.warn("maximum run time {} reached; interrupting", launch.maxRunTime());
                        run.cancel("maximum run time reached");
                    }, launch.maxRunTime().value().toMillis(), TimeUnit.MILLISECONDS);
                }
                RunEnd end = agent.standalone() != null
                        ? runStandalone(run, agent, launch)
                        : new MessageConsumer(node, run, agent, launch).run();
                result = end.result();
                error = end.error();
            }
        } catch (RuntimeException | Error e) {
            LOG.error("activation {} ended by an unexpected error", run.activationId, e);
            result = ActivationResult.FAILED;
            error = "node error: " + e;
        } finally {
            if (watchdog != null) {
                watchdog.cancel(false);
            }
            LOG.info("finished: {}{}", result, error == null ? "" : " (" + error + ")");
            run.report(new ActivationEvent.Finished(result, error, run.tally.counters()));
            run.span.end();
            if (holdsSlot) {
                node.slots.give();
            }
            forget(run);
            ActivationResult finalResult = result;
            node.notify(l -> l.activationFinished(run.launchSetting, run.activationId, finalResult));
            run.finished.complete(null);
            MDC.clear();
        }
    }

    /** How a run ended. */
    record RunEnd(ActivationResult result, String error) {
    }

    private RunEnd runStandalone(ActivationRun run, RegisteredAgent agent, Launch launch) {
        LaunchSettingStats stats = node.stats(run.launchSetting);
        AgentError err;
        try {
            Object params = agent.readParams(launch.parameters());
            Context<Object> ctx = new Context<>(run, node.host, params);
            err = AgentCall.call(node.executor, run, node.interruptGrace, node.host,
                    () -> agent.standalone().run(ctx));
        } catch (AgentException e) {
            err = AgentError.of(e);
        }
        if (err == null) {
            run.tally.processed.incrementAndGet();
            stats.tally.processed.incrementAndGet();
            stats.breaker.success();
            return new RunEnd(ActivationResult.SUCCEEDED, null);
        }
        if (err.isInterrupted() || run.isCancelled()) {
            return new RunEnd(ActivationResult.INTERRUPTED, null);
        }
        run.tally.failed.incrementAndGet();
        stats.tally.failed.incrementAndGet();
        node.reportFailure(run, err, 1, null, null, null);
        if (!err.isTemporary()) {
            Breaker.Trip trip = stats.breaker.failure(err.errorType(), err.message(), null);
            if (trip != null) {
                node.reportTrip(run, trip);
            }
        }
        return new RunEnd(ActivationResult.FAILED, err.toString());
    }

    private synchronized void forget(ActivationRun run) {
        List<ActivationRun> list = running.get(run.launchSetting);
        if (list != null) {
            list.remove(run);
            if (list.isEmpty()) {
                running.remove(run.launchSetting);
            }
        }
    }

    /** The running launch settings with their activations and counters, for a heartbeat. */
    List<RunningLaunchSetting> snapshot() {
        Map<String, List<ActivationRun>> copy = new LinkedHashMap<>();
        synchronized (this) {
            running.forEach((ls, list) -> copy.put(ls, List.copyOf(list)));
        }
        List<RunningLaunchSetting> out = new ArrayList<>();
        copy.forEach((ls, list) -> {
            List<ActivationCounters> each = list.stream()
                    .map(r -> new ActivationCounters(r.activationId, r.tally.counters())).toList();
            out.add(new RunningLaunchSetting(ls, list.stream().map(r -> r.activationId).toList(),
                    node.stats(ls).tally.counters(), each));
        });
        return out;
    }

    /**
     * The node shuts down: every run, started or waiting for a slot, standalone or messages, is
     * asked to stop now, and every run taken from now on as soon as it is accepted.
     */
    void shutdown() {
        List<ActivationRun> now;
        synchronized (this) {
            closing = true;
            now = all();
        }
        now.forEach(r -> r.cancel("node shutting down"));
    }

    /** Every run now, waiting ones included. */
    synchronized List<ActivationRun> all() {
        return running.values().stream().flatMap(List::stream).toList();
    }
}
