package io.agentmanager.client;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentmanager.client.wire.WireCodec;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends spans to an OTLP/HTTP receiver in the JSON encoding ({@code http/json}): one
 * {@code ExportTraceServiceRequest} per batch, ids as lowercase hex and 64-bit numbers as
 * strings, as the OTLP specification's JSON mapping says. Written against the JDK's HTTP client
 * so that the library adds no dependency (the OpenTelemetry Java SDK would bring its own HTTP
 * stack and protobuf). A failed export loses its batch and is logged at warn at most once a
 * minute: traces never disturb the node. Used by the tracer's one thread.
 */
final class OtlpJsonExporter {
    private static final Logger LOG = LoggerFactory.getLogger(OtlpJsonExporter.class);
    /** The instrumentation scope of every span. */
    static final String SCOPE = "agent-manager-client";
    /** {@code SPAN_KIND_INTERNAL}. */
    private static final int KIND_INTERNAL = 1;
    private static final long WARN_EVERY_NANOS = 60_000_000_000L;

    private final TraceSettings settings;
    private final HttpClient http;
    private long lastWarn = System.nanoTime() - WARN_EVERY_NANOS;
    private long failures;

    OtlpJsonExporter(TraceSettings settings) {
        this.settings = settings;
        // HTTP/1.1: every OTLP receiver speaks it, and an h2c upgrade offer on a POST confuses some.
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(settings.exportTimeout()).build();
    }

    /** Posts one batch; false (logged, rate-limited) when the receiver did not take it. */
    boolean export(List<Span> spans) {
        String failure;
        try {
            HttpRequest.Builder req = HttpRequest.newBuilder(settings.endpoint()).timeout(settings.exportTimeout())
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(encode(settings, spans)));
            // A header the JDK refuses to set (Host, Connection…) fails each export, loudly.
            settings.headers().forEach(req::header);
            HttpResponse<String> resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
            if (resp.statusCode() / 100 == 2) {
                return true;
            }
            String body = resp.body() == null ? "" : resp.body().strip();
            failure = "HTTP " + resp.statusCode() + (body.isEmpty() ? ""
                    : ": " + (body.length() > 200 ? body.substring(0, 200) + "…" : body));
        } catch (IOException | RuntimeException e) {
            failure = e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        failures += spans.size();
        warn("{} spans not exported to {} ({} lost so far): {}", spans.size(), settings.endpoint(), failures,
                failure);
        return false;
    }

    /**
     * Logs at warn at most once a minute, at debug otherwise: a collector that is down must not
     * flood the application's log.
     */
    synchronized void warn(String format, Object... args) {
        long now = System.nanoTime();
        if (now - lastWarn >= WARN_EVERY_NANOS) {
            lastWarn = now;
            LOG.warn(format, args);
        } else {
            LOG.debug(format, args);
        }
    }

    /** The request body of {@code spans}: one resource, one scope. */
    static byte[] encode(TraceSettings settings, List<Span> spans) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        ObjectNode rs = root.putArray("resourceSpans").addObject();
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("service.name", settings.serviceName());
        res.put("telemetry.sdk.language", "java");
        res.put("telemetry.sdk.name", SCOPE);
        res.putAll(settings.resourceAttributes());
        attributes(rs.putObject("resource"), res);
        ObjectNode ss = rs.putArray("scopeSpans").addObject();
        ss.putObject("scope").put("name", SCOPE);
        ArrayNode out = ss.putArray("spans");
        for (Span s : spans) {
            ObjectNode o = out.addObject();
            o.put("traceId", s.context.traceId());
            o.put("spanId", s.context.spanId());
            if (!s.context.traceState().isEmpty()) {
                o.put("traceState", s.context.traceState());
            }
            o.put("parentSpanId", s.parentSpanId == null ? "" : s.parentSpanId);
            o.put("name", s.name);
            o.put("kind", KIND_INTERNAL);
            o.put("startTimeUnixNano", Long.toUnsignedString(s.startNanos));
            o.put("endTimeUnixNano", Long.toUnsignedString(s.endNanos()));
            attributes(o, s.attributes());
            if (!s.links().isEmpty()) {
                ArrayNode links = o.putArray("links");
                for (TraceContext l : s.links()) {
                    ObjectNode lo = links.addObject().put("traceId", l.traceId()).put("spanId", l.spanId());
                    if (!l.traceState().isEmpty()) {
                        lo.put("traceState", l.traceState());
                    }
                }
            }
        }
        try {
            return WireCodec.mapper().writeValueAsBytes(root);
        } catch (IOException e) {
            throw new IllegalStateException("a JSON tree that cannot be written", e);
        }
    }

    /** {@code "attributes": [{"key", "value": {"stringValue"} | {"intValue": "<int64 as text>"}}]}. */
    private static void attributes(ObjectNode into, Map<String, Object> attrs) {
        ArrayNode a = into.putArray("attributes");
        attrs.forEach((k, v) -> {
            ObjectNode value = a.addObject().put("key", k).putObject("value");
            if (v instanceof Long n) {
                value.put("intValue", Long.toString(n));
            } else {
                value.put("stringValue", String.valueOf(v));
            }
        });
    }
}
