package io.agentmanager.client;

/**
 * A failure an agent reports with an error type of its own (what the breaker compares and the
 * failure log groups by). Any other exception an agent throws is a failure too, its error type
 * the exception's simple class name.
 */
public class AgentException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String errorType;
    private final String details;

    /**
     * A failure.
     *
     * @param errorType the error type, e.g. {@code Timeout}
     * @param message the human message
     */
    public AgentException(String errorType, String message) {
        this(errorType, message, "", null);
    }

    /**
     * A failure with details (a response body, a stack) and a cause.
     *
     * @param errorType the error type
     * @param message the human message
     * @param details details shown in the failure log
     * @param cause the cause, or null
     */
    public AgentException(String errorType, String message, String details, Throwable cause) {
        super(message, cause);
        this.errorType = errorType;
        this.details = details == null ? "" : details;
    }

    /**
     * The error type.
     *
     * @return the type
     */
    public String errorType() {
        return errorType;
    }

    /**
     * The details.
     *
     * @return the details, empty when none
     */
    public String details() {
        return details;
    }
}
