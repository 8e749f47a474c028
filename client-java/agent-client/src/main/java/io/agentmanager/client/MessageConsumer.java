package io.agentmanager.client;

import com.rabbitmq.client.Connection;
import io.agentmanager.client.wire.ActivationResult;
import io.agentmanager.client.wire.DeadLetterPolicy;
import io.agentmanager.client.wire.FailureReport.Disposition;
import io.agentmanager.client.wire.Headers;
import io.agentmanager.client.wire.Launch;
import io.agentmanager.client.wire.LaunchKind;
import io.agentmanager.client.wire.ReplayToken;
import io.agentmanager.client.wire.RetryMath;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A messages activation: consumes its launch setting's queue (checked, never declared),
 * acknowledges after success, sends failures on (retry, park, dead letter) before
 * acknowledging them, feeds the breaker, finishes a scheduled run when idle, and resubscribes
 * after a reconnect. Runs on the activation's runner thread.
 */
final class MessageConsumer {
    private static final Logger LOG = LoggerFactory.getLogger(MessageConsumer.class);

    private enum Step { CONTINUE, RECONNECT, INTERRUPTED, TRIPPED }

    private final NodeRuntime node;
    private final ActivationRun run;
    private final RegisteredAgent agent;
    private final Launch launch;
    private final LaunchSettingStats stats;
    private final FailedMessages failed;
    private String tripSummary;

    MessageConsumer(NodeRuntime node, ActivationRun run, RegisteredAgent agent, Launch launch) {
        this.node = node;
        this.run = run;
        this.agent = agent;
        this.launch = launch;
        this.stats = node.stats(launch.launchSetting());
        this.failed = new FailedMessages(node, run, launch);
    }

    Dispatcher.RunEnd run() {
        Context<Object> ctx;
        try {
            ctx = new Context<>(run, node.host, agent.readParams(launch.parameters()));
        } catch (AgentException e) {
            AgentError err = AgentError.of(e);
            node.reportFailure(run, err, 1, null, null, null);
            return new Dispatcher.RunEnd(ActivationResult.FAILED, err.toString());
        }
        String queue = node.layout.names().consumedQueue(launch.launchSetting(), launch.subscription());
        Duration idle = launch.kind() == LaunchKind.SCHEDULED
                ? (launch.idleTimeout() != null ? launch.idleTimeout().value() : node.defaultIdleTimeout)
                : null;
        long lastActivity = System.nanoTime();
        boolean resubscribing = false;
        while (true) {
            Connection conn = node.link.await(run.cancelledSignal());
            if (conn == null) {
                return interrupted();
            }
            MessageSession session;
            try {
                session = MessageSession.open(conn, queue, agent.spec().prefetch());
            } catch (MessageSession.QueueMissing e) {
                return new Dispatcher.RunEnd(ActivationResult.FAILED, "queue `" + queue + "` of launch setting '"
                        + launch.launchSetting() + "' does not exist on the broker; the manager declares it "
                        + "from its catalog (is the launch setting in the catalog and consuming data queue '"
                        + launch.subscription().dataQueue() + "'?)");
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot subscribe to {}; retrying: {}", queue, e.toString());
                if (!Waits.sleep(Duration.ofMillis(200), run.cancelledSignal())) {
                    return interrupted();
                }
                continue;
            }
            LOG.info(resubscribing ? "subscribed again to {}" : "subscribed to {}", queue);
            resubscribing = true;
            MessageSession s = session;
            Runnable unregister = run.whenCancelled(() -> s.inbox.add(MessageSession.WAKE));
            try {
                while (true) {
                    if (run.isCancelled()) {
                        return interrupted();
                    }
                    long waitNanos = Long.MAX_VALUE;
                    if (idle != null) {
                        waitNanos = lastActivity + idle.toNanos() - System.nanoTime();
                        if (waitNanos <= 0) {
                            LOG.info("subscription idle for {}; scheduled activation done", idle);
                            return new Dispatcher.RunEnd(ActivationResult.SUCCEEDED, null);
                        }
                    }
                    Object item;
                    try {
                        item = session.inbox.poll(Math.min(waitNanos, TimeUnit.HOURS.toNanos(1)), TimeUnit.NANOSECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        run.cancel("runner thread interrupted");
                        return interrupted();
                    }
                    if (item == null || item == MessageSession.WAKE) {
                        continue;
                    }
                    if (item == MessageSession.LOST) {
                        LOG.warn("subscription consumer of {} ended; resubscribing", queue);
                        break;
                    }
                    Step step = process(ctx, session, (MessageSession.Delivery) item);
                    if (step == Step.CONTINUE) {
                        lastActivity = System.nanoTime();
                    } else if (step == Step.RECONNECT) {
                        break;
                    } else if (step == Step.INTERRUPTED) {
                        return interrupted();
                    } else {
                        return new Dispatcher.RunEnd(ActivationResult.FAILED, tripSummary);
                    }
                }
            } finally {
                unregister.run();
                session.close();
            }
            if (!Waits.sleep(Duration.ofMillis(100), run.cancelledSignal())) {
                return interrupted();
            }
        }
    }

    private static Dispatcher.RunEnd interrupted() {
        return new Dispatcher.RunEnd(ActivationResult.INTERRUPTED, null);
    }

    /**
     * Handles one delivery under its {@code message} span: the reports made meanwhile (its
     * failure, its replay's outcome, a breaker trip, the handler's progress) carry that span's
     * context, as in the Rust node.
     */
    private Step process(Context<Object> ctx, MessageSession session, MessageSession.Delivery d) {
        Map<String, Object> headers = d.properties().getHeaders();
        Long attemptHeader = HeaderValues.count(headers, Headers.ATTEMPT);
        long attempt = Math.max(1, attemptHeader == null ? 1 : attemptHeader);
        String messageId = d.properties().getMessageId();
        Span span = node.tracer.message(run, node.host, attempt, messageId,
                node.tracer.isOn() ? TraceContext.fromHeaders(headers) : null);
        run.current = span;
        try {
            return handle(ctx, session, d, attempt, messageId);
        } finally {
            run.current = run.span;
            span.end();
        }
    }

    private Step handle(Context<Object> ctx, MessageSession session, MessageSession.Delivery d, long attempt,
            String messageId) {
        Map<String, Object> headers = d.properties().getHeaders();
        Long unavailableHeader = HeaderValues.count(headers, Headers.UNAVAILABLE);
        ReplayToken replay = null;
        Object replayRaw = headers == null ? null : headers.get(Headers.REPLAY);
        if (replayRaw != null && HeaderValues.text(replayRaw) != null) {
            try {
                replay = ReplayToken.parse(HeaderValues.text(replayRaw));
            } catch (IllegalArgumentException e) {
                LOG.debug("ignoring an unreadable {} header: {}", Headers.REPLAY, e.getMessage());
            }
        }
        Message message = new Message(d.body(), headers, messageId, attempt,
                unavailableHeader == null ? 0 : unavailableHeader, d.redelivered());
        AgentError err = AgentCall.call(node.executor, run, node.interruptGrace, node.host,
                () -> agent.messages().handle(ctx, message));
        if (err == null) {
            run.tally.processed.incrementAndGet();
            stats.tally.processed.incrementAndGet();
            stats.breaker.success();
            if (replay != null) {
                node.reportReplayProcessed(run, replay);
            }
            try {
                session.ack(d.tag());
            } catch (IOException | RuntimeException e) {
                LOG.debug("ack not sent; the message will be redelivered: {}", e.toString());
            }
            node.notify(l -> l.messageHandled(run.launchSetting, true, null));
            return Step.CONTINUE;
        }
        if (err.isInterrupted() || run.isCancelled()) {
            try {
                session.requeue(d.tag());
            } catch (IOException | RuntimeException e) {
                LOG.debug("nack not sent; the broker gives the message back on close: {}", e.toString());
            }
            return Step.INTERRUPTED;
        }
        if (err.isTemporary()) {
            FailedMessages.Unavailable u = failed.unavailable(session, d, message, err);
            node.reportFailure(run, u.error(), attempt, messageId, u.disposition(), replay);
            return settle(session, d, u.sendError(), Disposition.DEAD_LETTER.equals(u.disposition()), u.disposition());
        }
        run.tally.failed.incrementAndGet();
        stats.tally.failed.incrementAndGet();
        boolean giveUp = RetryMath.shouldDeadLetter(launch.deadLetter(), launch.retry(), attempt);
        boolean parkedBefore = headers != null && headers.containsKey(Headers.PARKED);
        boolean park = giveUp && launch.deadLetter().policy() == DeadLetterPolicy.PARK && !parkedBefore;
        boolean dead = giveUp && !park;
        String disposition = dead ? Disposition.DEAD_LETTER : park ? Disposition.PARK : Disposition.RETRY;
        IOException sendError = null;
        try {
            if (dead) {
                failed.deadLetter(session, d, attempt, err);
            } else if (park) {
                failed.park(session, d);
            } else {
                failed.retry(session, d, attempt);
            }
        } catch (IOException e) {
            sendError = e;
        }
        node.reportFailure(run, err, attempt, messageId, disposition, replay);
        if (settle(session, d, sendError, dead, disposition) == Step.RECONNECT) {
            return Step.RECONNECT;
        }
        Breaker.Trip trip = stats.breaker.failure(err.errorType(), err.message(), identity(message));
        if (trip != null) {
            tripSummary = "breaker tripped after " + trip.consecutive() + " consecutive failures ("
                    + trip.sameType() + " of type " + err.errorType() + ")";
            node.reportTrip(run, trip);
            return Step.TRIPPED;
        }
        return Step.CONTINUE;
    }

    /** Acknowledges once the copy is confirmed, or gives the message back. */
    private Step settle(MessageSession session, MessageSession.Delivery d, IOException sendError, boolean dead,
            String disposition) {
        if (sendError == null) {
            (dead ? run.tally.deadLettered : run.tally.retried).incrementAndGet();
            (dead ? stats.tally.deadLettered : stats.tally.retried).incrementAndGet();
            node.notify(l -> l.messageHandled(run.launchSetting, false, disposition));
            try {
                session.ack(d.tag());
                return Step.CONTINUE;
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot ack a message already sent on; it will come back once more: {}", e.toString());
                return Step.RECONNECT;
            }
        }
        LOG.warn("cannot send the failed message on ({}); returning it to the queue: {}", disposition,
                sendError.getMessage());
        try {
            session.requeue(d.tag());
        } catch (IOException | RuntimeException e) {
            LOG.debug("nack not sent; the broker gives the message back on close: {}", e.toString());
        }
        return Step.RECONNECT;
    }

    /** Who a data message is, for the breaker's runs: its message id, else its body. */
    private static long identity(Message message) {
        return message.messageId() != null
                ? message.messageId().hashCode()
                : Arrays.hashCode(message.bodyUnsafe()) * 31L + 7;
    }
}
