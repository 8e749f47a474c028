package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Message counters of a launch setting on a node, or of one activation.
 *
 * @param processed messages (or standalone runs) that succeeded
 * @param failed failures
 * @param retried copies sent to wait (retry, park, unavailable)
 * @param deadLettered copies sent to the dead-letter queue
 */
public record Counters(
        @JsonProperty("processed") long processed,
        @JsonProperty("failed") long failed,
        @JsonProperty("retried") long retried,
        @JsonProperty("dead_lettered") long deadLettered) {
}
