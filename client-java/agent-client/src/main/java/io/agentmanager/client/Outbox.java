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
import java.util.List;
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
 * counted (heartbeats carry the count). State guarded by this object's monitor.
 */
final class Outbox {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    private static final int BATCH = 64;
    private static final long CONFIRM_TIMEOUT_MS = 30_000;
    private static final AMQP.BasicProperties PROPERTIES = new AMQP.BasicProperties.Builder()
            .deliveryMode(2).contentType("application/json").build();

    private final ArrayDeque<byte[]> queue = new ArrayDeque<>();
    private final int capacity;
    private final AtomicLong dropped = new AtomicLong();
    private int inFlight;

    Outbox(int capacity) {
        this.capacity = Math.max(1, capacity);
    }

    void push(ToManager report) {
        byte[] bytes = WireCodec.encode(report);
        synchronized (this) {
            if (queue.size() >= capacity) {
                queue.pollFirst();
                dropped.incrementAndGet();
            }
            queue.addLast(bytes);
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

    private synchronized List<byte[]> takeBatch(CompletableFuture<?> stop) throws InterruptedException {
        while (queue.isEmpty() && !stop.isDone()) {
            wait();
        }
        List<byte[]> batch = new ArrayList<>();
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

    private synchronized void giveBack(List<byte[]> batch) {
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
                    List<byte[]> batch = takeBatch(stop);
                    if (batch.isEmpty()) {
                        confirmed();
                        continue;
                    }
                    returned.set(false);
                    try {
                        for (byte[] bytes : batch) {
                            channel.basicPublish("", reportsQueue, true, PROPERTIES, bytes);
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
