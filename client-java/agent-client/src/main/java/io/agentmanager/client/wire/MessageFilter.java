package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;
import java.util.TreeMap;

/**
 * Header filter of a stream launch setting: every listed header must equal the value.
 *
 * @param headers header name to value, sorted
 */
public record MessageFilter(@JsonProperty("headers") Map<String, String> headers) {

    /** Copies the headers into a sorted, unmodifiable map. */
    public MessageFilter {
        headers = headers == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(headers));
    }

    /**
     * The empty filter (every message).
     *
     * @return the filter
     */
    public static MessageFilter none() {
        return new MessageFilter(Map.of());
    }
}
