package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * Interrupt one activation: only a run of it launched with {@code up_to_token} or an older
 * fencing token (any run when absent).
 *
 * @param activationId the activation
 * @param reason why
 * @param upToToken the newest fencing token the interrupt applies to, or null
 */
public record Interrupt(
        @JsonProperty("activation_id") String activationId,
        @JsonProperty("reason") String reason,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("up_to_token") Long upToToken)
        implements ToNode {

    /** Checks the required field. */
    public Interrupt {
        Objects.requireNonNull(activationId, "missing field `activation_id`");
        reason = reason == null ? "" : reason;
    }
}
