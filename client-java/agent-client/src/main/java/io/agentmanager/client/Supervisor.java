package io.agentmanager.client;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one connection up: connects (each attempt to the next cluster member, backoff 200 ms
 * doubling to 10 s), declares the node's control topology, publishes the node, subscribes the
 * control listener, and on loss starts over. Runs on its own thread.
 */
final class Supervisor {
    private static final Logger LOG = LoggerFactory.getLogger(Supervisor.class);
    static final Duration MIN_BACKOFF = Duration.ofMillis(200);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(10);
    private static final int CONNECT_TIMEOUT_MS = 30_000;

    private final NodeRuntime node;
    private final ControlListener control;
    private final CompletableFuture<Void> stop;

    Supervisor(NodeRuntime node, ControlListener control, CompletableFuture<Void> stop) {
        this.node = node;
        this.control = control;
        this.stop = stop;
    }

    /** The connection name the manager relies on: {@code am-node <app>@<host> (<prefix>)}. */
    String connectionName() {
        return "am-node " + node.application + "@" + node.host + " (" + node.layout.names().prefix() + ")";
    }

    void run() {
        Duration backoff = MIN_BACKOFF;
        while (!stop.isDone()) {
            String url = node.brokers.nextUrl();
            String shown = BrokerAddresses.redact(url);
            Connection conn = null;
            try {
                ConnectionFactory factory = new ConnectionFactory();
                factory.setUri(url);
                if (node.sslContext != null && url.startsWith("amqps://")) {
                    factory.useSslProtocol(node.sslContext);
                } else if (url.startsWith("amqps://")) {
                    LOG.warn("{}: TLS without a trust store trusts every certificate; set NodeBuilder.sslContext", shown);
                }
                factory.setAutomaticRecoveryEnabled(false);
                factory.setTopologyRecoveryEnabled(false);
                factory.setConnectionTimeout(CONNECT_TIMEOUT_MS);
                factory.setHandshakeTimeout(CONNECT_TIMEOUT_MS);
                factory.setThreadFactory(node.threadFactory);
                conn = factory.newConnection(connectionName());
                CompletableFuture<String> lost = new CompletableFuture<>();
                conn.addShutdownListener(cause -> lost.complete(describe(cause)));
                declare(conn);
                LOG.info("connected to the broker {}", shown);
                backoff = MIN_BACKOFF;
                node.link.connected(conn);
                node.outbox.push(node.publication());
                control.subscribe(conn);
                node.notify(l -> l.connected(shown));
                CompletableFuture.anyOf(lost, stop).join();
                node.link.lost();
                control.connectionLost();
                if (stop.isDone() && !lost.isDone()) {
                    close(conn, "node shutting down");
                    return;
                }
                String reason = lost.join();
                LOG.warn("lost the broker connection {}: {}", shown, reason);
                node.notify(l -> l.disconnected(reason));
            } catch (IOException | TimeoutException | RuntimeException | java.security.GeneralSecurityException
                    | java.net.URISyntaxException e) {
                LOG.warn("cannot connect to the broker {} (retry in {}): {}", shown, backoff, e.toString());
                node.link.lost();
                if (conn != null) {
                    close(conn, "topology failed");
                }
            }
            if (!Waits.sleep(backoff, stop)) {
                return;
            }
            backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
        }
    }

    private void declare(Connection conn) throws IOException, TimeoutException {
        String queue = node.layout.names().nodeQueue(node.application, node.host);
        try {
            declareOnce(conn);
        } catch (IOException e) {
            // The classic control queue of an older node: replaced once by a quorum queue.
            if (Channels.replyCode(e) == AMQP.PRECONDITION_FAILED
                    && Channels.replyText(e).contains("'" + queue + "'")) {
                Channel ch = conn.createChannel();
                try {
                    int dropped = ch.queueDelete(queue).getMessageCount();
                    LOG.warn("replaced the node's classic control queue {} by a quorum queue ({} commands dropped)",
                            queue, dropped);
                } finally {
                    Channels.closeQuietly(ch);
                }
                declareOnce(conn);
            } else {
                throw e;
            }
        }
    }

    private void declareOnce(Connection conn) throws IOException {
        Channel ch = conn.createChannel();
        try {
            node.layout.declareNode(ch, node.application, node.host);
        } finally {
            Channels.closeQuietly(ch);
        }
    }

    private static String describe(ShutdownSignalException cause) {
        return cause.getMessage() == null ? "connection closed" : cause.getMessage();
    }

    /** Closes gracefully, waiting at most 5 s for the broker's answer. */
    static void close(Connection conn, String reason) {
        try {
            conn.close(200, reason, 5_000);
        } catch (IOException | RuntimeException e) {
            LOG.debug("connection close: {}", e.toString());
        }
    }

    /** Closes as if the process died (no graceful handshake wait). */
    static void abort(Connection conn) {
        conn.abort(320, "node aborted", 1_000);
    }
}
