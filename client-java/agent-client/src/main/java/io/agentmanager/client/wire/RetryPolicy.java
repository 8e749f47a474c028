package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Redelivery of a failed message: {@code initial_delay × multiplier^(attempt-1)}, capped at
 * {@code max_delay}; {@code max_deliveries} attempts before a message is dead-lettered.
 * Missing fields take the manager's defaults (1 s, 2.0, 300 s, 10).
 *
 * @param initialDelay delay before the first retry
 * @param multiplier growth per retry
 * @param maxDelay the cap
 * @param maxDeliveries attempts before the message leaves the retry loop
 */
public record RetryPolicy(
        @JsonProperty("initial_delay") HumanDuration initialDelay,
        @JsonProperty("multiplier") Double multiplier,
        @JsonProperty("max_delay") HumanDuration maxDelay,
        @JsonProperty("max_deliveries") Long maxDeliveries) {

    /** Fills the defaults of missing fields. */
    public RetryPolicy {
        initialDelay = initialDelay == null ? HumanDuration.ofSeconds(1) : initialDelay;
        multiplier = multiplier == null ? 2.0 : multiplier;
        maxDelay = maxDelay == null ? HumanDuration.ofSeconds(300) : maxDelay;
        maxDeliveries = maxDeliveries == null ? 10L : maxDeliveries;
    }

    /**
     * The manager's default policy.
     *
     * @return 1 s × 2^n up to 300 s, 10 deliveries
     */
    public static RetryPolicy defaults() {
        return new RetryPolicy(null, null, null, null);
    }
}
