package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * Stop every activation of a launch setting on this node.
 *
 * @param launchSetting the launch setting
 * @param reason why (free text)
 */
public record Stop(
        @JsonProperty("launch_setting") String launchSetting,
        @JsonProperty("reason") String reason) implements ToNode {

    /** Checks the required field. */
    public Stop {
        Objects.requireNonNull(launchSetting, "missing field `launch_setting`");
        reason = reason == null ? "" : reason;
    }
}
