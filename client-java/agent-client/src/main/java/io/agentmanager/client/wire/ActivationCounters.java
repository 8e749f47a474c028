package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The counters of one activation since its start.
 *
 * @param activationId the activation
 * @param counters its counters
 */
public record ActivationCounters(
        @JsonProperty("activation_id") String activationId,
        @JsonProperty("counters") Counters counters) {
}
