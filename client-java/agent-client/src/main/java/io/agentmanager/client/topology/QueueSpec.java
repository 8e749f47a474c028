package io.agentmanager.client.topology;

import java.util.Map;

/**
 * A durable queue with every argument, as the manager declares it.
 *
 * @param name the queue
 * @param args its arguments (integers as {@code Long}, text as {@code String})
 */
public record QueueSpec(String name, Map<String, Object> args) {
    /** Copies the arguments. */
    public QueueSpec {
        args = Map.copyOf(args);
    }
}
