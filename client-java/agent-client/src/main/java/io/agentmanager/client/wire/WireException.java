package io.agentmanager.client.wire;

/**
 * Why bytes could not be read as a protocol message. The message is the reason the node
 * writes in the {@code x-am-quarantine-reason} header, worded as the Rust side words it.
 */
public final class WireException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * A reason.
     *
     * @param reason the text
     * @param cause the parser's error, or null
     */
    public WireException(String reason, Throwable cause) {
        super(reason, cause);
    }
}
