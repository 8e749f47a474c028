package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * Periodic liveness of a node and of its running activations.
 *
 * @param application the application
 * @param host the host
 * @param capacity activations run at once
 * @param running the running launch settings
 * @param load one-minute load average, when known (omitted when null)
 * @param droppedReports reports dropped because the outbox was full
 * @param quarantined control messages sent to the quarantine
 * @param at when
 */
public record Heartbeat(
        @JsonProperty("application") String application,
        @JsonProperty("host") String host,
        @JsonProperty("capacity") long capacity,
        @JsonProperty("running") List<RunningLaunchSetting> running,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("load") Double load,
        @JsonProperty("dropped_reports") long droppedReports,
        @JsonProperty("quarantined") long quarantined,
        @JsonProperty("at") Instant at) implements ToManager {
}
