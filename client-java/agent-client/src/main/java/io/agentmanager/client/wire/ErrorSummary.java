package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * An error type and message, as the breaker remembers them.
 *
 * @param errorType the type
 * @param message the message
 */
public record ErrorSummary(
        @JsonProperty("error_type") String errorType,
        @JsonProperty("message") String message) {
}
