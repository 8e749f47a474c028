package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** How a launch setting runs. */
public enum LaunchKind implements Words {
    /** Runs continuously while enabled (messages agents only). */
    STREAM("stream"),
    /** Runs when a schedule group containing it fires. */
    SCHEDULED("scheduled");

    private final String word;

    LaunchKind(String word) {
        this.word = word;
    }

    @Override
    @JsonValue
    public String word() {
        return word;
    }

    /**
     * Reads a word.
     *
     * @param word the wire word
     * @return the constant
     * @throws IllegalArgumentException for an unknown word
     */
    @JsonCreator
    public static LaunchKind fromWord(String word) {
        return Words.parse(LaunchKind.class, word);
    }

    @Override
    public String toString() {
        return word;
    }
}
