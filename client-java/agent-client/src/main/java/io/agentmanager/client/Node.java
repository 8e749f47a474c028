package io.agentmanager.client;

import com.rabbitmq.client.Connection;

import io.agentmanager.client.wire.Heartbeat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running node: one application on one host, connected to the manager over RabbitMQ.
 * Create it with {@link #builder()}; {@link #close()} stops it gracefully. Thread-safe.
 *
 * <pre>{@code
 * try (Node node = Node.builder().application("billing").host("billing-01")
 *         .standalone(AgentSpec.of("export").title("Export"), ExportParams.class, new Export())
 *         .start()) {
 *     node.awaitReady(Duration.ofSeconds(10));
 *     ...
 * }
 * }</pre>
 */
public final class Node implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Node.class);

    private final NodeRuntime runtime;
    private final Dispatcher dispatcher;
    private final ControlListener control;
    private final Supervisor supervisor;
    private final CompletableFuture<Void> stopIo = new CompletableFuture<>();
    private final Thread supervisorThread;
    private final Thread outboxThread;
    private volatile boolean closed;

    private Node(NodeRuntime runtime) {
        this.runtime = runtime;
        this.dispatcher = new Dispatcher(runtime);
        this.control = new ControlListener(runtime, dispatcher);
        this.supervisor = new Supervisor(runtime, control, stopIo);
        this.supervisorThread = runtime.threadFactory.newThread(supervisor::run);
        this.supervisorThread.setName("am-node-connection");
        String reports = runtime.layout.names().reportsQueue();
        this.outboxThread = runtime.threadFactory.newThread(() -> runtime.outbox.run(runtime.link, reports, stopIo));
        this.outboxThread.setName("am-node-outbox");
    }

    /**
     * A builder.
     *
     * @return a new builder
     */
    public static NodeBuilder builder() {
        return new NodeBuilder();
    }

    static Node start(NodeBuilder b, BrokerAddresses brokers) {
        boolean owns = b.executor == null;
        ExecutorService executor = owns ? Executors.newCachedThreadPool(b.threadFactory) : b.executor;
        ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(b.threadFactory);
        Node node = new Node(new NodeRuntime(b, brokers, executor, owns, timers));
        node.supervisorThread.start();
        node.outboxThread.start();
        long every = node.runtime.heartbeatEvery.toMillis();
        timers.scheduleWithFixedDelay(node::heartbeat, every, every, TimeUnit.MILLISECONDS);
        LOG.info("node {}@{} starting (prefix {}, capacity {})", b.application, b.host, b.prefix, b.capacity);
        return node;
    }

    private void heartbeat() {
        try {
            if (!runtime.link.isUp()) {
                return;
            }
            runtime.outbox.push(new Heartbeat(runtime.application, runtime.host, runtime.capacity,
                    dispatcher.snapshot(), loadAverage(), runtime.outbox.dropped(), runtime.quarantined.get(),
                    Instant.now()));
        } catch (RuntimeException e) {
            LOG.error("heartbeat not sent", e);
        }
    }

    private static Double loadAverage() {
        try {
            String text = Files.readString(Path.of("/proc/loadavg")).trim();
            return Double.parseDouble(text.split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Waits until the node listens to its control queue.
     *
     * @param timeout how long to wait
     * @return true when ready, false at the timeout
     * @throws InterruptedException when interrupted
     */
    public boolean awaitReady(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                control.ready().get(Math.max(1, (deadline - System.nanoTime()) / 1_000_000), TimeUnit.MILLISECONDS);
                return true;
            } catch (TimeoutException e) {
                return false;
            } catch (ExecutionException e) {
                return false;
            } catch (java.util.concurrent.CancellationException e) {
                if (System.nanoTime() > deadline) {
                    return false;
                }
            }
        }
    }

    /**
     * Whether the node is connected right now.
     *
     * @return true when connected
     */
    public boolean isConnected() {
        return runtime.link.isUp();
    }

    /**
     * Reports dropped because the buffer was full while the broker was away.
     *
     * @return the count
     */
    public long droppedReports() {
        return runtime.outbox.dropped();
    }

    /**
     * Spans dropped because the export queue was full (0 while traces are off).
     *
     * @return the count
     */
    public long droppedSpans() {
        return runtime.tracer.dropped();
    }

    /**
     * The connection name the manager shows: {@code am-node <app>@<host> (<prefix>)}.
     *
     * @return the name
     */
    public String connectionName() {
        return supervisor.connectionName();
    }

    /**
     * Stops taking launches and commands (they wait in the control queue); runs go on. With
     * {@link #resumeIntake()}, the way to let a node's runs drain without cancelling them
     * (unlike {@link #close()}, which asks every run to stop at once).
     */
    public void pauseIntake() {
        control.pause();
    }

    /** Takes launches and commands again after {@link #pauseIntake()}. */
    public void resumeIntake() {
        control.resume();
    }

    /**
     * Graceful, bounded stop, as the Rust node's {@code Node::shutdown}: no new commands (they
     * wait in the control queue); every activation is asked to stop at once, standalone and
     * message runs alike, started or still waiting for a slot (its context says cancelled and
     * its agent's thread is interrupted; a message in hand goes back to the queue unless the
     * handler finishes it, prefetched ones go back); then up to the shutdown timeout (30 s by
     * default, {@link NodeBuilder#shutdownTimeout}) for them to end, each with a {@code finished}
     * report ({@code interrupted}, or its own result when it ended on its own; an agent deaf to
     * the interruption is abandoned after the interrupt grace); reports are flushed (5 s at
     * most), then the spans waiting for export (5 s at most); the connection closes. A run still going at the end of the shutdown timeout is left
     * without a {@code finished} report. To let runs finish instead, {@link #pauseIntake()} and
     * wait for them before closing.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        LOG.info("node {}@{} shutting down", runtime.application, runtime.host);
        control.pause();
        dispatcher.shutdown();
        if (!awaitRuns(runtime.shutdownTimeout)) {
            LOG.warn("activations still running at the end of the shutdown timeout ({})", runtime.shutdownTimeout);
        }
        try {
            if (!runtime.outbox.flush(Duration.ofSeconds(5))) {
                LOG.warn("{} reports not confirmed at shutdown", runtime.outbox.pending());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        runtime.tracer.shutdown(Duration.ofSeconds(5));
        stopIo();
    }

    /**
     * Waits until no run is left (runs taken while the shutdown began included: they are
     * stopped as soon as accepted), at most {@code timeout}.
     */
    private boolean awaitRuns(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<ActivationRun> runs = dispatcher.all();
            if (runs.isEmpty()) {
                return true;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            CompletableFuture<?> all = CompletableFuture.allOf(runs.stream().map(r -> r.finished)
                    .toArray(CompletableFuture[]::new));
            try {
                all.get(left, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return false;
            } catch (ExecutionException e) {
                // `finished` is only ever completed normally; look again.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    private void stopIo() {
        stopIo.complete(null);
        runtime.outbox.wake();
        join(supervisorThread);
        join(outboxThread);
        runtime.timers.shutdownNow();
        if (runtime.ownsExecutor) {
            runtime.executor.shutdownNow();
        }
    }

    private static void join(Thread t) {
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops at once, as if the process died: the connection closes with messages
     * unacknowledged (the broker gives them to other nodes) and unsent reports are lost.
     */
    public void abort() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        control.pause();
        Connection c = runtime.link.current();
        stopIo.complete(null);
        if (c != null) {
            Supervisor.abort(c);
        }
        dispatcher.all().forEach(r -> r.cancel("node aborted"));
        runtime.tracer.abort();
        runtime.outbox.wake();
        join(supervisorThread);
        join(outboxThread);
        runtime.timers.shutdownNow();
        if (runtime.ownsExecutor) {
            runtime.executor.shutdownNow();
        }
    }

}
