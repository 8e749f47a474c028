package io.agentmanager.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs agent code on an executor thread while the runner waits; once the activation is
 * cancelled the agent gets the grace period to finish, after which it is abandoned (its thread
 * stays interrupted) and the call counts as interrupted (Rust's {@code with_grace}).
 */
final class AgentCall {
    private static final Logger LOG = LoggerFactory.getLogger(AgentCall.class);

    /** Agent code. */
    @FunctionalInterface
    interface Body {
        void run() throws Exception;
    }

    private AgentCall() {
    }

    /** Null when the agent succeeded, else its error. */
    static AgentError call(Executor executor, ActivationRun run, Duration grace, String host, Body body) {
        CompletableFuture<Throwable> done = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                MDC.put("activation_id", run.activationId);
                MDC.put("launch_setting", run.launchSetting);
                MDC.put("host", host);
                run.enterAgent();
                try {
                    body.run();
                    done.complete(null);
                } catch (Throwable t) {
                    done.complete(t);
                    if (t instanceof VirtualMachineError vme) {
                        throw vme;
                    }
                } finally {
                    run.leaveAgent();
                    MDC.clear();
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.error("the executor refused the agent's work", e);
            return AgentError.failed("RejectedExecution", "the node's executor refused the work: " + e.getMessage());
        }
        // A per-call signal, not a dependent of the run's long-lived cancellation future: one
        // call per message must leave nothing behind.
        CompletableFuture<Void> wake = new CompletableFuture<>();
        done.whenComplete((t, e) -> wake.complete(null));
        Runnable unregister = run.whenCancelled(() -> wake.complete(null));
        try {
            wake.join();
        } finally {
            unregister.run();
        }
        if (!done.isDone()) {
            try {
                done.get(grace.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                LOG.warn("the agent ignored the interruption for {}; abandoned", grace);
                return AgentError.interrupted();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return AgentError.interrupted();
            } catch (ExecutionException e) {
                // `done` is only ever completed normally.
                return AgentError.of(e.getCause());
            }
        }
        Throwable t = done.join();
        return t == null ? null : AgentError.of(t);
    }
}
