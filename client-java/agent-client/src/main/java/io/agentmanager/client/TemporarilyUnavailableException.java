package io.agentmanager.client;

/**
 * A transient condition the agent detected (a document not replicated yet): the message comes
 * back later without using an attempt, the breaker does not count it, and after the launch's
 * {@code unavailable_for} budget it is dead-lettered saying so. Error type
 * {@code TemporarilyUnavailable}.
 */
public class TemporarilyUnavailableException extends AgentException {
    private static final long serialVersionUID = 1L;

    /** The error type of such failures. */
    public static final String ERROR_TYPE = "TemporarilyUnavailable";

    /**
     * A temporary condition.
     *
     * @param message what is unavailable
     */
    public TemporarilyUnavailableException(String message) {
        super(ERROR_TYPE, message);
    }
}
