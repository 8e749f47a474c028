package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/**
 * Lifecycle of one activation on one node.
 *
 * @param application the application
 * @param host the host
 * @param activationId the activation
 * @param launchSetting its launch setting
 * @param fencingToken the token of the launch this run came from
 * @param event what happened (a nested object tagged {@code event})
 * @param at when
 */
public record ActivationReport(
        @JsonProperty("application") String application,
        @JsonProperty("host") String host,
        @JsonProperty("activation_id") String activationId,
        @JsonProperty("launch_setting") String launchSetting,
        @JsonProperty("fencing_token") long fencingToken,
        @JsonProperty("event") ActivationEvent event,
        @JsonProperty("at") Instant at) implements ToManager {
}
