package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * What a node offers, sent after every (re)connect.
 *
 * @param application the application
 * @param host the node's host
 * @param version the application's version (free text)
 * @param capacity activations run at once
 * @param agents the agents, sorted by id
 * @param classifiers the classifiers with their values
 * @param protocol the newest protocol version the node speaks
 */
public record Publication(
        @JsonProperty("application") String application,
        @JsonProperty("host") String host,
        @JsonProperty("version") String version,
        @JsonProperty("capacity") long capacity,
        @JsonProperty("agents") List<PublishedAgent> agents,
        @JsonProperty("classifiers") List<PublishedClassifier> classifiers,
        @JsonProperty("protocol") long protocol) implements ToManager {
}
