package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/** What happened to an activation: an object tagged by {@code event}. */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "event")
@JsonSubTypes({
    @JsonSubTypes.Type(value = ActivationEvent.Accepted.class, name = "accepted"),
    @JsonSubTypes.Type(value = ActivationEvent.Skipped.class, name = "skipped"),
    @JsonSubTypes.Type(value = ActivationEvent.Started.class, name = "started"),
    @JsonSubTypes.Type(value = ActivationEvent.Progress.class, name = "progress"),
    @JsonSubTypes.Type(value = ActivationEvent.Finished.class, name = "finished")
})
public sealed interface ActivationEvent {

    /** The node took the launch. */
    record Accepted() implements ActivationEvent {
    }

    /**
     * The node refused the launch.
     *
     * @param reason why
     */
    record Skipped(@JsonProperty("reason") String reason) implements ActivationEvent {
    }

    /** The run started. */
    record Started() implements ActivationEvent {
    }

    /**
     * Progress of the run.
     *
     * @param done units done (omitted when null)
     * @param total units in all (omitted when null)
     * @param message free text (omitted when empty)
     */
    record Progress(
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("done") Long done,
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("total") Long total,
            @JsonInclude(JsonInclude.Include.NON_EMPTY) @JsonProperty("message") String message)
            implements ActivationEvent {
    }

    /**
     * The run ended.
     *
     * @param result succeeded, failed or interrupted
     * @param error why it failed (omitted when null)
     * @param counters what the activation did on this node (omitted when null)
     */
    record Finished(
            @JsonProperty("result") ActivationResult result,
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("error") String error,
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("counters") Counters counters)
            implements ActivationEvent {
    }
}
