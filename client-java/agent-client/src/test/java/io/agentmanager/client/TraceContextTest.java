package io.agentmanager.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.impl.LongStringHelper;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The W3C {@code traceparent}/{@code tracestate} (https://www.w3.org/TR/trace-context/), and the
 * OpenTelemetry variables the trace settings are read from. No broker.
 */
class TraceContextTest {
    private static final String TRACE = "0af7651916cd43dd8448eb211c80319c";
    private static final String SPAN = "b7ad6b7169203331";
    private static final String PARENT = "00-" + TRACE + "-" + SPAN + "-01";

    @Test
    void readsAndWritesTheSpecificationsExample() {
        TraceContext cx = TraceContext.parse(PARENT, "congo=t61rcWkgMzE");
        assertEquals(TRACE, cx.traceId());
        assertEquals(SPAN, cx.spanId());
        assertTrue(cx.sampled());
        assertEquals("congo=t61rcWkgMzE", cx.traceState());
        assertEquals(PARENT, cx.traceparent());
        TraceContext unsampled = TraceContext.parse("00-" + TRACE + "-" + SPAN + "-00", null);
        assertFalse(unsampled.sampled());
        assertEquals("", unsampled.traceState());
        assertEquals("00-" + TRACE + "-" + SPAN + "-00", unsampled.traceparent());
        // Surrounding blanks are tolerated, as by the Rust node's propagator.
        assertEquals(cx, TraceContext.parse("  " + PARENT + " ", " congo=t61rcWkgMzE "));
    }

    @Test
    void onlyTheSampledFlagIsKeptAndPassedOn() {
        // Unknown flags (and the level-2 "random" flag) are read, and not passed on.
        TraceContext cx = TraceContext.parse("00-" + TRACE + "-" + SPAN + "-03", null);
        assertTrue(cx.sampled());
        assertEquals(PARENT, cx.traceparent());
        assertFalse(TraceContext.parse("00-" + TRACE + "-" + SPAN + "-fe", null).sampled());
    }

    @Test
    void aLaterVersionIsReadByItsFirstFourFields() {
        assertEquals(TRACE, TraceContext.parse("01-" + TRACE + "-" + SPAN + "-01", null).traceId());
        assertEquals(SPAN, TraceContext.parse("cc-" + TRACE + "-" + SPAN + "-01-what-the-future-holds", null)
                .spanId());
        assertNull(TraceContext.parse("cc-" + TRACE + "-" + SPAN + "-01what", null));
    }

    @Test
    void invalidHeadersAreIgnored() {
        for (String bad : List.of("", "garbage", "00-" + TRACE + "-" + SPAN, // too short
                "00-" + TRACE + "-" + SPAN + "-01-extra", // version 00 has exactly four fields
                "ff-" + TRACE + "-" + SPAN + "-01", // version ff is invalid
                "0g-" + TRACE + "-" + SPAN + "-01",
                "00-" + TRACE.toUpperCase() + "-" + SPAN + "-01", // hex is lowercase
                "00-" + "0".repeat(32) + "-" + SPAN + "-01", // all-zero trace id
                "00-" + TRACE + "-" + "0".repeat(16) + "-01", // all-zero span id
                "00-" + TRACE + "-" + SPAN + "-0x",
                "00_" + TRACE + "-" + SPAN + "-01",
                "00-" + TRACE.substring(1) + "-a" + SPAN + "-01")) {
            assertNull(TraceContext.parse(bad, "a=1"), bad);
        }
        assertNull(TraceContext.parse(null, "a=1"));
        assertThrows(IllegalArgumentException.class, () -> new TraceContext("0".repeat(32), SPAN, true, ""));
    }

    @Test
    void aTracestateNoVendorCouldWriteIsDropped() {
        assertEquals("", TraceContext.parse(PARENT, "a=\u00011").traceState());
        assertEquals("", TraceContext.parse(PARENT, "a=" + "x".repeat(600)).traceState());
        assertEquals("a=1,b=2", TraceContext.parse(PARENT, "a=1,b=2").traceState());
    }

    @Test
    void amqpHeadersInAndOut() {
        Map<String, Object> in = new HashMap<>();
        in.put("traceparent", LongStringHelper.asLongString(PARENT));
        in.put("tracestate", LongStringHelper.asLongString("a=1"));
        in.put("x-am-attempt", 2);
        TraceContext cx = TraceContext.fromHeaders(in);
        assertEquals(TraceContext.parse(PARENT, "a=1"), cx);
        Map<String, Object> out = new HashMap<>();
        cx.addTo(out);
        assertEquals(Map.of("traceparent", PARENT, "tracestate", "a=1"), out);
        Map<String, Object> noState = new HashMap<>();
        TraceContext.parse(PARENT, null).addTo(noState);
        assertEquals(Map.of("traceparent", PARENT), noState);
        assertNull(TraceContext.fromHeaders(null));
        assertNull(TraceContext.fromHeaders(Map.of("traceparent", 42)));
        assertNull(TraceContext.fromHeaders(Map.of("tracestate", "a=1")));
    }

    @Test
    void settingsAreOffUnlessAnEndpointIsSet() {
        assertFalse(settings(Map.of()).enabled());
        assertFalse(settings(Map.of("OTEL_SERVICE_NAME", "x")).enabled());
        assertFalse(settings(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_SDK_DISABLED", "TRUE"))
                .enabled());
        assertFalse(settings(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "  ")).enabled());
        assertFalse(settings(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")).enabled(),
                "not a URL: off, never a failure");
        assertFalse(TraceSettings.off().enabled());
    }

    @Test
    void settingsFromTheStandardVariables() {
        TraceSettings base = settings(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"));
        assertEquals(URI.create("http://c:4318/v1/traces"), base.endpoint());
        assertEquals("app-default", base.serviceName());
        assertEquals(Duration.ofSeconds(5), base.scheduleDelay());
        assertEquals(2048, base.maxQueueSize());
        assertEquals(512, base.maxExportBatchSize());
        assertEquals(Duration.ofSeconds(10), base.exportTimeout());
        assertEquals(URI.create("http://c:4318/v1/traces"),
                settings(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/")).endpoint());

        Map<String, String> env = new HashMap<>();
        env.put("OTEL_EXPORTER_OTLP_ENDPOINT", "http://ignored:4318");
        env.put("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://c:443/custom/path");
        env.put("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs,deployment.environment=prod,team=a%2Cb");
        env.put("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20t,x-a=1");
        env.put("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-a=2");
        env.put("OTEL_EXPORTER_OTLP_TIMEOUT", "2500");
        env.put("OTEL_BSP_SCHEDULE_DELAY", "100");
        env.put("OTEL_BSP_MAX_QUEUE_SIZE", "10");
        env.put("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "20");
        TraceSettings s = settings(env);
        assertEquals(URI.create("https://c:443/custom/path"), s.endpoint(), "the traces URL is taken as is");
        assertEquals("from-attrs", s.serviceName());
        assertEquals(Map.of("deployment.environment", "prod", "team", "a,b"), s.resourceAttributes());
        assertEquals(Map.of("authorization", "Bearer t", "x-a", "2"), s.headers());
        assertEquals(Duration.ofMillis(2500), s.exportTimeout());
        assertEquals(Duration.ofMillis(100), s.scheduleDelay());
        assertEquals(10, s.maxQueueSize());
        assertEquals(10, s.maxExportBatchSize(), "a batch is never larger than the queue");

        env.put("OTEL_SERVICE_NAME", "named");
        env.put("OTEL_BSP_SCHEDULE_DELAY", "soon");
        env.put("OTEL_RESOURCE_ATTRIBUTES", "a=1,broken");
        TraceSettings t = settings(env);
        assertEquals("named", t.serviceName(), "OTEL_SERVICE_NAME wins");
        assertEquals(Duration.ofSeconds(5), t.scheduleDelay(), "an unreadable value takes the default");
        assertEquals(Map.of(), t.resourceAttributes(), "an unreadable list is discarded whole");
    }

    @Test
    void theBuilderReadsTracesFromTheSameVariablesAsItsOwn() {
        Map<String, String> env = Map.of("AM_APP", "billing", "AM_HOST", "h1",
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        TraceSettings s = NodeBuilder.fromVariables(env::get).traceSettings();
        assertTrue(s.enabled());
        assertEquals("billing", s.serviceName(), "the application names the service by default");
        assertFalse(NodeBuilder.fromVariables(Map.of("AM_APP", "billing", "AM_HOST", "h1")::get).traceSettings()
                .enabled());
        assertFalse(Node.builder().traceSettings().enabled(), "off unless asked for");
    }

    private static TraceSettings settings(Map<String, String> env) {
        return TraceSettings.fromVariables(env::get, "app-default");
    }
}
