package io.agentmanager.client.wire;

/**
 * Header names of the protocol ({@code am_domain::wire} constants). Integers are written as
 * AMQP long-long ({@code l}, a Java {@code Long}), text as long strings ({@code S}), times as
 * RFC 3339 text with a {@code +00:00} offset.
 */
public final class Headers {
    /** Our attempt counter on data messages (1 = first delivery); long. */
    public static final String ATTEMPT = "x-am-attempt";
    /** Time of the first failure of a data message (RFC 3339). */
    public static final String FIRST_FAILURE = "x-am-first-failure";
    /** Count of "temporarily unavailable" answers; long. */
    public static final String UNAVAILABLE = "x-am-unavailable";
    /** Time of the first "temporarily unavailable" answer (RFC 3339). */
    public static final String UNAVAILABLE_SINCE = "x-am-unavailable-since";
    /** On messages that went through the park sump once (RFC 3339 time of parking). */
    public static final String PARKED = "x-am-parked";
    /** Dead letter: the data queue. */
    public static final String DL_DATA_QUEUE = "x-am-data-queue";
    /** Dead letter: the launch setting that gave up. */
    public static final String DL_LAUNCH_SETTING = "x-am-launch-setting";
    /** Dead letter: attempts; long. */
    public static final String DL_ATTEMPTS = "x-am-attempts";
    /** Dead letter: error type of the last failure. */
    public static final String DL_ERROR_TYPE = "x-am-last-error-type";
    /** Dead letter: message of the last failure. */
    public static final String DL_ERROR_MESSAGE = "x-am-last-error-message";
    /** Dead letter: time of the last failure (RFC 3339). */
    public static final String DL_LAST_FAILURE = "x-am-last-failure";
    /** Dead letter (and quarantine): the host of the node. */
    public static final String DL_HOST = "x-am-host";
    /** Dead letter: the queue the message was consumed from. */
    public static final String DL_QUEUE = "x-am-queue";
    /** Quarantined control messages: why. */
    public static final String QUARANTINE_REASON = "x-am-quarantine-reason";
    /** A replayed dead letter: its replay token. */
    public static final String REPLAY = "x-am-replay";

    private Headers() {
    }
}
