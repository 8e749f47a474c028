package io.agentmanager.client.topology;

import java.util.Map;

/**
 * A durable exchange with every argument.
 *
 * @param name the exchange
 * @param type {@code direct}, {@code fanout} or {@code headers}
 * @param args its arguments
 */
public record ExchangeSpec(String name, String type, Map<String, Object> args) {
    /** Copies the arguments. */
    public ExchangeSpec {
        args = Map.copyOf(args);
    }
}
