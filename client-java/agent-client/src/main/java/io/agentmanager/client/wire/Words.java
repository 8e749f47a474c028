package io.agentmanager.client.wire;

import java.util.Arrays;
import java.util.stream.Collectors;

/** The word of an enum constant as it travels on the wire, and reading it back. */
public interface Words {
    /**
     * The word of this constant, as serialised.
     *
     * @return the wire word
     */
    String word();

    /**
     * The constant of {@code type} whose word is {@code word}.
     *
     * @param type the enum class
     * @param word the wire word
     * @param <E> the enum type
     * @return the constant
     * @throws IllegalArgumentException naming the word and the known words when none matches
     */
    static <E extends Enum<E> & Words> E parse(Class<E> type, String word) {
        for (E e : type.getEnumConstants()) {
            if (e.word().equals(word)) {
                return e;
            }
        }
        throw new IllegalArgumentException("unknown value `" + word + "` (expected "
                + known(type) + ")");
    }

    /**
     * Whether {@code word} is the word of one of {@code type}'s constants.
     *
     * @param type the enum class
     * @param word a word
     * @param <E> the enum type
     * @return true when known
     */
    static <E extends Enum<E> & Words> boolean knows(Class<E> type, String word) {
        return Arrays.stream(type.getEnumConstants()).anyMatch(e -> e.word().equals(word));
    }

    /**
     * The known words of {@code type}, comma-separated.
     *
     * @param type the enum class
     * @param <E> the enum type
     * @return the words
     */
    static <E extends Enum<E> & Words> String known(Class<E> type) {
        return Arrays.stream(type.getEnumConstants()).map(Words::word)
                .collect(Collectors.joining(", "));
    }
}
