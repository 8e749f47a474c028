package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** How many nodes of a pool run a launch. */
public enum Concurrency implements Words {
    /** One node of the pool (the least loaded one). */
    ANY("ANY"),
    /** Every node of the pool. */
    MANY("MANY");

    private final String word;

    Concurrency(String word) {
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
    public static Concurrency fromWord(String word) {
        return Words.parse(Concurrency.class, word);
    }

    @Override
    public String toString() {
        return word;
    }
}
