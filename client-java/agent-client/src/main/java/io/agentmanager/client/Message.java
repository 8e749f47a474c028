package io.agentmanager.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentmanager.client.wire.WireCodec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/** One data message, as the agent sees it. Immutable. */
public final class Message {
    private final byte[] body;
    private final Map<String, String> headers;
    private final String messageId;
    private final long attempt;
    private final long unavailable;
    private final boolean redelivered;
    private final boolean brokerRedelivered;

    Message(byte[] body, Map<String, Object> rawHeaders, String messageId, long attempt,
            long unavailable, boolean redelivered) {
        this.body = body == null ? new byte[0] : body;
        Map<String, String> h = new TreeMap<>();
        if (rawHeaders != null) {
            rawHeaders.forEach((k, v) -> {
                String text = HeaderValues.text(v);
                if (text != null) {
                    h.put(k, text);
                }
            });
        }
        this.headers = Collections.unmodifiableMap(h);
        this.messageId = messageId;
        this.attempt = attempt;
        this.unavailable = unavailable;
        this.redelivered = redelivered || attempt > 1 || unavailable > 0;
        this.brokerRedelivered = redelivered;
    }

    /**
     * The raw body.
     *
     * @return a copy of the body
     */
    public byte[] body() {
        return body.clone();
    }

    byte[] bodyUnsafe() {
        return body;
    }

    /**
     * The body as UTF-8 text.
     *
     * @return the text
     */
    public String text() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /**
     * The body read from JSON into {@code type}.
     *
     * @param type a record class, {@code JsonNode.class}, …
     * @param <T> the type
     * @return the value
     * @throws IOException when the body is not such JSON
     */
    public <T> T json(Class<T> type) throws IOException {
        return WireCodec.mapper().readValue(body, type);
    }

    /**
     * The body as a JSON tree.
     *
     * @return the tree
     * @throws IOException when the body is not JSON
     */
    public JsonNode json() throws IOException {
        return WireCodec.mapper().readTree(body);
    }

    /**
     * A header as text (strings, numbers and booleans; other types are left out).
     *
     * @param name the header
     * @return the value, or null
     */
    public String header(String name) {
        return headers.get(name);
    }

    /**
     * Every text-readable header.
     *
     * @return the headers, sorted by name
     */
    public Map<String, String> headers() {
        return headers;
    }

    /**
     * The AMQP {@code message-id} property.
     *
     * @return the id, or null
     */
    public String messageId() {
        return messageId;
    }

    /**
     * Delivery attempt: 1 until the agent first failed on the message, then one more per
     * failure ({@code x-am-attempt}, kept across retries).
     *
     * @return the attempt
     */
    public long attempt() {
        return attempt;
    }

    /**
     * How many times the agent answered "temporarily unavailable" for this message before.
     *
     * @return the count
     */
    public long unavailable() {
        return unavailable;
    }

    /**
     * Every delivery so far, this one included.
     *
     * @return attempt plus unavailable answers
     */
    public long deliveries() {
        return attempt + unavailable;
    }

    /**
     * Whether the message was delivered before: a retry ({@link #attempt()} above 1), a message
     * the agent answered "temporarily unavailable" before ({@link #unavailable()} above 0), or
     * the broker's redelivery of this very copy (a node died holding it, or gave it back: see
     * {@link #brokerRedelivered()}). As the Rust node's {@code Message::redelivered}.
     *
     * @return true when delivered before
     */
    public boolean redelivered() {
        return redelivered;
    }

    /**
     * The broker's {@code redelivered} flag of this delivery: the broker delivered this very
     * copy before (a node died holding it, or gave it back). Unlike {@link #redelivered()} it
     * is false for a retry, which is a new copy that came back through a wait queue.
     *
     * @return the AMQP redelivered flag
     */
    public boolean brokerRedelivered() {
        return brokerRedelivered;
    }
}
