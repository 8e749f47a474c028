package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Run a launch setting's agent once (one activation). Missing optional fields take the
 * manager's defaults, as the Rust node reads them.
 *
 * @param activationId the activation (a UUID chosen by the manager)
 * @param launchSetting the launch setting
 * @param agent the agent's id
 * @param kind stream or scheduled
 * @param parameters effective parameter values
 * @param fencingToken grows with every dispatch of the activation; reports carry it back
 * @param overlap overlap policy (default allow)
 * @param retry retry policy
 * @param retrySteps the retry policy's ladder as the manager computed it (protocol version 3;
 *     empty from older managers): the wait before each retry, see {@link #retryDelay(long)}
 * @param unavailableFor how long a message may answer "temporarily unavailable" (default 24 h)
 * @param deadLetter dead-letter settings
 * @param failureThreshold breaker threshold M (default 10)
 * @param subscription messages agents: where messages come from
 * @param idleTimeout scheduled messages agents: finish after this long without a message
 * @param maxRunTime the node interrupts the run after this long
 */
public record Launch(
        @JsonProperty("activation_id") String activationId,
        @JsonProperty("launch_setting") String launchSetting,
        @JsonProperty("agent") String agent,
        @JsonProperty("kind") LaunchKind kind,
        @JsonProperty("parameters") ObjectNode parameters,
        @JsonProperty("fencing_token") Long fencingToken,
        @JsonProperty("overlap") OverlapPolicy overlap,
        @JsonProperty("retry") RetryPolicy retry,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) @JsonProperty("retry_steps") List<RetryStep> retrySteps,
        @JsonProperty("unavailable_for") HumanDuration unavailableFor,
        @JsonProperty("dead_letter") DeadLetterSettings deadLetter,
        @JsonProperty("failure_threshold") Long failureThreshold,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("subscription") Subscription subscription,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("idle_timeout") HumanDuration idleTimeout,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("max_run_time") HumanDuration maxRunTime)
        implements ToNode {

    /** Default breaker threshold M of a launch setting. */
    public static final long DEFAULT_FAILURE_THRESHOLD = 10;

    /** Checks the required fields and fills the defaults. */
    public Launch {
        Objects.requireNonNull(activationId, "missing field `activation_id`");
        Objects.requireNonNull(launchSetting, "missing field `launch_setting`");
        Objects.requireNonNull(agent, "missing field `agent`");
        Objects.requireNonNull(kind, "missing field `kind`");
        Objects.requireNonNull(fencingToken, "missing field `fencing_token`");
        parameters = parameters == null ? JsonNodeFactory.instance.objectNode() : parameters;
        overlap = overlap == null ? OverlapPolicy.ALLOW : overlap;
        retry = retry == null ? RetryPolicy.defaults() : retry;
        retrySteps = retrySteps == null ? List.of() : List.copyOf(retrySteps);
        unavailableFor = unavailableFor == null ? HumanDuration.ofSeconds(24 * 3600) : unavailableFor;
        deadLetter = deadLetter == null ? DeadLetterSettings.defaults() : deadLetter;
        failureThreshold = failureThreshold == null ? DEFAULT_FAILURE_THRESHOLD : failureThreshold;
    }

    /**
     * The wait before retry number {@code attempt} (1 = the first retry; also the wait before
     * the {@code attempt}-th answer "temporarily unavailable"): from {@link #retrySteps()} when
     * the manager sent them ({@link RetryMath#stepDelay}), else computed from {@link #retry()}
     * as managers before protocol version 3 expect ({@link RetryMath#retryDelay}).
     *
     * @param attempt the retry number (below 1 counts as 1)
     * @return the delay
     */
    public Duration retryDelay(long attempt) {
        return RetryMath.stepDelay(retrySteps, attempt).orElseGet(() -> RetryMath.retryDelay(retry, attempt));
    }
}
