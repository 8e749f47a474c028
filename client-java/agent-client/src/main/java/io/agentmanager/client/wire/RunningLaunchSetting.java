package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * One launch setting running on the node.
 *
 * @param launchSetting the launch setting
 * @param activations its activations on the node (waiting ones included)
 * @param counters since the node started, over every activation of the launch setting
 * @param byActivation each running activation's own counters (omitted when empty)
 */
public record RunningLaunchSetting(
        @JsonProperty("launch_setting") String launchSetting,
        @JsonProperty("activations") List<String> activations,
        @JsonProperty("counters") Counters counters,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) @JsonProperty("by_activation") List<ActivationCounters> byActivation) {
}
