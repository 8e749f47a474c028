package io.agentmanager.client;

import com.rabbitmq.client.LongString;
import java.util.Map;

/**
 * A W3C trace context (<a href="https://www.w3.org/TR/trace-context/">Trace Context</a>): the
 * {@code traceparent} and {@code tracestate} carried in the AMQP headers of launch commands,
 * reports and data messages, so one trace follows an activation from the manager's fire into
 * the node's run and back. Parsing never throws: a header that does not follow the
 * specification is ignored, as the Rust node's propagator ignores it.
 *
 * <pre>{@code
 * TraceContext cx = TraceContext.parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "a=1");
 * cx.traceparent();   // the same text
 * }</pre>
 *
 * @param traceId 32 lowercase hex digits, not all zero
 * @param spanId 16 lowercase hex digits, not all zero
 * @param sampled the {@code sampled} flag
 * @param traceState the {@code tracestate} passed through, empty when none
 */
public record TraceContext(String traceId, String spanId, boolean sampled, String traceState) {
    /** The header carrying the trace id, the parent's span id and the flags. */
    public static final String TRACEPARENT = "traceparent";
    /** The header carrying vendor state, passed through untouched. */
    public static final String TRACESTATE = "tracestate";

    /** The specification's limit on {@code tracestate}, beyond which it may be dropped. */
    private static final int MAX_TRACESTATE = 512;

    /**
     * A context from valid ids.
     *
     * @throws IllegalArgumentException when an id is not lowercase hex of its length or is all
     *     zero
     */
    public TraceContext {
        if (!validId(traceId, 32) || !validId(spanId, 16)) {
            throw new IllegalArgumentException("not a trace id and span id: " + traceId + ", " + spanId);
        }
        traceState = cleanState(traceState);
    }

    /**
     * Reads a {@code traceparent} and its {@code tracestate}.
     *
     * @param traceparent the header's value, or null
     * @param tracestate the {@code tracestate} header's value, or null
     * @return the context, or null when {@code traceparent} is absent or invalid (then
     *     {@code tracestate} is ignored too, as the specification says)
     */
    public static TraceContext parse(String traceparent, String tracestate) {
        if (traceparent == null) {
            return null;
        }
        String t = traceparent.trim();
        // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 characters.
        if (t.length() < 55 || t.charAt(2) != '-' || t.charAt(35) != '-' || t.charAt(52) != '-') {
            return null;
        }
        String version = t.substring(0, 2);
        if (!lowerHex(version) || version.equals("ff")) {
            return null;
        }
        // Version 00 is exactly 55 characters; a later version may append fields after a '-',
        // which a reader of version 00 must ignore.
        if (version.equals("00") ? t.length() != 55 : t.length() > 55 && t.charAt(55) != '-') {
            return null;
        }
        String traceId = t.substring(3, 35);
        String spanId = t.substring(36, 52);
        String flags = t.substring(53, 55);
        if (!validId(traceId, 32) || !validId(spanId, 16) || !lowerHex(flags)) {
            return null;
        }
        return new TraceContext(traceId, spanId, (Integer.parseInt(flags, 16) & 1) == 1, tracestate);
    }

    /**
     * The trace context of a message's AMQP headers (long or short strings), or null when it has
     * none or an invalid one.
     *
     * @param headers the message's headers, or null
     * @return the context, or null
     */
    public static TraceContext fromHeaders(Map<String, Object> headers) {
        if (headers == null) {
            return null;
        }
        return parse(text(headers.get(TRACEPARENT)), text(headers.get(TRACESTATE)));
    }

    private static String text(Object v) {
        return v instanceof LongString || v instanceof String ? v.toString() : null;
    }

    /**
     * The {@code traceparent} header: version {@code 00}, the flags {@code 01} when sampled else
     * {@code 00} (the other flags are not passed on, as the Rust node does not).
     *
     * @return the header's value
     */
    public String traceparent() {
        return "00-" + traceId + "-" + spanId + (sampled ? "-01" : "-00");
    }

    /**
     * Writes {@code traceparent}, and {@code tracestate} when there is one, into AMQP headers.
     *
     * @param headers the headers to add to
     */
    public void addTo(Map<String, Object> headers) {
        headers.put(TRACEPARENT, traceparent());
        if (!traceState.isEmpty()) {
            headers.put(TRACESTATE, traceState);
        }
    }

    /**
     * The context of a span of the same trace.
     *
     * @param spanId the span's id
     * @return the context, with the same flags and trace state
     */
    TraceContext withSpan(String spanId) {
        return new TraceContext(traceId, spanId, sampled, traceState);
    }

    static boolean validId(String id, int length) {
        if (id == null || id.length() != length || !lowerHex(id)) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (id.charAt(i) != '0') {
                return true;
            }
        }
        return false;
    }

    private static boolean lowerHex(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code tracestate} is opaque to this node, but a value no vendor could have written (control
     * characters, too long) is dropped rather than carried into every report.
     */
    private static String cleanState(String state) {
        if (state == null) {
            return "";
        }
        String s = state.trim();
        if (s.length() > MAX_TRACESTATE) {
            return "";
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return "";
            }
        }
        return s;
    }
}
