package io.agentmanager.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Spans as an OTLP/HTTP JSON receiver sees them (a local {@code com.sun.net.httpserver}, parsed
 * with Jackson), the batching and what happens when the receiver is slow or failing. No broker.
 */
@Timeout(30)
class OtlpJsonExporterTest {
    private static final String PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    private static final String PRODUCER = "00-11111111111111111111111111111111-2222222222222222-01";

    private static Tracer tracer(TraceSettings settings) {
        return Tracer.start(settings, Executors.defaultThreadFactory());
    }

    @Test
    void theRequestFollowsTheOtlpJsonMapping() throws Exception {
        try (OtlpReceiver receiver = new OtlpReceiver()) {
            Tracer t = tracer(TraceSettings.to(receiver.traces(), "billing")
                    .withResourceAttribute("deployment.environment", "test").withHeader("x-token", "secret")
                    .withBatching(Duration.ofSeconds(60), 512, 2048));
            TraceContext parent = TraceContext.parse(PARENT, "congo=t61rcWkgMzE");
            Span activation = t.activation(parent, "act-1", "app.greet.1", "h1", "greet", 7);
            ActivationRun run = new ActivationRun(null, "act-1", "app.greet.1", "greet", 7, activation);
            Span message = t.message(run, "h1", 2, "m-1", TraceContext.parse(PRODUCER, null));
            Span anonymous = t.message(run, "h1", 1, null, null);
            anonymous.end();
            message.end();
            activation.end();
            Span root = t.start("activation", null);
            root.end();
            t.shutdown(Duration.ofSeconds(5));

            assertEquals(1, receiver.requests.size(), "one batch: the shutdown sent what waited");
            OtlpReceiver.Request req = receiver.requests.get(0);
            assertEquals("application/json", req.headers().get("Content-Type").get(0));
            assertEquals("secret", req.headers().get("X-Token").get(0));
            JsonNode rs = req.body().get("resourceSpans").get(0);
            Map<String, JsonNode> resource = OtlpReceiver.attributes(rs.get("resource"));
            assertEquals("billing", resource.get("service.name").get("stringValue").asText());
            assertEquals("test", resource.get("deployment.environment").get("stringValue").asText());
            assertEquals("java", resource.get("telemetry.sdk.language").get("stringValue").asText());
            JsonNode scope = rs.get("scopeSpans").get(0);
            assertEquals("agent-manager-client", scope.get("scope").get("name").asText());
            List<JsonNode> spans = receiver.spans();
            assertEquals(List.of("message", "message", "activation", "activation"),
                    spans.stream().map(s -> s.get("name").asText()).toList(), "in the order they ended");

            JsonNode a = spans.get(2);
            assertEquals("0af7651916cd43dd8448eb211c80319c", a.get("traceId").asText());
            assertEquals("b7ad6b7169203331", a.get("parentSpanId").asText());
            assertEquals(activation.context.spanId(), a.get("spanId").asText());
            assertTrue(a.get("spanId").asText().matches("[0-9a-f]{16}"));
            assertEquals("congo=t61rcWkgMzE", a.get("traceState").asText(), "tracestate passed through");
            assertEquals(1, a.get("kind").asInt(), "SPAN_KIND_INTERNAL");
            assertTrue(a.get("startTimeUnixNano").isTextual(), "64-bit numbers are JSON strings");
            long start = Long.parseLong(a.get("startTimeUnixNano").asText());
            long end = Long.parseLong(a.get("endTimeUnixNano").asText());
            assertTrue(start > 1_600_000_000_000_000_000L && start <= end, start + ".." + end);
            Map<String, JsonNode> attrs = OtlpReceiver.attributes(a);
            assertEquals(List.of("activation_id", "launch_setting", "host", "agent", "fencing_token"),
                    List.copyOf(attrs.keySet()));
            assertEquals("act-1", attrs.get("activation_id").get("stringValue").asText());
            assertEquals("app.greet.1", attrs.get("launch_setting").get("stringValue").asText());
            assertEquals("h1", attrs.get("host").get("stringValue").asText());
            assertEquals("greet", attrs.get("agent").get("stringValue").asText());
            assertEquals("7", attrs.get("fencing_token").get("intValue").asText(), "int64 as a string");
            assertFalse(a.has("links"));

            JsonNode m = spans.get(1);
            assertEquals(a.get("traceId"), m.get("traceId"));
            assertEquals(a.get("spanId"), m.get("parentSpanId"), "a message is a child of its run");
            Map<String, JsonNode> mattrs = OtlpReceiver.attributes(m);
            assertEquals(List.of("activation_id", "launch_setting", "host", "attempt", "message_id"),
                    List.copyOf(mattrs.keySet()));
            assertEquals("2", mattrs.get("attempt").get("intValue").asText());
            assertEquals("m-1", mattrs.get("message_id").get("stringValue").asText());
            assertEquals(1, m.get("links").size());
            assertEquals("11111111111111111111111111111111", m.get("links").get(0).get("traceId").asText());
            assertEquals("2222222222222222", m.get("links").get(0).get("spanId").asText());
            assertFalse(OtlpReceiver.attributes(spans.get(0)).containsKey("message_id"), "no id, no attribute");
            assertFalse(spans.get(0).has("links"));

            JsonNode r = spans.get(3);
            assertEquals("", r.get("parentSpanId").asText(), "the root of a new trace");
            assertNotEquals(a.get("traceId"), r.get("traceId"));
            assertTrue(r.get("traceId").asText().matches("[0-9a-f]{32}"));
        }
    }

    @Test
    void aSpanUnderAnUnsampledParentIsNotExportedButItsContextTravels() throws Exception {
        try (OtlpReceiver receiver = new OtlpReceiver()) {
            Tracer t = tracer(TraceSettings.to(receiver.traces(), "svc").withBatching(Duration.ZERO, 512, 2048));
            TraceContext parent = TraceContext.parse(PARENT.replace("-01", "-00"), null);
            Span s = t.activation(parent, "a", "ls", "h", "ag", 1);
            assertFalse(s.context().sampled());
            assertTrue(s.context().traceparent().endsWith("-00"));
            s.end();
            Span sampled = t.start("activation", null);
            sampled.end();
            receiver.await("the sampled span", Duration.ofSeconds(5),
                    x -> x.get("spanId").asText().equals(sampled.context.spanId()));
            t.shutdown(Duration.ofSeconds(5));
            assertEquals(1, receiver.spans().size());
        }
    }

    @Test
    void aFullBatchIsSentWithoutWaitingForTheDelay() throws Exception {
        try (OtlpReceiver receiver = new OtlpReceiver()) {
            Tracer t = tracer(TraceSettings.to(receiver.traces(), "svc").withBatching(Duration.ofSeconds(60), 3, 100));
            for (int i = 0; i < 3; i++) {
                t.start("activation", null).end();
            }
            receiver.await("a batch of three", Duration.ofSeconds(5), x -> receiver.spans().size() == 3);
            assertEquals(1, receiver.requests.size());
            t.shutdown(Duration.ofSeconds(1));
        }
    }

    @Test
    void aFullQueueDropsAndCountsAndASlowOrFailingReceiverNeverDisturbsTheCaller() throws Exception {
        try (OtlpReceiver receiver = new OtlpReceiver()) {
            receiver.arrived = new CountDownLatch(1);
            receiver.hold = new CountDownLatch(1);
            Tracer t = tracer(TraceSettings.to(receiver.traces(), "svc").withBatching(Duration.ZERO, 512, 4));
            t.start("activation", null).end();
            assertTrue(receiver.arrived.await(5, TimeUnit.SECONDS));
            // The exporter's thread waits for the receiver: four spans wait, two are dropped.
            for (int i = 0; i < 6; i++) {
                t.start("activation", null).end();
            }
            assertEquals(2, t.dropped());
            receiver.status.set(500);
            receiver.hold.countDown();
            receiver.await("the four", Duration.ofSeconds(5), x -> receiver.spans().size() == 5);
            t.shutdown(Duration.ofSeconds(1));
        }
        Tracer unreachable = tracer(TraceSettings.to(URI.create("http://127.0.0.1:9/v1/traces"), "svc")
                .withExportTimeout(Duration.ofSeconds(1)));
        OtlpJsonExporter direct = new OtlpJsonExporter(TraceSettings.to(URI.create("http://127.0.0.1:9/v1/traces"),
                "svc").withExportTimeout(Duration.ofSeconds(1)));
        Span s = unreachable.start("activation", null);
        s.end();
        assertFalse(direct.export(List.of(s)), "nothing listens: a failure, not an exception");
        unreachable.shutdown(Duration.ofSeconds(2));
        unreachable.start("activation", null).end();
    }

    @Test
    void offMeansNoSpanObjectsAndNoContext() {
        Tracer t = Tracer.start(TraceSettings.off(), Executors.defaultThreadFactory());
        assertSame(Tracer.off(), t);
        assertFalse(t.isOn());
        Span s = t.activation(TraceContext.parse(PARENT, null), "a", "ls", "h", "ag", 1);
        assertSame(Span.NONE, s);
        assertNull(s.context());
        s.end();
        t.shutdown(Duration.ofSeconds(1));
        assertEquals(0, t.dropped());
    }
}
