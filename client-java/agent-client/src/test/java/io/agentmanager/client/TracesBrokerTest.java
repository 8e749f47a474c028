package io.agentmanager.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentmanager.client.wire.ActivationEvent;
import io.agentmanager.client.wire.ActivationReport;
import io.agentmanager.client.wire.FailureReport;
import io.agentmanager.client.wire.Heartbeat;
import io.agentmanager.client.wire.WireCodec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One activation followed from the manager's {@code traceparent} into the node's run, as the
 * Rust node does it: the launch's context is the parent of the {@code activation} span, every
 * report about the run carries the context of the span that sent it, and each data message is
 * a {@code message} span under the run, linked to its producer. Real broker, the test acting as
 * the manager, a local OTLP/HTTP JSON receiver.
 */
@Timeout(60)
class TracesBrokerTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PUBLISH_SPAN = "00f067aa0ba902b7";
    private static final String PRODUCER = "00-5bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01";

    private static NodeBuilder traced(ManagerHarness m, String host, OtlpReceiver receiver) {
        return m.node(host).traces(TraceSettings.to(receiver.traces(), "app")
                .withBatching(Duration.ofMillis(50), 512, 2048));
    }

    private static Map<String, Object> launchHeaders() {
        return Map.of("traceparent", "00-" + TRACE + "-" + PUBLISH_SPAN + "-01", "tracestate", "am=1");
    }

    /** The trace context of each report about {@code activationId}, in order. */
    private static List<TraceContext> contexts(ManagerHarness m, String activationId) {
        return m.received.stream().filter(r -> r.report() instanceof ActivationReport a
                && a.activationId().equals(activationId)).map(r -> TraceContext.fromHeaders(r.headers())).toList();
    }

    @Test
    void theRunIsAChildOfTheLaunchAndItsReportsCarryTheRunsContext() throws Exception {
        try (ManagerHarness m = new ManagerHarness(); OtlpReceiver receiver = new OtlpReceiver()) {
            m.start(traced(m, "h1", receiver).standalone(AgentSpec.of("step"), JsonNode.class,
                    ctx -> ctx.progress(1L, 1L, "done")));
            ObjectNode launch = m.launch("app.step.1", "step");
            launch.put("fencing_token", 9);
            String id = launch.get("activation_id").asText();
            m.send("h1", WireCodec.mapper().writeValueAsBytes(launch), launchHeaders());
            m.event(id, ActivationEvent.Finished.class, WAIT);

            JsonNode span = receiver.await("activation " + id, WAIT, s -> s.get("name").asText().equals("activation")
                    && OtlpReceiver.attributes(s).get("activation_id").get("stringValue").asText().equals(id));
            assertEquals(TRACE, span.get("traceId").asText());
            assertEquals(PUBLISH_SPAN, span.get("parentSpanId").asText(), "a child of the launch's publish");
            assertEquals("am=1", span.get("traceState").asText());
            Map<String, JsonNode> attrs = OtlpReceiver.attributes(span);
            assertEquals("app.step.1", attrs.get("launch_setting").get("stringValue").asText());
            assertEquals("h1", attrs.get("host").get("stringValue").asText());
            assertEquals("step", attrs.get("agent").get("stringValue").asText());
            assertEquals("9", attrs.get("fencing_token").get("intValue").asText());

            List<String> kinds = m.events(id).stream().map(e -> e.getClass().getSimpleName()).toList();
            assertEquals(List.of("Accepted", "Started", "Progress", "Finished"), kinds);
            String runContext = "00-" + TRACE + "-" + span.get("spanId").asText() + "-01";
            for (TraceContext cx : contexts(m, id)) {
                assertNotNull(cx, "every report about the run carries a traceparent");
                assertEquals(runContext, cx.traceparent());
                assertEquals("am=1", cx.traceState());
            }
            assertTrue(m.received.stream().filter(r -> r.report() instanceof Heartbeat)
                    .allMatch(r -> r.headers() == null || !r.headers().containsKey("traceparent")),
                    "heartbeats belong to no run");

            // Without a traceparent (or with one that is not valid): a trace of its own.
            for (Map<String, Object> headers : List.<Map<String, Object>>of(Map.of(),
                    Map.of("traceparent", "00-" + TRACE + "-" + PUBLISH_SPAN + "-1"))) {
                ObjectNode root = m.launch("app.step.1", "step");
                String rootId = root.get("activation_id").asText();
                m.send("h1", WireCodec.mapper().writeValueAsBytes(root), headers);
                m.event(rootId, ActivationEvent.Finished.class, WAIT);
                JsonNode rootSpan = receiver.await("activation " + rootId, WAIT,
                        s -> OtlpReceiver.attributes(s).get("activation_id").get("stringValue").asText().equals(rootId));
                assertEquals("", rootSpan.get("parentSpanId").asText());
                assertNotEquals(TRACE, rootSpan.get("traceId").asText());
                TraceContext started = contexts(m, rootId).get(1);
                assertEquals(rootSpan.get("traceId").asText(), started.traceId());
                assertEquals(rootSpan.get("spanId").asText(), started.spanId());
            }

            // A launch refused on this node still gets its span, ended at once, and its answer
            // carries it.
            ObjectNode unknown = m.launch("app.nope.1", "nope");
            String unknownId = unknown.get("activation_id").asText();
            m.send("h1", WireCodec.mapper().writeValueAsBytes(unknown), launchHeaders());
            m.event(unknownId, ActivationEvent.Skipped.class, WAIT);
            JsonNode skipped = receiver.await("activation " + unknownId, WAIT,
                    s -> OtlpReceiver.attributes(s).get("activation_id").get("stringValue").asText().equals(unknownId));
            assertEquals(skipped.get("spanId").asText(), contexts(m, unknownId).get(0).spanId());
        }
    }

    @Test
    void withTracesOffReportsCarryNoTraceHeaders() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").standalone(AgentSpec.of("step"), JsonNode.class, ctx -> { }));
            ObjectNode launch = m.launch("app.step.1", "step");
            String id = launch.get("activation_id").asText();
            m.send("h1", WireCodec.mapper().writeValueAsBytes(launch), launchHeaders());
            m.event(id, ActivationEvent.Finished.class, WAIT);
            assertEquals(3, contexts(m, id).size());
            assertTrue(contexts(m, id).stream().allMatch(cx -> cx == null), "as the Rust node without an exporter");
        }
    }

    @Test
    void eachMessageIsASpanUnderTheRunLinkedToItsProducer() throws Exception {
        try (ManagerHarness m = new ManagerHarness(); OtlpReceiver receiver = new OtlpReceiver()) {
            m.start(traced(m, "h1", receiver).messages(AgentSpec.of("once"), JsonNode.class, (ctx, msg) -> {
                if (msg.attempt() == 1) {
                    throw new AgentException("Flaky", "first delivery fails");
                }
            }));
            String address = m.address("events");
            ObjectNode launch = m.stream("app.once.1", "once", address);
            m.subscribe(launch);
            String id = launch.get("activation_id").asText();
            m.send("h1", WireCodec.mapper().writeValueAsBytes(launch), launchHeaders());
            m.event(id, ActivationEvent.Started.class, WAIT);
            TraceContext run = contexts(m, id).get(1);
            assertEquals(TRACE, run.traceId());
            m.publish(address, "r1", Map.of("traceparent", PRODUCER));

            JsonNode second = receiver.await("the second attempt", WAIT, s -> s.get("name").asText().equals("message")
                    && OtlpReceiver.attributes(s).get("attempt").get("intValue").asText().equals("2"));
            JsonNode first = receiver.await("the first attempt", WAIT, s -> s.get("name").asText().equals("message")
                    && OtlpReceiver.attributes(s).get("attempt").get("intValue").asText().equals("1"));
            for (JsonNode s : List.of(first, second)) {
                assertEquals(TRACE, s.get("traceId").asText());
                assertEquals(run.spanId(), s.get("parentSpanId").asText(), "a child of the run");
                Map<String, JsonNode> attrs = OtlpReceiver.attributes(s);
                assertEquals(id, attrs.get("activation_id").get("stringValue").asText());
                assertEquals("app.once.1", attrs.get("launch_setting").get("stringValue").asText());
                assertEquals("h1", attrs.get("host").get("stringValue").asText());
                assertEquals("m-r1", attrs.get("message_id").get("stringValue").asText());
                JsonNode link = s.get("links").get(0);
                assertEquals("5bf92f3577b34da6a3ce929d0e0e4736", link.get("traceId").asText(),
                        "linked to the producer, the retried copy too");
                assertEquals("1111111111111111", link.get("spanId").asText());
            }
            // The failure is reported under the message's span, as the Rust node reports it.
            ManagerHarness.Received failure = m.received.stream()
                    .filter(r -> r.report() instanceof FailureReport).findFirst().orElseThrow();
            TraceContext fcx = TraceContext.fromHeaders(failure.headers());
            assertEquals(first.get("spanId").asText(), fcx.spanId());
            assertEquals(TRACE, fcx.traceId());

            m.send("h1", WireCodec.mapper().createObjectNode().put("v", 1).put("type", "stop")
                    .put("launch_setting", "app.once.1").put("reason", "test done"));
            m.event(id, ActivationEvent.Finished.class, WAIT);
            JsonNode activation = receiver.await("the run", WAIT, s -> s.get("name").asText().equals("activation"));
            assertEquals(run.spanId(), activation.get("spanId").asText());
            assertFalse(activation.has("links"));
            TraceContext finished = contexts(m, id).get(contexts(m, id).size() - 1);
            assertEquals(run, finished, "the finished report is the run's again");
            assertNull(receiver.spans().stream().filter(s -> s.get("name").asText().equals("message"))
                    .filter(s -> !s.get("traceId").asText().equals(TRACE)).findAny().orElse(null));
        }
    }
}
