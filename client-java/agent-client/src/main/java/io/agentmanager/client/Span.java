package io.agentmanager.client;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One span of the node's traces (OTLP kind {@code INTERNAL}): an {@code activation} or a
 * {@code message}. Attributes and links are set by the thread that starts it, before anything
 * else sees it; {@link #end()} may come from any thread, once. {@link #NONE} stands for every
 * span while traces are off, so a run costs no span object then.
 */
final class Span {
    /** The span of every run and message while traces are off: no context, nothing exported. */
    static final Span NONE = new Span();

    final String name;
    final TraceContext context;
    /** The parent's span id, or null for the root of a trace. */
    final String parentSpanId;
    final long startNanos;
    private final Map<String, Object> attributes = new LinkedHashMap<>();
    private final List<TraceContext> links = new ArrayList<>();
    private final Tracer tracer;
    private volatile long endNanos;

    private Span() {
        this.name = "";
        this.context = null;
        this.parentSpanId = null;
        this.startNanos = 0;
        this.tracer = null;
    }

    Span(Tracer tracer, String name, TraceContext context, String parentSpanId, long startNanos) {
        this.tracer = tracer;
        this.name = name;
        this.context = Objects.requireNonNull(context);
        this.parentSpanId = parentSpanId;
        this.startNanos = startNanos;
    }

    /** The context reports sent under this span carry, or null while traces are off. */
    TraceContext context() {
        return context;
    }

    Span attribute(String key, String value) {
        if (this != NONE && value != null) {
            attributes.put(key, value);
        }
        return this;
    }

    Span attribute(String key, long value) {
        if (this != NONE) {
            attributes.put(key, value);
        }
        return this;
    }

    /** Links this span to another trace's span (the producer of a message). */
    Span link(TraceContext other) {
        if (this != NONE && other != null) {
            links.add(other);
        }
        return this;
    }

    /** Ends the span and hands it to the exporter; later calls do nothing. */
    void end() {
        if (this == NONE) {
            return;
        }
        synchronized (this) {
            if (endNanos != 0) {
                return;
            }
            endNanos = Math.max(startNanos, nowNanos());
        }
        tracer.ended(this);
    }

    long endNanos() {
        return endNanos;
    }

    Map<String, Object> attributes() {
        return Collections.unmodifiableMap(attributes);
    }

    List<TraceContext> links() {
        return Collections.unmodifiableList(links);
    }

    /** The wall clock in nanoseconds since the Unix epoch, as OTLP times spans. */
    static long nowNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    @Override
    public String toString() {
        return this == NONE ? "Span.NONE" : name + " " + context.traceparent();
    }
}
