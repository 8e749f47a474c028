package io.agentmanager.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.rabbitmq.client.GetResponse;
import io.agentmanager.client.Node;
import io.agentmanager.client.wire.ActivationEvent;
import io.agentmanager.client.wire.ActivationResult;
import io.agentmanager.client.wire.FailureReport;
import io.agentmanager.client.wire.Heartbeat;
import io.agentmanager.client.wire.HumanDuration;
import io.agentmanager.client.wire.InputKind;
import io.agentmanager.client.wire.ParamSpec;
import io.agentmanager.client.wire.Publication;
import io.agentmanager.client.wire.PublishedAgent;
import io.agentmanager.client.wire.RetryPolicy;
import io.agentmanager.client.wire.WireCodec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conformance suite's scripted agents (docs/conformance.md) run in-process in the demo node,
 * configured from the suite's environment, against the broker: what they record, what the node
 * reports, and a graceful stop that ends a sleeping run at once.
 */
class ScriptAgentsBrokerTest {
    private static final Duration WAIT = Duration.ofSeconds(15);

    @TempDir
    Path tmp;

    /** The environment the conformance suite gives a node. */
    private Map<String, String> env(TestManager m, String host, Path record) {
        Map<String, String> env = new HashMap<>();
        env.put("AM_AMQP_URL", TestManager.AMQP_URL + "," + TestManager.AMQP_URL);
        env.put("AM_APP", TestManager.APP);
        env.put("AM_HOST", host);
        env.put("AM_PREFIX", m.prefix());
        env.put("AM_QUEUE_EXPIRY", "60s");
        env.put("AM_HEARTBEAT", "200ms");
        env.put("AM_CAPACITY", "3");
        if (record != null) {
            env.put("AM_RECORD", record.toString());
        }
        m.host(host);
        return env;
    }

    private record Started(Node node, DemoNode.Setup setup) {
        /** The graceful stop of the shutdown hook; true when it ended in time. */
        boolean stop() {
            return DemoNode.stop(node, setup.scripts(), null, Duration.ofSeconds(20));
        }
    }

    private static Started start(Map<String, String> env) throws InterruptedException {
        DemoNode.Setup setup = DemoNode.configure(env::get);
        Node node = setup.builder().start();
        if (!node.awaitReady(WAIT)) {
            DemoNode.stop(node, setup.scripts(), null, Duration.ofSeconds(5));
            throw new AssertionError("the demo node did not become ready");
        }
        return new Started(node, setup);
    }

    private static List<JsonNode> records(Path file) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        if (!Files.exists(file)) {
            return out;
        }
        for (String line : Files.readAllLines(file)) {
            if (!line.isBlank()) {
                out.add(WireCodec.mapper().readTree(line));
            }
        }
        return out;
    }

    private static List<JsonNode> waitRecords(Path file, String what, Predicate<List<JsonNode>> done)
            throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            List<JsonNode> r = records(file);
            if (done.test(r)) {
                return r;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": not recorded within " + WAIT + "; records: " + r);
            }
            Thread.sleep(20);
        }
    }

    private static JsonNode find(List<JsonNode> records, String event, String activation) {
        return records.stream().filter(r -> event.equals(r.path("event").asText())
                && activation.equals(r.path("activation").asText())).findFirst().orElse(null);
    }

    private static ObjectNode params(String json) throws IOException {
        return (ObjectNode) WireCodec.mapper().readTree(json);
    }

    @Test
    void theDemoNodeTakesTheSuitesEnvironmentAndPublishesTheScriptedAgents() throws Exception {
        try (TestManager m = new TestManager()) {
            Path record = tmp.resolve("record.jsonl");
            Started n = start(env(m, "h1", record));
            try {
                assertEquals("am-node app@h1 (" + m.prefix() + ")", n.node().connectionName());
                Publication p = m.waitFor("publication", WAIT, Publication.class, x -> x.host().equals("h1"));
                assertEquals(3, p.capacity(), "AM_CAPACITY");
                assertEquals(3, p.protocol());
                assertEquals("app", p.application());
                Map<String, PublishedAgent> agents = new HashMap<>();
                p.agents().forEach(a -> agents.put(a.id(), a));
                assertTrue(agents.keySet().containsAll(List.of("echo", "flaky", "poison", "sleep", "fail")));
                PublishedAgent script = agents.get("script");
                assertNotNull(script, "script is offered under AM_RECORD");
                assertEquals(InputKind.STANDALONE, script.input());
                assertEquals("Script", script.title());
                assertEquals(List.of("sleep:duration", "fail:string", "progress:boolean"),
                        script.parameters().stream().map(s -> s.name() + ":" + s.type()).toList());
                ParamSpec sleep = script.parameters().get(0);
                assertEquals("0s", sleep.defaultValue().asText());
                assertTrue(script.parameters().stream().noneMatch(ParamSpec::required));
                PublishedAgent messages = agents.get("script-messages");
                assertNotNull(messages, "script-messages is offered under AM_RECORD");
                assertEquals(InputKind.MESSAGES, messages.input());
                assertEquals("Script messages", messages.title());
                assertEquals(List.of(), messages.parameters());
                assertTrue(Files.exists(record), "the record file is created at start");

                // AM_HEARTBEAT=200ms: several heartbeats a second.
                long before = m.reports.stream().filter(r -> r instanceof Heartbeat).count();
                Thread.sleep(1_200);
                long after = m.reports.stream().filter(r -> r instanceof Heartbeat).count();
                assertTrue(after - before >= 4, "heartbeats every 200 ms: " + (after - before) + " in 1.2 s");
            } finally {
                assertTrue(n.stop(), "the node stops");
            }

            // Without AM_RECORD: no scripted agents; a wrong variable is named.
            Map<String, String> plain = env(m, "h2", null);
            DemoNode.Setup none = DemoNode.configure(plain::get);
            assertNull(none.scripts());
            assertFalse(none.builder().traceSettings().enabled(), "no OTEL_* variable: no traces");
            Map<String, String> traced = new HashMap<>(plain);
            traced.put("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
            assertEquals("demo-node", DemoNode.configure(traced::get).builder().traceSettings().serviceName(),
                    "named as the Rust demo node");
            traced.put("OTEL_SERVICE_NAME", "java-demo");
            assertEquals("java-demo", DemoNode.configure(traced::get).builder().traceSettings().serviceName());
            Map<String, String> bad = new HashMap<>(plain);
            bad.put("AM_HEARTBEAT", "soon");
            assertTrue(assertThrows(IllegalArgumentException.class, () -> DemoNode.configure(bad::get))
                    .getMessage().contains("AM_HEARTBEAT"));
            bad.put("AM_HEARTBEAT", "500ms");
            bad.put("AM_CAPACITY", "0");
            assertTrue(assertThrows(IllegalArgumentException.class, () -> DemoNode.configure(bad::get))
                    .getMessage().contains("AM_CAPACITY"));
            bad.put("AM_CAPACITY", "2");
            bad.put("AM_RECORD", tmp.toString());
            assertTrue(assertThrows(IllegalArgumentException.class, () -> DemoNode.configure(bad::get))
                    .getMessage().contains("AM_RECORD"), "a directory is no record file");
            bad.remove("AM_RECORD");
            bad.remove("AM_APP");
            bad.put("AM_QUEUE_EXPIRY", "");
            DemoNode.Setup defaults = DemoNode.configure(bad::get);
            assertNull(defaults.scripts());
        }
    }

    @Test
    void scriptRunsRecordTheirStartAndEndAndAGracefulStopEndsThemAtOnce() throws Exception {
        try (TestManager m = new TestManager()) {
            Path record = tmp.resolve("script.jsonl");
            Started n = start(env(m, "h1", record));
            boolean stopped = false;
            try {
                ObjectNode ok = m.launch("app.script.1", "script", params("{\"sleep\":\"200ms\",\"progress\":true}"));
                ObjectNode failing = m.launch("app.script.2", "script", params("{\"fail\":\"LedgerClosed\"}"));
                ObjectNode invalid = m.launch("app.script.3", "script", params("{\"sleep\":\"soon\"}"));
                for (ObjectNode l : List.of(ok, failing, invalid)) {
                    m.send("h1", l);
                }
                String okId = ok.get("activation_id").asText();
                String failId = failing.get("activation_id").asText();
                String invalidId = invalid.get("activation_id").asText();

                ActivationEvent.Finished done = m.event(okId, ActivationEvent.Finished.class, WAIT);
                assertEquals(ActivationResult.SUCCEEDED, done.result());
                assertEquals(List.of("Accepted", "Started", "Progress", "Finished"),
                        m.events(okId).stream().map(e -> e.getClass().getSimpleName()).toList());
                assertTrue(m.events(okId).contains(new ActivationEvent.Progress(1L, 1L, "slept")), m.events(okId).toString());

                ActivationEvent.Finished failed = m.event(failId, ActivationEvent.Finished.class, WAIT);
                assertEquals(ActivationResult.FAILED, failed.result());
                assertTrue(failed.error().contains("LedgerClosed"), failed.error());
                FailureReport f = m.waitFor("the failure", WAIT, FailureReport.class,
                        r -> r.activationId().equals(failId));
                assertEquals(List.of("LedgerClosed", "scripted failure", "script"),
                        List.of(f.errorType(), f.message(), f.agent()));
                assertEquals(1, f.attempt());
                assertFalse(f.temporary());

                ActivationEvent.Finished refused = m.event(invalidId, ActivationEvent.Finished.class, WAIT);
                assertEquals(ActivationResult.FAILED, refused.result());
                assertTrue(refused.error().startsWith("InvalidParameters"), refused.error());

                List<JsonNode> r = waitRecords(record, "two ends",
                        l -> find(l, "end", okId) != null && find(l, "end", failId) != null);
                JsonNode start = find(r, "start", okId);
                assertNotNull(start, r.toString());
                assertEquals("script", start.get("agent").asText());
                assertEquals("app.script.1", start.get("launch_setting").asText());
                assertEquals(WireCodec.mapper().readTree("{\"sleep\":\"200ms\",\"progress\":true}"), start.get("params"));
                assertEquals(Duration.ofMillis(200), HumanDuration.fromJson(start.get("params").get("sleep")).value());
                assertEquals("succeeded", find(r, "end", okId).get("outcome").asText());
                assertEquals(WireCodec.mapper().readTree("{\"fail\":\"LedgerClosed\",\"sleep\":\"0s\"}"),
                        find(r, "start", failId).get("params"), "the schema's default applied");
                assertEquals("failed", find(r, "end", failId).get("outcome").asText());
                assertEquals(List.of("agent", "event", "activation", "outcome"),
                        iterable(find(r, "end", failId).fieldNames()));
                assertNull(find(r, "start", invalidId), "parameters that do not fit: the agent never starts");

                // Interrupt and the maximum run time end a sleep at once.
                ObjectNode interrupted = m.launch("app.script.4", "script", params("{\"sleep\":\"1m\"}"));
                ObjectNode limited = m.launch("app.script.5", "script", params("{\"sleep\":\"1m\"}"));
                limited.put("max_run_time", "300ms");
                m.send("h1", interrupted);
                m.send("h1", limited);
                String intId = interrupted.get("activation_id").asText();
                m.event(intId, ActivationEvent.Started.class, WAIT);
                ObjectNode interrupt = WireCodec.mapper().createObjectNode();
                interrupt.put("v", 1).put("type", "interrupt").put("activation_id", intId).put("reason", "test");
                m.send("h1", interrupt);
                for (ObjectNode l : List.of(interrupted, limited)) {
                    String id = l.get("activation_id").asText();
                    assertEquals(ActivationResult.INTERRUPTED, m.event(id, ActivationEvent.Finished.class,
                            Duration.ofSeconds(5)).result());
                    assertEquals("interrupted", waitRecords(record, "the end of " + id,
                            l2 -> find(l2, "end", id) != null).stream()
                            .filter(x -> "end".equals(x.path("event").asText()) && id.equals(x.path("activation").asText()))
                            .findFirst().orElseThrow().get("outcome").asText());
                }

                // A graceful stop (the demo node's SIGTERM hook) ends a sleeping run and a stream
                // at once: the node asks every run to stop.
                ObjectNode sleeping = m.launch("app.script.6", "script", params("{\"sleep\":\"60s\"}"));
                m.send("h1", sleeping);
                String sleepId = sleeping.get("activation_id").asText();
                RetryPolicy ladder = new RetryPolicy(HumanDuration.ofMillis(150), 2.0, HumanDuration.ofMillis(300), 3L);
                ObjectNode stream = m.stream("app.script-messages.7", "script-messages", m.prefix() + ".data.events",
                        ladder, 3);
                m.subscribe(stream, ladder);
                m.send("h1", stream);
                String streamId = stream.get("activation_id").asText();
                m.event(sleepId, ActivationEvent.Started.class, WAIT);
                m.event(streamId, ActivationEvent.Started.class, WAIT);
                long t0 = System.nanoTime();
                stopped = n.stop();
                Duration took = Duration.ofNanos(System.nanoTime() - t0);
                assertTrue(stopped, "the node stopped");
                assertTrue(took.compareTo(Duration.ofSeconds(10)) < 0, "a graceful stop took " + took);
                assertEquals(ActivationResult.INTERRUPTED, m.event(sleepId, ActivationEvent.Finished.class,
                        Duration.ofSeconds(2)).result(), "reported before the node closed");
                assertEquals(ActivationResult.INTERRUPTED, m.event(streamId, ActivationEvent.Finished.class,
                        Duration.ofSeconds(2)).result(), "the stream too");
                assertEquals("interrupted", find(records(record), "end", sleepId).get("outcome").asText());
            } finally {
                if (!stopped) {
                    n.stop();
                }
            }
        }
    }

    private static List<String> iterable(java.util.Iterator<String> it) {
        List<String> out = new ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }

    @Test
    void scriptMessagesRecordEveryDeliveryAndRetryThroughTheLaunchsLadder() throws Exception {
        try (TestManager m = new TestManager()) {
            Path record = tmp.resolve("messages.jsonl");
            Started n = start(env(m, "h1", record));
            try {
                String address = m.prefix() + ".data.events";
                // retry says 1 h; retry_steps (150 ms, then 300 ms) are all the broker has queues for.
                RetryPolicy ladder = new RetryPolicy(HumanDuration.ofMillis(150), 2.0, HumanDuration.ofMillis(300), 3L);
                ObjectNode stream = m.stream("app.script-messages.1", "script-messages", address, ladder, 3);
                m.subscribe(stream, ladder);
                m.send("h1", stream);
                String id = stream.get("activation_id").asText();
                m.event(id, ActivationEvent.Started.class, WAIT);

                m.publish(address, "{\"id\":\"flaky\",\"fail\":2,\"error_type\":\"Boom\"}");
                m.publish(address, "{\"id\":\"later\",\"unavailable\":2}");
                m.publish(address, "{\"id\":\"poison\",\"fail\":99}");
                m.publish(address, "this is not a script");
                m.publish(address, "{\"id\":\"slow\",\"hold\":\"300ms\",\"future\":{\"x\":1}}");

                List<JsonNode> r = waitRecords(record, "every delivery", l -> l.size() >= 13);
                Map<String, List<String>> seen = new HashMap<>();
                for (JsonNode x : r) {
                    assertEquals("script-messages", x.get("agent").asText());
                    assertEquals(id, x.get("activation").asText());
                    assertEquals("app.script-messages.1", x.get("launch_setting").asText());
                    String key = x.get("id").isNull() ? "(unreadable)" : x.get("id").asText();
                    seen.computeIfAbsent(key, k -> new ArrayList<>())
                            .add(x.get("attempt").asLong() + "/" + x.get("unavailable").asLong());
                }
                assertEquals(List.of("1/0", "2/0", "3/0"), seen.get("flaky"), r.toString());
                assertEquals(List.of("1/0", "1/1", "1/2"), seen.get("later"), r.toString());
                assertEquals(List.of("1/0", "2/0", "3/0"), seen.get("poison"), r.toString());
                assertEquals(List.of("1/0", "2/0", "3/0"), seen.get("(unreadable)"), r.toString());
                assertEquals(List.of("1/0"), seen.get("slow"), r.toString());
                // Delivered before in any way: a retry or an earlier "temporarily unavailable"
                // (nothing here is given back by the broker), as Message.redelivered().
                for (JsonNode x : r) {
                    boolean before = x.get("attempt").asLong() > 1 || x.get("unavailable").asLong() > 0;
                    assertEquals(before, x.get("redelivered").asBoolean(), "redelivered: " + x);
                }
                assertEquals(8, r.stream().filter(x -> x.get("redelivered").asBoolean()).count(), r.toString());

                List<GetResponse> dead = m.take(m.layout.names().deadLetterQueue(), 2, WAIT);
                assertEquals(2, dead.size());
                List<String> lastErrors = dead.stream()
                        .map(d -> String.valueOf(d.getProps().getHeaders().get("x-am-last-error-type"))).sorted().toList();
                assertEquals(List.of("Scripted", "Unreadable"), lastErrors);

                List<FailureReport> failures = new ArrayList<>();
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (failures.size() < 10 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                    failures = m.reports.stream().filter(x -> x instanceof FailureReport).map(x -> (FailureReport) x)
                            .toList();
                }
                assertEquals(2, failures.stream().filter(f -> f.errorType().equals("Boom")
                        && f.message().equals("scripted failure") && "retry".equals(f.disposition())).count(),
                        failures.toString());
                assertEquals(2, failures.stream().filter(f -> f.temporary()
                        && f.errorType().equals("TemporarilyUnavailable")
                        && f.message().equals("scripted unavailability")).count(), failures.toString());
                assertEquals(List.of("retry", "retry", "dead-letter"), failures.stream()
                        .filter(f -> f.errorType().equals("Scripted")).map(FailureReport::disposition).toList());
                assertEquals(3, failures.stream().filter(f -> f.errorType().equals("Unreadable")).count());

                ObjectNode stop = WireCodec.mapper().createObjectNode();
                stop.put("v", 1).put("type", "stop").put("launch_setting", "app.script-messages.1").put("reason", "test");
                m.send("h1", stop);
                assertEquals(ActivationResult.INTERRUPTED, m.event(id, ActivationEvent.Finished.class, WAIT).result());
            } finally {
                assertTrue(n.stop(), "the node stops");
            }
        }
    }
}
