package io.agentmanager.client;

import io.agentmanager.client.wire.ActivationEvent;
import io.agentmanager.client.wire.ActivationReport;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One activation on this node: its identity, its counters, its cancellation and whether it
 * has ended. The dispatcher creates it; its runner thread owns the run; {@link #cancel} may be
 * called from any thread (control commands, breaker, max run time, shutdown).
 */
final class ActivationRun {
    private static final Logger LOG = LoggerFactory.getLogger(ActivationRun.class);

    final String activationId;
    final String launchSetting;
    final String agent;
    final long fencingToken;
    /** The run's {@code activation} span ({@link Span#NONE} while traces are off). */
    final Span span;
    /**
     * The span reports are sent under: the run's, or the {@code message} span while a message
     * is in hand (its failure, a progress its handler reports), as the Rust node's reports
     * carry the context of the span current when they are made.
     */
    volatile Span current;
    final Tally tally = new Tally();
    /** Completed when the activation has fully ended (reports queued, messages returned). */
    final CompletableFuture<Void> finished = new CompletableFuture<>();

    /** Set by the runner once the run started (it held a slot and reported {@code started}). */
    volatile boolean started;
    private final NodeRuntime node;
    private final CompletableFuture<Void> cancelled = new CompletableFuture<>();
    /** The thread running agent code right now, to interrupt on cancel; guarded by this. */
    private Thread agentThread;
    /** Called once on cancellation, then dropped; guarded by this. */
    private final java.util.List<Runnable> cancelListeners = new java.util.ArrayList<>();

    ActivationRun(NodeRuntime node, String activationId, String launchSetting, String agent, long fencingToken,
            Span span) {
        this.node = node;
        this.activationId = activationId;
        this.launchSetting = launchSetting;
        this.agent = agent;
        this.fencingToken = fencingToken;
        this.span = span;
        this.current = span;
    }

    /** Asks the run to stop: its waits end and the agent's thread is interrupted. */
    void cancel(String why) {
        if (cancelled.complete(null)) {
            LOG.info("activation {} of {} asked to stop: {}", activationId, launchSetting, why);
            java.util.List<Runnable> listeners;
            synchronized (this) {
                if (agentThread != null) {
                    agentThread.interrupt();
                }
                listeners = java.util.List.copyOf(cancelListeners);
                cancelListeners.clear();
            }
            listeners.forEach(Runnable::run);
        }
    }

    boolean isCancelled() {
        return cancelled.isDone();
    }

    /**
     * Calls {@code listener} once when the run is asked to stop (at once if it was); the
     * returned handle removes it, so short waits leave nothing behind on a long run.
     */
    Runnable whenCancelled(Runnable listener) {
        synchronized (this) {
            if (!isCancelled()) {
                cancelListeners.add(listener);
                return () -> {
                    synchronized (this) {
                        cancelListeners.remove(listener);
                    }
                };
            }
        }
        listener.run();
        return () -> { };
    }

    /** Completes when the run is asked to stop. */
    CompletableFuture<Void> cancelledSignal() {
        return cancelled;
    }

    /** The current thread runs agent code of this activation until {@link #leaveAgent}. */
    synchronized void enterAgent() {
        agentThread = Thread.currentThread();
        if (isCancelled()) {
            agentThread.interrupt();
        }
    }

    /** Agent code ended on the current thread; its interrupt flag is cleared for the pool. */
    void leaveAgent() {
        synchronized (this) {
            agentThread = null;
        }
        Thread.interrupted();
    }

    void report(ActivationEvent event) {
        node.outbox.push(new ActivationReport(node.application, node.host, activationId,
                launchSetting, fencingToken, event, Instant.now()), current.context());
    }
}
