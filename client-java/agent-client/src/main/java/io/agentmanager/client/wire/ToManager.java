package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/** A report a node sends to the manager's reports queue (tag {@code type}, kebab-case). */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = Publication.class, name = "publication"),
    @JsonSubTypes.Type(value = Heartbeat.class, name = "heartbeat"),
    @JsonSubTypes.Type(value = ActivationReport.class, name = "activation"),
    @JsonSubTypes.Type(value = FailureReport.class, name = "failure"),
    @JsonSubTypes.Type(value = BreakerTripped.class, name = "breaker-tripped"),
    @JsonSubTypes.Type(value = ReplayProcessed.class, name = "replay-processed")
})
public sealed interface ToManager
        permits Publication, Heartbeat, ActivationReport, FailureReport, BreakerTripped,
        ReplayProcessed {
}
