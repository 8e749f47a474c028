package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** Result of a finished activation. */
public enum ActivationResult implements Words {
    /** The run ended well. */
    SUCCEEDED("succeeded"),
    /** The run failed. */
    FAILED("failed"),
    /** The run was asked to stop and did. */
    INTERRUPTED("interrupted");

    private final String word;

    ActivationResult(String word) {
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
    public static ActivationResult fromWord(String word) {
        return Words.parse(ActivationResult.class, word);
    }

    @Override
    public String toString() {
        return word;
    }
}
