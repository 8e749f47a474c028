package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** What a launch does when an activation of its launch setting still runs on the node. */
public enum OverlapPolicy implements Words {
    /** Run beside an instance that is still running. */
    ALLOW("allow"),
    /** Refuse the new run and report it skipped. */
    SKIP("skip"),
    /** Cancel the running instance, wait for it, then start. */
    INTERRUPT("interrupt");

    private final String word;

    OverlapPolicy(String word) {
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
    public static OverlapPolicy fromWord(String word) {
        return Words.parse(OverlapPolicy.class, word);
    }

    @Override
    public String toString() {
        return word;
    }
}
