package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** What becomes of a message after its last attempt. */
public enum DeadLetterPolicy implements Words {
    /** To the system dead-letter queue. */
    DEAD_LETTER("dead-letter"),
    /** To the sump for the cool-down, replayed once, then dead. */
    PARK("park"),
    /** No delivery limit; the breaker is what stops the waste. */
    RETRY_FOREVER("retry-forever"),
    /** As dead-letter for a node (the manager forwards a copy). */
    FORWARD("forward");

    private final String word;

    DeadLetterPolicy(String word) {
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
    public static DeadLetterPolicy fromWord(String word) {
        return Words.parse(DeadLetterPolicy.class, word);
    }

    @Override
    public String toString() {
        return word;
    }
}
