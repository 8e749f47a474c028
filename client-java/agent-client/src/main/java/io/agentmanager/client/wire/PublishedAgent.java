package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * An agent as its code describes it.
 *
 * @param id the agent's id
 * @param title its title
 * @param input standalone or messages
 * @param parameters its parameter schema
 * @param suggestedDataQueue seeds a new catalog entry (omitted when null)
 * @param suggestedConcurrency seeds a new catalog entry (omitted when null)
 * @param suggestedOverlap seeds a new catalog entry (omitted when null)
 */
public record PublishedAgent(
        @JsonProperty("id") String id,
        @JsonProperty("title") String title,
        @JsonProperty("input") InputKind input,
        @JsonProperty("parameters") List<ParamSpec> parameters,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("suggested_data_queue") String suggestedDataQueue,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("suggested_concurrency") Concurrency suggestedConcurrency,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("suggested_overlap") OverlapPolicy suggestedOverlap) {

    /** Copies the parameters. */
    public PublishedAgent {
        parameters = parameters == null ? List.of() : List.copyOf(parameters);
    }
}
