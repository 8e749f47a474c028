package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/** A command the manager sends to one node's control queue (tag {@code type}). */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = Launch.class, name = "launch"),
    @JsonSubTypes.Type(value = Stop.class, name = "stop"),
    @JsonSubTypes.Type(value = Interrupt.class, name = "interrupt")
})
public sealed interface ToNode permits Launch, Stop, Interrupt {
}
