package io.agentmanager.client.wire;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Reads and writes protocol messages. This client speaks protocol version
 * {@value #NODE_PROTOCOL} (what its publication announces); it writes reports as version
 * {@value #PROTOCOL_VERSION}, the oldest whose readers understand them (docs/protocol.md §4.2),
 * and reads every version from {@value #MIN_PROTOCOL_VERSION} up, a newer one as far as it
 * knows it (fields it does not know are ignored at every depth). Thread-safe.
 */
public final class WireCodec {

    /** The version reports are written in ({@code "v"}): readers of version 2 refuse newer. */
    public static final int PROTOCOL_VERSION = 2;
    /** The protocol version this node speaks, announced as a publication's {@code protocol}. */
    public static final int NODE_PROTOCOL = 3;
    /** The oldest version this client reads. */
    public static final int MIN_PROTOCOL_VERSION = 1;

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.FAIL_ON_IGNORED_PROPERTIES)
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(MapperFeature.AUTO_DETECT_IS_GETTERS)
            .addModule(timeModule())
            .build();

    private WireCodec() {
    }

    /**
     * The shared mapper (unknown fields ignored, {@link Instant} as RFC 3339 UTC).
     *
     * @return the mapper
     */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    private static SimpleModule timeModule() {
        SimpleModule m = new SimpleModule("agent-manager-time");
        m.addSerializer(Instant.class, new JsonSerializer<Instant>() {
            @Override
            public void serialize(Instant value, JsonGenerator gen, SerializerProvider serializers)
                    throws IOException {
                gen.writeString(DateTimeFormatter.ISO_INSTANT.format(value));
            }
        });
        m.addDeserializer(Instant.class, new JsonDeserializer<Instant>() {
            @Override
            public Instant deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
                String text = p.getValueAsString();
                try {
                    return parseTime(text);
                } catch (DateTimeParseException e) {
                    throw JsonMappingException.from(p, "`" + text + "` is not an RFC 3339 time", e);
                }
            }
        });
        return m;
    }

    /**
     * Reads an RFC 3339 time ({@code Z} or an offset).
     *
     * @param text the text
     * @return the instant
     * @throws DateTimeParseException when it is not one
     */
    public static Instant parseTime(String text) {
        return OffsetDateTime.parse(text).toInstant();
    }

    /**
     * An instant as Rust's {@code DateTime::to_rfc3339} writes it in headers: UTC with a
     * {@code +00:00} offset and 0, 3, 6 or 9 fraction digits.
     *
     * @param at the instant
     * @return the text
     */
    public static String headerTime(Instant at) {
        String z = DateTimeFormatter.ISO_INSTANT.format(at);
        return z.substring(0, z.length() - 1) + "+00:00";
    }

    /**
     * Encodes a report as {@code {"v":2,"type":...}}.
     *
     * @param report the report
     * @return UTF-8 JSON
     */
    public static byte[] encode(ToManager report) {
        return encodeAs(report, PROTOCOL_VERSION);
    }

    /**
     * Encodes a command as version 1 (what the manager writes; for tests and tools).
     *
     * @param command the command
     * @return UTF-8 JSON
     */
    public static byte[] encodeCommand(ToNode command) {
        return encodeAs(command, 1);
    }

    private static byte[] encodeAs(Object message, int version) {
        ObjectNode out = MAPPER.createObjectNode();
        out.put("v", version);
        out.setAll((ObjectNode) MAPPER.valueToTree(message));
        try {
            return MAPPER.writeValueAsBytes(out);
        } catch (JsonProcessingException e) {
            // Only trees of our own records: cannot happen; an empty body is quarantined, not fatal.
            throw new IllegalStateException("cannot encode " + message.getClass().getSimpleName(), e);
        }
    }

    /**
     * Converts a plain value (String, Number, Boolean, List, Map, JsonNode) into JSON.
     *
     * @param value the value, or null
     * @return the node, or null for null
     */
    public static JsonNode toNode(Object value) {
        return value == null ? null : MAPPER.valueToTree(value);
    }

    /**
     * Decodes a report (what the manager reads; for tests and tools).
     *
     * @param bytes the body
     * @return the report
     * @throws WireException when it is not a readable report
     */
    public static ToManager decodeReport(byte[] bytes) throws WireException {
        ObjectNode obj = envelope(bytes);
        try {
            return MAPPER.treeToValue(obj, ToManager.class);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new WireException("invalid message: " + describe(e), e);
        }
    }

    /**
     * Reads a control message: a command, a launch this node does not understand (to be
     * answered {@code skipped}), or unreadable bytes (to be quarantined).
     *
     * @param bytes the body
     * @return what it is
     */
    public static DecodedCommand decodeCommand(byte[] bytes) {
        ObjectNode obj;
        try {
            obj = envelope(bytes);
        } catch (WireException e) {
            return new DecodedCommand.Unreadable(e.getMessage());
        }
        JsonNode type = obj.get("type");
        if (type == null || !type.isTextual()) {
            return new DecodedCommand.Unreadable("invalid message: missing field `type`");
        }
        String t = type.textValue();
        if (!List.of("launch", "stop", "interrupt").contains(t)) {
            return new DecodedCommand.Unreadable("invalid message: unknown variant `" + t
                    + "`, expected one of `launch`, `stop`, `interrupt`");
        }
        List<String> notUnderstood = "launch".equals(t) ? unknownWords(obj) : List.of();
        if (notUnderstood.isEmpty()) {
            try {
                return new DecodedCommand.Understood(MAPPER.treeToValue(obj, ToNode.class));
            } catch (JsonProcessingException | IllegalArgumentException e) {
                notUnderstood = List.of(describe(e));
            }
        }
        if (!"launch".equals(t)) {
            return new DecodedCommand.Unreadable("invalid message: " + notUnderstood.get(0));
        }
        JsonNode id = obj.get("activation_id");
        JsonNode ls = obj.get("launch_setting");
        JsonNode token = obj.get("fencing_token");
        if (id == null || !id.isTextual() || ls == null || !ls.isTextual() || token == null
                || !token.canConvertToLong() || !token.isIntegralNumber()) {
            return new DecodedCommand.Unreadable("invalid message: " + notUnderstood.get(0));
        }
        JsonNode agent = obj.get("agent");
        return new DecodedCommand.LaunchNotUnderstood(id.textValue(), ls.textValue(),
                token.longValue(), agent != null && agent.isTextual() ? agent.textValue() : null,
                "the node does not understand this launch: " + String.join("; ", notUnderstood));
    }

    /** The launch's enum fields whose word this node does not know. */
    private static List<String> unknownWords(ObjectNode launch) {
        List<String> out = new ArrayList<>();
        check(out, "kind", launch.get("kind"), LaunchKind.class);
        check(out, "overlap", launch.get("overlap"), OverlapPolicy.class);
        JsonNode sub = launch.get("subscription");
        if (sub != null && sub.isObject()) {
            check(out, "subscription.kind", sub.get("kind"), DataQueueKind.class);
        }
        JsonNode dl = launch.get("dead_letter");
        if (dl != null && dl.isObject()) {
            check(out, "dead_letter.policy", dl.get("policy"), DeadLetterPolicy.class);
        }
        return out;
    }

    private static <E extends Enum<E> & Words> void check(List<String> out, String path,
            JsonNode value, Class<E> type) {
        if (value != null && value.isTextual() && !Words.knows(type, value.textValue())) {
            out.add("`" + path + "` has the unknown value `" + value.textValue()
                    + "` (this node knows " + Words.known(type) + ")");
        }
    }

    private static String describe(Exception e) {
        if (e instanceof JsonMappingException jme) {
            String path = jme.getPath().stream()
                    .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
                    .collect(Collectors.joining("."));
            String why = jme.getOriginalMessage();
            for (Throwable t = e.getCause(); t != null && t != t.getCause(); t = t.getCause()) {
                if (t instanceof IllegalArgumentException || t instanceof NullPointerException) {
                    why = t.getMessage();
                    break;
                }
            }
            return path.isEmpty() ? why : "`" + path + "`: " + why;
        }
        return e.getMessage();
    }

    private static ObjectNode envelope(byte[] bytes) throws WireException {
        JsonNode tree;
        try {
            tree = MAPPER.readTree(bytes);
        } catch (IOException e) {
            throw new WireException("not a JSON object with a numeric `v`: " + e.getMessage(), e);
        }
        if (tree == null || !tree.isObject()) {
            throw new WireException("not a JSON object with a numeric `v`: not an object", null);
        }
        ObjectNode obj = (ObjectNode) tree;
        JsonNode v = obj.remove("v");
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < 0) {
            throw new WireException("not a JSON object with a numeric `v`: missing `v`", null);
        }
        if (v.longValue() < MIN_PROTOCOL_VERSION) {
            throw new WireException("protocol version " + v.longValue() + " is not supported "
                    + "(this side reads versions " + MIN_PROTOCOL_VERSION + " and newer)", null);
        }
        return obj;
    }
}
