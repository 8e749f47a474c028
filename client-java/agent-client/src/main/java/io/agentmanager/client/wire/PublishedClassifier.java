package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * A classifier as a node publishes it.
 *
 * @param name its name (what {@code classifier(name)} parameters refer to)
 * @param title its title
 * @param values its values
 */
public record PublishedClassifier(
        @JsonProperty("name") String name,
        @JsonProperty("title") String title,
        @JsonProperty("values") List<ClassifierValue> values) {

    /** Copies the values. */
    public PublishedClassifier {
        values = values == null ? List.of() : List.copyOf(values);
    }
}
