package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One parameter of an agent's schema, as published. Types: {@code string integer decimal
 * boolean date datetime duration classifier(<name>)}. Build with {@link #of} and the
 * {@code with…} methods.
 *
 * @param name key of the value, {@code [a-z_][a-z0-9_]*}
 * @param title label forms show
 * @param description longer explanation (omitted when empty)
 * @param type the parameter type
 * @param array the value is a JSON array of values of {@code type} (omitted when false)
 * @param required a launch setting must give a value (omitted when false)
 * @param defaultValue used when a launch setting gives none (omitted when null)
 * @param min lower bound (omitted when null)
 * @param max upper bound (omitted when null)
 * @param pattern regular expression a string must match entirely (omitted when null)
 */
public record ParamSpec(
        @JsonProperty("name") String name,
        @JsonProperty("title") String title,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) @JsonProperty("description") String description,
        @JsonProperty("type") String type,
        @JsonInclude(JsonInclude.Include.NON_DEFAULT) @JsonProperty("array") boolean array,
        @JsonInclude(JsonInclude.Include.NON_DEFAULT) @JsonProperty("required") boolean required,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("default") JsonNode defaultValue,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("min") JsonNode min,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("max") JsonNode max,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("pattern") String pattern) {

    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]*");
    private static final Pattern TYPE = Pattern.compile(
            "string|integer|decimal|boolean|date|datetime|duration|classifier\\(\\s*\\S.*\\)");

    /** Normalises missing text. */
    public ParamSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        title = title == null ? "" : title;
        description = description == null ? "" : description;
    }

    /**
     * An optional single-valued parameter.
     *
     * @param name the key
     * @param type {@code string}, {@code integer}, {@code decimal}, {@code boolean},
     *     {@code date}, {@code datetime}, {@code duration} or {@code classifier(<name>)}
     * @return the spec
     */
    public static ParamSpec of(String name, String type) {
        return new ParamSpec(name, "", "", type, false, false, null, null, null, null);
    }

    /**
     * A parameter whose values are codes of the application's classifier.
     *
     * @param name the key
     * @param classifier the classifier's name
     * @return the spec
     */
    public static ParamSpec classifier(String name, String classifier) {
        return of(name, "classifier(" + classifier + ")");
    }

    /**
     * With a title.
     *
     * @param title the label
     * @return a copy
     */
    public ParamSpec withTitle(String title) {
        return new ParamSpec(name, title, description, type, array, required, defaultValue, min, max, pattern);
    }

    /**
     * With a description.
     *
     * @param description the explanation
     * @return a copy
     */
    public ParamSpec withDescription(String description) {
        return new ParamSpec(name, title, description, type, array, required, defaultValue, min, max, pattern);
    }

    /**
     * As an array of values.
     *
     * @return a copy
     */
    public ParamSpec asArray() {
        return new ParamSpec(name, title, description, type, true, required, defaultValue, min, max, pattern);
    }

    /**
     * As required.
     *
     * @return a copy
     */
    public ParamSpec asRequired() {
        return new ParamSpec(name, title, description, type, array, true, defaultValue, min, max, pattern);
    }

    /**
     * With a default, in the parameter's JSON form ({@code "10s"}, {@code 0}, {@code true}).
     *
     * @param value a String, Number, Boolean or JsonNode
     * @return a copy
     */
    public ParamSpec withDefault(Object value) {
        return new ParamSpec(name, title, description, type, array, required, WireCodec.toNode(value), min, max, pattern);
    }

    /**
     * With a lower bound.
     *
     * @param value a String, Number or JsonNode
     * @return a copy
     */
    public ParamSpec withMin(Object value) {
        return new ParamSpec(name, title, description, type, array, required, defaultValue, WireCodec.toNode(value), max, pattern);
    }

    /**
     * With an upper bound.
     *
     * @param value a String, Number or JsonNode
     * @return a copy
     */
    public ParamSpec withMax(Object value) {
        return new ParamSpec(name, title, description, type, array, required, defaultValue, min, WireCodec.toNode(value), pattern);
    }

    /**
     * With a pattern.
     *
     * @param regex the regular expression
     * @return a copy
     */
    public ParamSpec withPattern(String regex) {
        return new ParamSpec(name, title, description, type, array, required, defaultValue, min, max, regex);
    }

    /**
     * What is wrong with this spec, or null.
     *
     * @return the problem or null
     */
    public String problem() {
        if (!NAME.matcher(name).matches()) {
            return "name `" + name + "` must match [a-z_][a-z0-9_]*";
        }
        if (!TYPE.matcher(type.trim()).matches()) {
            return "unknown parameter type '" + type + "' (expected string, integer, decimal, "
                    + "boolean, date, datetime, duration or classifier(<name>))";
        }
        return null;
    }
}
