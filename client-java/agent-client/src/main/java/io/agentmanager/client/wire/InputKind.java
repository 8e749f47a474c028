package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** Where an agent's work comes from. */
public enum InputKind implements Words {
    /** Runs on its own; only schedules start it. */
    STANDALONE("standalone"),
    /** Consumes messages of a data queue. */
    MESSAGES("messages");

    private final String word;

    InputKind(String word) {
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
    public static InputKind fromWord(String word) {
        return Words.parse(InputKind.class, word);
    }

    @Override
    public String toString() {
        return word;
    }
}
