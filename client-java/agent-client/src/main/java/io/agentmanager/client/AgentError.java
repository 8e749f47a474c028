package io.agentmanager.client;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * How an agent's run or message ended badly, as reported (Rust's {@code AgentError}).
 *
 * @param kind failed, temporary or interrupted
 * @param errorType the error type
 * @param message the message
 * @param details details
 */
record AgentError(Kind kind, String errorType, String message, String details) {

    /** The kinds of error. */
    enum Kind { FAILED, TEMPORARY, INTERRUPTED }

    private static final int MAX_DETAILS = 8_000;

    static AgentError failed(String type, String message) {
        return new AgentError(Kind.FAILED, type, message, "");
    }

    static AgentError interrupted() {
        return new AgentError(Kind.INTERRUPTED, "Interrupted", "interrupted", "");
    }

    static AgentError temporary(String message) {
        return new AgentError(Kind.TEMPORARY, TemporarilyUnavailableException.ERROR_TYPE, message, "");
    }

    /** What an agent threw, as an error. */
    static AgentError of(Throwable t) {
        if (t instanceof InterruptedException) {
            return interrupted();
        }
        if (t instanceof AgentException a) {
            Kind kind = a instanceof TemporarilyUnavailableException ? Kind.TEMPORARY : Kind.FAILED;
            String details = a.details().isEmpty() && a.getCause() != null ? stack(a.getCause()) : a.details();
            return new AgentError(kind, a.errorType(), String.valueOf(a.getMessage()), details);
        }
        String message = t.getMessage() != null ? t.getMessage() : t.getClass().getName();
        return new AgentError(Kind.FAILED, t.getClass().getSimpleName(), message, stack(t));
    }

    private static String stack(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        String s = out.toString();
        return s.length() > MAX_DETAILS ? s.substring(0, MAX_DETAILS) + "…" : s;
    }

    boolean isTemporary() {
        return kind == Kind.TEMPORARY;
    }

    boolean isInterrupted() {
        return kind == Kind.INTERRUPTED;
    }

    /** As Rust displays it: {@code <type>: <message>}. */
    @Override
    public String toString() {
        return errorType + ": " + message;
    }
}
