package io.agentmanager.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentmanager.client.wire.InputKind;
import io.agentmanager.client.wire.ParamSpec;
import io.agentmanager.client.wire.WireCodec;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * An agent as registered: its spec (copied at registration), the type of its parameters and
 * its code, standalone or messages. Immutable.
 *
 * @param id the agent's id
 * @param spec its spec
 * @param params its parameter schema (copied)
 * @param paramsType the class its parameters are read into
 * @param standalone its code, when standalone
 * @param messages its code, when it takes messages
 */
record RegisteredAgent(String id, AgentSpec spec, List<ParamSpec> params, Class<?> paramsType,
        StandaloneAgent<Object> standalone, MessageAgent<Object> messages) {

    InputKind input() {
        return standalone != null ? InputKind.STANDALONE : InputKind.MESSAGES;
    }

    /**
     * The launch's values without nulls, with the schema's defaults for missing ones
     * ({@code am_domain::params::effective_values}).
     */
    ObjectNode effectiveValues(ObjectNode values) {
        ObjectNode out = WireCodec.mapper().createObjectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = values.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isNull()) {
                out.set(e.getKey(), e.getValue());
            }
        }
        for (ParamSpec p : params) {
            if (p.defaultValue() != null && !p.defaultValue().isNull() && !out.has(p.name())) {
                out.set(p.name(), p.defaultValue());
            }
        }
        return out;
    }

    /** The parameters read into the agent's type, or an {@code InvalidParameters} error. */
    Object readParams(ObjectNode values) throws AgentException {
        try {
            return WireCodec.mapper().convertValue(effectiveValues(values), paramsType);
        } catch (IllegalArgumentException e) {
            throw new AgentException("InvalidParameters", "parameters do not fit: " + e.getMessage());
        }
    }
}
