package io.agentmanager.client;

import io.agentmanager.client.topology.Layout;
import io.agentmanager.client.wire.BreakerTripped;
import io.agentmanager.client.wire.FailureReport;
import io.agentmanager.client.wire.Publication;
import io.agentmanager.client.wire.PublishedAgent;
import io.agentmanager.client.wire.ReplayProcessed;
import io.agentmanager.client.wire.ReplayToken;
import io.agentmanager.client.wire.WireCodec;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the node's parts share: who the node is, its agents, its link and outbox, its
 * executor and timers, each launch setting's counters and breaker, and the reports every part
 * sends. Immutable configuration plus thread-safe state.
 */
final class NodeRuntime {
    private static final Logger LOG = LoggerFactory.getLogger(NodeRuntime.class);

    final String application;
    final String host;
    final String version;
    final BrokerAddresses brokers;
    final Layout layout;
    final int capacity;
    final Duration heartbeatEvery;
    final Duration interruptGrace;
    final Duration shutdownTimeout;
    final Duration defaultIdleTimeout;
    final Map<String, RegisteredAgent> agents;
    final List<Classifier> classifiers;
    final ThreadFactory threadFactory;
    /** Runs activations and agent code. */
    final ExecutorService executor;
    final boolean ownsExecutor;
    /** Heartbeats, max run time, resubscriptions. */
    final ScheduledExecutorService timers;
    final NodeListener listener;
    /** TLS of amqps:// members, or null for amqp-client's default. */
    final javax.net.ssl.SSLContext sslContext;
    final Link link = new Link();
    final Outbox outbox;
    /** The node's spans: {@link Tracer#off()} unless traces are exported. */
    final Tracer tracer;
    final SlotPool slots;
    final AtomicLong quarantined = new AtomicLong();
    private final Map<String, LaunchSettingStats> stats = new ConcurrentHashMap<>();

    NodeRuntime(NodeBuilder b, BrokerAddresses brokers, ExecutorService executor, boolean ownsExecutor,
            ScheduledExecutorService timers) {
        this.application = b.application;
        this.host = b.host;
        this.version = b.version;
        this.brokers = brokers;
        this.layout = Layout.of(b.prefix).ephemeral(b.queueExpiry);
        this.capacity = b.capacity;
        this.heartbeatEvery = b.heartbeatEvery;
        this.interruptGrace = b.interruptGrace;
        this.shutdownTimeout = b.shutdownTimeout;
        this.defaultIdleTimeout = b.defaultIdleTimeout;
        this.agents = Map.copyOf(b.agents);
        this.classifiers = List.copyOf(b.classifiers);
        this.threadFactory = b.threadFactory;
        this.executor = executor;
        this.ownsExecutor = ownsExecutor;
        this.timers = timers;
        this.listener = b.listener;
        this.sslContext = b.sslContext;
        this.outbox = new Outbox(b.reportBuffer);
        this.tracer = Tracer.start(b.traces, b.threadFactory);
        this.slots = new SlotPool(b.capacity);
    }

    LaunchSettingStats stats(String launchSetting) {
        return stats.computeIfAbsent(launchSetting, k -> new LaunchSettingStats());
    }

    Publication publication() {
        List<PublishedAgent> published = agents.values().stream()
                .map(a -> a.spec().publish(a.input()))
                .sorted(Comparator.comparing(PublishedAgent::id))
                .toList();
        return new Publication(application, host, version, capacity, published,
                classifiers.stream().map(Classifier::publish).toList(), WireCodec.NODE_PROTOCOL);
    }

    void reportFailure(ActivationRun run, AgentError err, long attempt, String dataMessageId,
            String disposition, ReplayToken replay) {
        LOG.warn("agent failed: {} (attempt {}, disposition {})", err, attempt, disposition);
        outbox.push(new FailureReport(application, host, run.activationId, run.launchSetting,
                run.agent, err.errorType(), err.message(), err.details(), dataMessageId, attempt,
                err.isTemporary(), disposition, Instant.now(), UUID.randomUUID().toString(), replay),
                run.current.context());
    }

    void reportReplayProcessed(ActivationRun run, ReplayToken replay) {
        outbox.push(new ReplayProcessed(application, host, run.activationId, run.launchSetting,
                replay, Instant.now()), run.current.context());
    }

    void reportTrip(ActivationRun run, Breaker.Trip trip) {
        LOG.warn("breaker tripped: {} consecutive failures, {} of one type", trip.consecutive(), trip.sameType());
        outbox.push(new BreakerTripped(application, host, run.activationId, run.launchSetting,
                trip.consecutive(), trip.sameType(), trip.lastErrors(), Instant.now()), run.current.context());
    }

    /** Calls the listener, logging (never propagating) what it throws. */
    void notify(java.util.function.Consumer<NodeListener> call) {
        try {
            call.accept(listener);
        } catch (RuntimeException e) {
            LOG.warn("the node listener failed", e);
        }
    }
}
