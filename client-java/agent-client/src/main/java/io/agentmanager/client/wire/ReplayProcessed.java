package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/**
 * A node processed a replayed dead letter (protocol version 2).
 *
 * @param application the application
 * @param host the host
 * @param activationId the activation
 * @param launchSetting its launch setting
 * @param replay the replay token
 * @param at when
 */
public record ReplayProcessed(
        @JsonProperty("application") String application,
        @JsonProperty("host") String host,
        @JsonProperty("activation_id") String activationId,
        @JsonProperty("launch_setting") String launchSetting,
        @JsonProperty("replay") ReplayToken replay,
        @JsonProperty("at") Instant at) implements ToManager {
}
