package io.agentmanager.client.topology;

import java.util.Map;

/**
 * A binding of a queue to an exchange, with an empty routing key.
 *
 * @param queue the queue
 * @param exchange the exchange
 * @param args binding arguments (headers filter)
 */
public record BindingSpec(String queue, String exchange, Map<String, Object> args) {
    /** Copies the arguments. */
    public BindingSpec {
        args = Map.copyOf(args);
    }
}
