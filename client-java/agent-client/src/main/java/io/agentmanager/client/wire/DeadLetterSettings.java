package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * What a launch setting does with a message after its last attempt. A node treats
 * {@code forward} as {@code dead-letter} (forwarding is the manager's work).
 *
 * @param policy the policy (default {@code dead-letter})
 * @param parkCooldown cool-down of policy {@code park} (default 600 s)
 * @param notifyThreshold manager side only
 * @param forwardTo manager side only
 */
public record DeadLetterSettings(
        @JsonProperty("policy") DeadLetterPolicy policy,
        @JsonProperty("park_cooldown") HumanDuration parkCooldown,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("notify_threshold") Long notifyThreshold,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("forward_to") String forwardTo) {

    /** Fills the defaults of missing fields. */
    public DeadLetterSettings {
        policy = policy == null ? DeadLetterPolicy.DEAD_LETTER : policy;
        parkCooldown = parkCooldown == null ? HumanDuration.ofSeconds(600) : parkCooldown;
    }

    /**
     * The defaults: dead-letter, 10 minutes of park cool-down.
     *
     * @return the defaults
     */
    public static DeadLetterSettings defaults() {
        return new DeadLetterSettings(null, null, null, null);
    }

    /**
     * The policy a node acts on ({@code forward} is {@code dead-letter} to a node).
     *
     * @return the effective policy
     */
    public DeadLetterPolicy nodePolicy() {
        return policy == DeadLetterPolicy.FORWARD ? DeadLetterPolicy.DEAD_LETTER : policy;
    }
}
