package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * One value of a classifier.
 *
 * @param code what parameters carry
 * @param label what people see
 */
public record ClassifierValue(@JsonProperty("code") String code, @JsonProperty("label") String label) {
}
