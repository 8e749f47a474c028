package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * The data source of a messages launch.
 *
 * @param dataQueue the data queue's id
 * @param address the data queue's exchange
 * @param kind topic (own subscription queue) or queue (shared queue)
 * @param filter header filter
 * @param delay Delayed launch settings: the data queue's delay
 */
public record Subscription(
        @JsonProperty("data_queue") String dataQueue,
        @JsonProperty("address") String address,
        @JsonProperty("kind") DataQueueKind kind,
        @JsonProperty("filter") MessageFilter filter,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("delay") HumanDuration delay) {

    /** Checks the required fields and fills the default filter. */
    public Subscription {
        Objects.requireNonNull(dataQueue, "missing field `data_queue`");
        Objects.requireNonNull(address, "missing field `address`");
        Objects.requireNonNull(kind, "missing field `kind`");
        filter = filter == null ? MessageFilter.none() : filter;
    }
}
