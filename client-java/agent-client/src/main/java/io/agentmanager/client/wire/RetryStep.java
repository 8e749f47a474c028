package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * One rung of a retry ladder (protocol version 3, a launch's {@code retry_steps}): from retry
 * number {@code attempt} on, a message waits {@code delay_ms} whole milliseconds (the wait
 * queue {@code <prefix>.wait.<delay_ms>ms}), until the next rung.
 *
 * @param attempt the first retry (1 = the first) that waits this long; an unsigned 32-bit count
 * @param delayMs the wait, in milliseconds
 */
public record RetryStep(
        @JsonProperty("attempt") Long attempt,
        @JsonProperty("delay_ms") Long delayMs) {

    private static final long MAX_ATTEMPT = 0xFFFF_FFFFL;

    /** Checks the fields as the Rust reader does (both required, unsigned, attempt 32-bit). */
    public RetryStep {
        Objects.requireNonNull(attempt, "missing field `attempt`");
        Objects.requireNonNull(delayMs, "missing field `delay_ms`");
        if (attempt < 0 || attempt > MAX_ATTEMPT) {
            throw new IllegalArgumentException("`attempt` " + attempt + " is not an unsigned 32-bit count");
        }
        if (delayMs < 0) {
            throw new IllegalArgumentException("`delay_ms` " + delayMs + " is negative");
        }
    }

    /**
     * A rung.
     *
     * @param attempt the first retry that waits this long
     * @param delayMs the wait in milliseconds
     * @return the step
     */
    public static RetryStep of(long attempt, long delayMs) {
        return new RetryStep(attempt, delayMs);
    }
}
