package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * The node stopped an activation because it failed too often in a row.
 *
 * @param application the application
 * @param host the host
 * @param activationId the activation
 * @param launchSetting its launch setting
 * @param consecutiveFailures failures in a row
 * @param sameTypeFailures length of the run of one error type that ended the streak
 * @param lastErrors the last errors (at most 5)
 * @param at when
 */
public record BreakerTripped(
        @JsonProperty("application") String application,
        @JsonProperty("host") String host,
        @JsonProperty("activation_id") String activationId,
        @JsonProperty("launch_setting") String launchSetting,
        @JsonProperty("consecutive_failures") long consecutiveFailures,
        @JsonProperty("same_type_failures") long sameTypeFailures,
        @JsonProperty("last_errors") List<ErrorSummary> lastErrors,
        @JsonProperty("at") Instant at) implements ToManager {
}
