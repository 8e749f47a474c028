package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** How a data queue distributes its messages. */
public enum DataQueueKind implements Words {
    /** Point to point: launch settings of one agent compete for messages. */
    QUEUE("queue"),
    /** Every launch setting gets its own copy of each message. */
    TOPIC("topic");

    private final String word;

    DataQueueKind(String word) {
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
    public static DataQueueKind fromWord(String word) {
        return Words.parse(DataQueueKind.class, word);
    }

    @Override
    public String toString() {
        return word;
    }
}
