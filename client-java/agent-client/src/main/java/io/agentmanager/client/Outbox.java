package io.agentmanager.client;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.agentmanager.client.wire.ToManager;
import io.agentmanager.client.wire.WireCodec;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports waiting for the broker: bounded, published with confirms, kept until confirmed.
 * Every thread pushes; one thread ({@link #run}) publishes. A batch not confirmed goes back to
 * the front and is sent again after the reconnect; when full, the oldest report is dropped and
 * counted (heartbeats carry the count). A report made under a span carries its W3C trace
 * context in its headers, so the manager's handling links to the node's run. State guarded by
 * this object's monitor.
 */
final class Outbox {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    private static final int BATCH = 64;
    private static final long CONFIRM_TIMEOUT_MS = 30_000;
    private static final AMQP.BasicProperties PROPERTIES = new AMQP.BasicProperties.Builder()
            .deliveryMode(2).contentType("application/json").build();

    /** A report and the context of the span that made it (null: none). */
    private record Queued(byte[] bytes, TraceContext trace) {
        AMQP.BasicProperties properties() {
            if (trace == null) {
                return PROPERTIES;
            }
            Map<String, Object> headers = new HashMap<>();
            trace.addTo(headers);
            return PROPERTIES.builder().headers(headers).build();
        }
    }

    private final ArrayDeque<Queued> queue = new ArrayDeque<>();
    private final int capacity;
    private final AtomicLong dropped = new AtomicLong();
    private int inFlight;

    Outbox(int capacity) {
        this.capacity = Math.max(1, capacity);
    }

    /** Queues a report made outside any span (publication, heartbeat). */
    void push(ToManager report) {
        push(report, null);
    }

    /** Queues a report made under the span of context {@code trace} (null: none). */
    void push(ToManager report, TraceContext trace) {
        Queued q = new Queued(WireCodec.encode(report), trace);
        synchronized (this) {
            if (queue.size() >= capacity) {
                queue.pollFirst();
                dropped.incrementAndGet();
            }
            queue.addLast(q);
            notifyAll();
        }
    }

    long dropped() {
        return dropped.get();
    }

    synchronized int pending() {
        return queue.size() + inFlight;
    }

    /** Waits until every report is confirmed, or the timeout; true when all were. */
    synchronized boolean flush(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (pending() > 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }

    /** Wakes the publishing thread (to notice {@code stop}). */
    synchronized void wake() {
        notifyAll();
    }

    private synchronized List<Queued> takeBatch(CompletableFuture<?> stop) throws InterruptedException {
        while (queue.isEmpty() && !stop.isDone()) {
            wait();
        }
        List<Queued> batch = new ArrayList<>();
        while (batch.size() < BATCH && !queue.isEmpty()) {
            batch.add(queue.pollFirst());
        }
        inFlight = batch.size();
        return batch;
    }

    private synchronized void confirmed() {
        inFlight = 0;
        notifyAll();
    }

    private synchronized void giveBack(List<Queued> batch) {
        for (int i = batch.size() - 1; i >= 0; i--) {
            queue.addFirst(batch.get(i));
        }
        while (queue.size() > capacity) {
            queue.pollFirst();
            dropped.incrementAndGet();
        }
        inFlight = 0;
        notifyAll();
    }

    /** Publishes reports to {@code reportsQueue} until {@code stop}; the outbox thread's loop. */
    void run(Link link, String reportsQueue, CompletableFuture<?> stop) {
        while (!stop.isDone()) {
            Connection conn = link.await(stop);
            if (conn == null) {
                return;
            }
            Channel channel = null;
            try {
                channel = conn.createChannel();
                channel.confirmSelect();
                AtomicBoolean returned = new AtomicBoolean();
                channel.addReturnListener(r -> returned.set(true));
                while (!stop.isDone()) {
                    List<Queued> batch = takeBatch(stop);
                    if (batch.isEmpty()) {
                        confirmed();
                        continue;
                    }
                    returned.set(false);
                    try {
                        for (Queued q : batch) {
                            channel.basicPublish("", reportsQueue, true, q.properties(), q.bytes());
                        }
                        boolean acked = channel.waitForConfirms(CONFIRM_TIMEOUT_MS);
                        if (!acked || returned.get()) {
                            LOG.warn("{} reports not taken by `{}` ({}); will resend", batch.size(),
                                    reportsQueue, acked ? "no such queue" : "refused");
                            giveBack(batch);
                            break;
                        }
                        confirmed();
                    } catch (IOException | TimeoutException | RuntimeException e) {
                        LOG.warn("{} reports not confirmed; will resend: {}", batch.size(), e.toString());
                        giveBack(batch);
                        break;
                    }
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot open the reports channel: {}", e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } finally {
                Channels.closeQuietly(channel);
            }
            Waits.sleep(Duration.ofMillis(200), stop);
        }
    }
}
