package io.agentmanager.client;

import com.rabbitmq.client.Connection;
import java.util.concurrent.CompletableFuture;

/**
 * The node's one broker connection, shared by every part: the supervisor publishes a live
 * connection and withdraws it when lost; consumers and the outbox wait for the next one.
 * Thread-safe.
 */
final class Link {
    private CompletableFuture<Connection> up = new CompletableFuture<>();
    private volatile Connection current;

    synchronized void connected(Connection connection) {
        current = connection;
        if (up.isDone()) {
            up = new CompletableFuture<>();
        }
        up.complete(connection);
    }

    synchronized void lost() {
        current = null;
        if (up.isDone()) {
            up = new CompletableFuture<>();
        }
    }

    /** The live connection, or a future completed by the next one. */
    synchronized CompletableFuture<Connection> next() {
        return up;
    }

    boolean isUp() {
        Connection c = current;
        return c != null && c.isOpen();
    }

    /** The connection of the moment, or null. */
    Connection current() {
        return current;
    }

    /** Waits for a connection or for {@code stop}; null when stop came first. */
    Connection await(CompletableFuture<?> stop) {
        CompletableFuture<Connection> next = next();
        CompletableFuture.anyOf(next, stop).join();
        return stop.isDone() ? null : next.join();
    }
}
