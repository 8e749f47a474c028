package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * One replay of one dead letter, {@code <dead letter id>.<replay number>}: the manager stamps
 * a replayed dead letter with it in the {@link Headers#REPLAY} header.
 *
 * @param deadLetter the dead letter's id
 * @param replay which replay of it
 */
public record ReplayToken(long deadLetter, int replay) {

    /**
     * Reads {@code 42.3}.
     *
     * @param text the token text
     * @return the token
     * @throws IllegalArgumentException when the text is not a token
     */
    @JsonCreator
    public static ReplayToken parse(String text) {
        String bad = "`" + text + "` is not a replay token (`<dead letter id>.<replay number>`)";
        if (text == null) {
            throw new IllegalArgumentException(bad);
        }
        int dot = text.indexOf('.');
        if (dot < 0) {
            throw new IllegalArgumentException(bad);
        }
        try {
            return new ReplayToken(Long.parseLong(text.substring(0, dot)),
                    Integer.parseInt(text.substring(dot + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(bad, e);
        }
    }

    @JsonValue
    @Override
    public String toString() {
        return deadLetter + "." + replay;
    }
}
