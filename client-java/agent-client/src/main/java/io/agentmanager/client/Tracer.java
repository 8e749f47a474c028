package io.agentmanager.client;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's spans and their batching: ended spans wait in a bounded queue (full: dropped and
 * counted) until a daemon thread sends them, every schedule delay or as soon as a batch is
 * waiting. Sampling follows the parent, as the Rust node's default sampler does: a span whose
 * parent is not sampled is not exported, but its context still travels (flags {@code 00}).
 * Thread-safe; the queue is guarded by this object's monitor.
 */
final class Tracer {
    private static final Logger LOG = LoggerFactory.getLogger(Tracer.class);
    private static final Tracer OFF = new Tracer();

    private final OtlpJsonExporter exporter;
    private final int maxQueue;
    private final int maxBatch;
    private final long delayNanos;
    private final ArrayDeque<Span> queue = new ArrayDeque<>();
    private final AtomicLong dropped = new AtomicLong();
    private final Thread thread;
    /** Spans taken by the thread and not yet sent; guarded by this. */
    private int inFlight;
    /** Set once: the thread drains the queue, then ends; guarded by this. */
    private boolean stopping;
    private boolean discard;

    private Tracer() {
        this.exporter = null;
        this.maxQueue = 0;
        this.maxBatch = 1;
        this.delayNanos = 0;
        this.thread = null;
    }

    private Tracer(TraceSettings settings, OtlpJsonExporter exporter, ThreadFactory threads) {
        this.exporter = exporter;
        this.maxQueue = settings.maxQueueSize();
        this.maxBatch = settings.maxExportBatchSize();
        this.delayNanos = settings.scheduleDelay().toNanos();
        this.thread = threads.newThread(this::loop);
        // A span exporter must never keep the application's JVM alive.
        this.thread.setDaemon(true);
        this.thread.setName("am-node-traces");
    }

    /** No spans: every span is {@link Span#NONE}, nothing is queued or sent. */
    static Tracer off() {
        return OFF;
    }

    /** A tracer exporting as {@code settings} say, its thread started; off when they are. */
    static Tracer start(TraceSettings settings, ThreadFactory threads) {
        if (!settings.enabled()) {
            return OFF;
        }
        Tracer t = new Tracer(settings, new OtlpJsonExporter(settings), threads);
        t.thread.start();
        LOG.info("{} (http/json)", settings);
        return t;
    }

    boolean isOn() {
        return this != OFF;
    }

    /**
     * A span starting now: a child of {@code parent} (same trace, its flags and trace state), or
     * the root of a new sampled trace when there is none.
     */
    Span start(String name, TraceContext parent) {
        if (this == OFF) {
            return Span.NONE;
        }
        String spanId = newId(16);
        TraceContext cx = parent != null ? parent.withSpan(spanId) : new TraceContext(newId(32), spanId, true, "");
        return new Span(this, name, cx, parent == null ? null : parent.spanId(), Span.nowNanos());
    }

    /**
     * The {@code activation} span of a launch, with the attributes of the Rust node's (a child of
     * the launch command's context when it carries one).
     */
    Span activation(TraceContext launchContext, String activationId, String launchSetting, String host,
            String agent, long fencingToken) {
        return start("activation", launchContext).attribute("activation_id", activationId)
                .attribute("launch_setting", launchSetting).attribute("host", host).attribute("agent", agent)
                .attribute("fencing_token", fencingToken);
    }

    /**
     * The {@code message} span of one data message's handling: a child of the run, linked to
     * whoever published the message when it carries a trace context.
     */
    Span message(ActivationRun run, String host, long attempt, String messageId, TraceContext producer) {
        return start("message", run.span.context()).attribute("activation_id", run.activationId)
                .attribute("launch_setting", run.launchSetting).attribute("host", host)
                .attribute("attempt", attempt).attribute("message_id", messageId).link(producer);
    }

    /** Random, never all zero: the specification makes an all-zero id invalid. */
    private static String newId(int hexDigits) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        StringBuilder b = new StringBuilder(hexDigits);
        for (int i = 0; i < hexDigits / 16; i++) {
            long n;
            do {
                n = r.nextLong();
            } while (n == 0 && i == 0);
            String h = Long.toHexString(n);
            b.append("0".repeat(16 - h.length())).append(h);
        }
        return b.toString();
    }

    /** A span ended: queued for export when sampled, dropped and counted when the queue is full. */
    void ended(Span span) {
        if (!span.context.sampled()) {
            return;
        }
        synchronized (this) {
            if (stopping) {
                return;
            }
            if (queue.size() >= maxQueue) {
                long n = dropped.incrementAndGet();
                exporter.warn("span queue full ({} waiting): {} spans dropped so far", maxQueue, n);
                return;
            }
            queue.addLast(span);
            if (queue.size() == 1 || queue.size() >= maxBatch) {
                notifyAll();
            }
        }
    }

    /** Spans dropped because the queue was full. */
    long dropped() {
        return dropped.get();
    }

    private void loop() {
        while (true) {
            List<Span> batch = new ArrayList<>();
            synchronized (this) {
                try {
                    while (!stopping && queue.isEmpty()) {
                        wait();
                    }
                    // The first span waiting waits at most the schedule delay.
                    long deadline = System.nanoTime() + delayNanos;
                    while (!stopping && queue.size() < maxBatch) {
                        long left = deadline - System.nanoTime();
                        if (left <= 0) {
                            break;
                        }
                        wait(Math.max(1, left / 1_000_000));
                    }
                } catch (InterruptedException e) {
                    return;
                }
                if (discard || stopping && queue.isEmpty()) {
                    return;
                }
                while (batch.size() < maxBatch && !queue.isEmpty()) {
                    batch.add(queue.pollFirst());
                }
                inFlight = batch.size();
            }
            if (!batch.isEmpty()) {
                exporter.export(batch);
            }
            synchronized (this) {
                inFlight = 0;
                notifyAll();
            }
        }
    }

    /**
     * Sends what is waiting, for {@code timeout} at most, and stops the thread; spans ending
     * later are not sent.
     */
    void shutdown(Duration timeout) {
        if (this == OFF) {
            return;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            stopping = true;
            notifyAll();
            try {
                while (!queue.isEmpty() || inFlight > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    wait(Math.max(1, left / 1_000_000));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (!queue.isEmpty() || inFlight > 0) {
                LOG.warn("{} spans not exported at shutdown", queue.size() + inFlight);
            }
            discard = true;
            queue.clear();
        }
        thread.interrupt();
    }

    /** Stops at once, as if the process died: waiting spans are lost. */
    void abort() {
        if (this == OFF) {
            return;
        }
        synchronized (this) {
            stopping = true;
            discard = true;
            queue.clear();
            notifyAll();
        }
        thread.interrupt();
    }
}
