package io.agentmanager.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.LongString;
import io.agentmanager.client.wire.ActivationEvent;
import io.agentmanager.client.wire.ActivationResult;
import io.agentmanager.client.wire.FailureReport;
import io.agentmanager.client.wire.Heartbeat;
import io.agentmanager.client.wire.HumanDuration;
import io.agentmanager.client.wire.OverlapPolicy;
import io.agentmanager.client.wire.ParamSpec;
import io.agentmanager.client.wire.Publication;
import io.agentmanager.client.wire.ReplayProcessed;
import io.agentmanager.client.wire.WireCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The node against the real local RabbitMQ, with the test acting as the manager: it publishes
 * launches to the control exchange under the node's routing key and reads the reports queue.
 * Each test has its own prefix and deletes everything it declared.
 */
@Timeout(60)
class NodeBrokerTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Parameters of the typed standalone agent. */
    record GreetParams(String greeting, HumanDuration pause, int times) {
    }

    /** Parameters of the sleeping agent. */
    record SleepParams(HumanDuration duration) {
    }

    private static final StandaloneAgent<SleepParams> SLEEP = ctx -> {
        Thread.sleep(ctx.params().duration().value().toMillis());
    };

    @Test
    void publishesItselfAndHeartbeatsWithItsRunningActivations() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            Node node = m.start(m.node("h1").version("1.2.3")
                    .standalone(AgentSpec.of("sleep").title("Sleep").suggestOverlap(OverlapPolicy.SKIP)
                            .param(ParamSpec.of("duration", "duration").withTitle("Duration").withDefault("10s")),
                            SleepParams.class, SLEEP)
                    .messages(AgentSpec.of("echo").title("Echo").suggestDataQueue("events"), JsonNode.class,
                            (ctx, msg) -> { })
                    .classifier(Classifier.of("sites", "Sites").value("par", "Paris")));
            assertEquals("am-node app@h1 (" + m.prefix() + ")", node.connectionName());
            Publication p = m.waitFor("publication", WAIT, Publication.class, x -> true);
            assertEquals(3, p.protocol());
            assertEquals("1.2.3", p.version());
            assertEquals(8, p.capacity());
            assertEquals(List.of("echo", "sleep"), p.agents().stream().map(a -> a.id()).toList());
            JsonNode raw = m.rawReports.stream().filter(r -> r.get("type").asText().equals("publication"))
                    .findFirst().orElseThrow();
            assertEquals(2, raw.get("v").asInt());
            JsonNode sleep = raw.get("agents").get(1);
            assertEquals("standalone", sleep.get("input").asText());
            assertEquals("skip", sleep.get("suggested_overlap").asText());
            assertFalse(sleep.has("suggested_data_queue"));
            assertEquals("{\"name\":\"duration\",\"title\":\"Duration\",\"type\":\"duration\",\"default\":\"10s\"}",
                    sleep.get("parameters").get(0).toString());
            assertEquals("par", raw.get("classifiers").get(0).get("values").get(0).get("code").asText());

            ObjectNode launch = m.launch("app.sleep.1", "sleep");
            launch.putObject("parameters").put("duration", "3s");
            String id = launch.get("activation_id").asText();
            m.send("h1", launch);
            m.event(id, ActivationEvent.Started.class, WAIT);
            Heartbeat hb = m.waitFor("heartbeat listing the run", WAIT, Heartbeat.class,
                    h -> h.running().stream().anyMatch(r -> r.activations().contains(id)));
            assertEquals("h1", hb.host());
            assertEquals("app.sleep.1", hb.running().get(0).launchSetting());
            assertEquals(id, hb.running().get(0).byActivation().get(0).activationId());
            assertNotNull(hb.at());
        }
    }

    @Test
    void aStandaloneRunGoesFromAcceptedToFinishedWithTypedParameters() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            Map<String, Object> seen = new ConcurrentHashMap<>();
            m.start(m.node("h1").standalone(AgentSpec.of("greet")
                    .param(ParamSpec.of("greeting", "string").asRequired())
                    .param(ParamSpec.of("pause", "duration").withDefault("50ms"))
                    .param(ParamSpec.of("times", "integer").withDefault(2)), GreetParams.class, ctx -> {
                        seen.put("params", ctx.params());
                        seen.put("activation", ctx.activationId());
                        for (int i = 1; i <= ctx.params().times(); i++) {
                            Thread.sleep(ctx.params().pause().toMillis());
                            ctx.progress((long) i, (long) ctx.params().times(), ctx.params().greeting() + " " + i);
                        }
                    }));
            ObjectNode launch = m.launch("app.greet.1", "greet");
            launch.put("fencing_token", 7);
            launch.putObject("parameters").put("greeting", "hello").putNull("times");
            String id = launch.get("activation_id").asText();
            m.send("h1", launch);
            ActivationEvent.Finished f = m.event(id, ActivationEvent.Finished.class, WAIT);
            assertEquals(ActivationResult.SUCCEEDED, f.result());
            assertNull(f.error());
            assertEquals(1, f.counters().processed());
            assertEquals(new GreetParams("hello", HumanDuration.ofMillis(50), 2), seen.get("params"));
            assertEquals(id, seen.get("activation"));
            List<String> kinds = m.events(id).stream().map(e -> e.getClass().getSimpleName()).toList();
            assertEquals(List.of("Accepted", "Started", "Progress", "Progress", "Finished"), kinds);
            ActivationEvent.Progress last = (ActivationEvent.Progress) m.events(id).get(3);
            assertEquals(new ActivationEvent.Progress(2L, 2L, "hello 2"), last);
            assertTrue(m.rawReports.stream().filter(r -> r.get("type").asText().equals("activation"))
                    .allMatch(r -> r.get("fencing_token").asLong() == 7 && r.get("v").asInt() == 2));

            // Parameters that do not fit the record: the run fails, saying so.
            ObjectNode bad = m.launch("app.greet.1", "greet");
            bad.putObject("parameters").put("greeting", "x").put("times", "many");
            m.send("h1", bad);
            ActivationEvent.Finished fb = m.event(bad.get("activation_id").asText(), ActivationEvent.Finished.class, WAIT);
            assertEquals(ActivationResult.FAILED, fb.result());
            assertTrue(fb.error().startsWith("InvalidParameters: parameters do not fit"), fb.error());
        }
    }

    @Test
    void anInterruptReachesOnlyRunsUpToItsFencingToken() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").standalone(AgentSpec.of("sleep"), SleepParams.class, SLEEP));
            ObjectNode launch = m.launch("app.sleep.1", "sleep");
            launch.put("fencing_token", 5);
            launch.putObject("parameters").put("duration", "30s");
            String id = launch.get("activation_id").asText();
            m.send("h1", launch);
            m.event(id, ActivationEvent.Started.class, WAIT);
            ObjectNode stale = WireCodec.mapper().createObjectNode().put("v", 1).put("type", "interrupt")
                    .put("activation_id", id).put("reason", "stale copy").put("up_to_token", 4);
            m.send("h1", stale);
            Thread.sleep(500);
            assertTrue(m.events(id).stream().noneMatch(e -> e instanceof ActivationEvent.Finished),
                    "an interrupt for an older dispatch must not stop this run");
            ObjectNode current = stale.deepCopy().put("up_to_token", 5).put("reason", "operator");
            m.send("h1", current);
            ActivationEvent.Finished f = m.event(id, ActivationEvent.Finished.class, WAIT);
            assertEquals(ActivationResult.INTERRUPTED, f.result());
        }
    }

    @Test
    void aMessageAgentProcessesEveryMessageExactlyOnce() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
            m.start(m.node("h1").messages(AgentSpec.of("count").prefetch(20), JsonNode.class,
                    (ctx, msg) -> counts.computeIfAbsent(msg.text(), k -> new AtomicInteger()).incrementAndGet()));
            String address = m.address("events");
            ObjectNode launch = m.stream("app.count.1", "count", address);
            m.subscribe(launch);
            String id = launch.get("activation_id").asText();
            m.send("h1", launch);
            m.event(id, ActivationEvent.Started.class, WAIT);
            int n = 200;
            for (int i = 0; i < n; i++) {
                m.publish(address, "msg-" + i, Map.of());
            }
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (counts.size() < n && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(300);
            assertEquals(n, counts.size());
            assertTrue(counts.values().stream().allMatch(c -> c.get() == 1), "each message once: " + counts);
            m.send("h1", WireCodec.mapper().createObjectNode().put("v", 1).put("type", "stop")
                    .put("launch_setting", "app.count.1").put("reason", "test done"));
            ActivationEvent.Finished f = m.event(id, ActivationEvent.Finished.class, WAIT);
            assertEquals(ActivationResult.INTERRUPTED, f.result());
            assertEquals(n, f.counters().processed());
            assertEquals(0, f.counters().failed());
            assertTrue(m.take(m.layout.names().subscription("app.count.1"), 1, Duration.ofMillis(200)).isEmpty(),
                    "every message acknowledged");
        }
    }

    @Test
    void aFailedMessageComesBackThroughTheWaitQueue() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            List<String> deliveries = new java.util.concurrent.CopyOnWriteArrayList<>();
            CountDownLatch second = new CountDownLatch(1);
            m.start(m.node("h1").messages(AgentSpec.of("once"), JsonNode.class, (ctx, msg) -> {
                deliveries.add(msg.attempt() + ":" + msg.header("x-am-first-failure") + ":" + msg.header("site"));
                if (msg.attempt() == 1) {
                    throw new AgentException("Flaky", "first delivery fails");
                }
                second.countDown();
            }));
            String address = m.address("events");
            ObjectNode launch = m.stream("app.once.1", "once", address);
            m.subscribe(launch);
            String id = launch.get("activation_id").asText();
            m.send("h1", launch);
            m.event(id, ActivationEvent.Started.class, WAIT);
            m.publish(address, "r1", Map.of("site", "par"));
            assertTrue(second.await(10, java.util.concurrent.TimeUnit.SECONDS), "retried: " + deliveries);
            assertEquals(2, deliveries.size());
            assertTrue(deliveries.get(0).startsWith("1:null:par"), deliveries.get(0));
            String[] again = deliveries.get(1).split(":", 2);
            assertEquals("2", again[0]);
            assertTrue(again[1].endsWith("+00:00:par"), "first failure time kept, producer header kept: " + again[1]);
            FailureReport failure = m.waitFor("failure", WAIT, FailureReport.class, f -> true);
            assertEquals("retry", failure.disposition());
            assertEquals(1, failure.attempt());
            assertEquals("Flaky", failure.errorType());
            assertEquals("m-r1", failure.dataMessageId());
            assertNotNull(failure.reportId());
            assertFalse(failure.temporary());
            m.waitFor("heartbeat counting the retry", WAIT, Heartbeat.class, h -> h.running().stream()
                    .anyMatch(r -> r.counters().retried() == 1 && r.counters().processed() == 1));
        }
    }

    @Test
    void aPoisonMessageIsDeadLetteredWithEveryHeader() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").messages(AgentSpec.of("poison"), JsonNode.class, (ctx, msg) -> {
                throw new AgentException("Poisoned", "the message contains poison");
            }));
            String address = m.address("events");
            ObjectNode launch = m.stream("app.poison.1", "poison", address);
            ((ObjectNode) launch.get("retry")).put("max_deliveries", 2);
            m.subscribe(launch);
            String id = launch.get("activation_id").asText();
            m.send("h1", launch);
            m.event(id, ActivationEvent.Started.class, WAIT);
            m.publish(address, "poison", Map.of("site", "lyo"));
            List<GetResponse> dead = m.take(m.layout.names().deadLetterQueue(), 1, WAIT);
            assertEquals(1, dead.size());
            GetResponse d = dead.get(0);
            assertEquals("poison", new String(d.getBody(), StandardCharsets.UTF_8));
            Map<String, Object> h = d.getProps().getHeaders();
            assertEquals("dq", text(h.get("x-am-data-queue")));
            assertEquals("app.poison.1", text(h.get("x-am-launch-setting")));
            assertEquals(2L, h.get("x-am-attempts"));
            assertEquals(2L, h.get("x-am-attempt"));
            assertEquals("Poisoned", text(h.get("x-am-last-error-type")));
            assertEquals("the message contains poison", text(h.get("x-am-last-error-message")));
            assertEquals("h1", text(h.get("x-am-host")));
            assertEquals(m.layout.names().subscription("app.poison.1"), text(h.get("x-am-queue")));
            assertTrue(text(h.get("x-am-first-failure")).endsWith("+00:00"));
            assertTrue(text(h.get("x-am-last-failure")).endsWith("+00:00"));
            assertEquals("lyo", text(h.get("site")));
            assertEquals("m-poison", d.getProps().getMessageId());
            FailureReport last = m.waitFor("dead-letter failure", WAIT, FailureReport.class,
                    f -> "dead-letter".equals(f.disposition()));
            assertEquals(2, last.attempt());
            m.waitFor("heartbeat counting the dead letter", WAIT, Heartbeat.class, hb -> hb.running().stream()
                    .anyMatch(r -> r.counters().deadLettered() == 1 && r.counters().failed() == 2));
        }
    }

    @Test
    void aReplayedDeadLetterIsReportedProcessed() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").messages(AgentSpec.of("echo"), JsonNode.class, (ctx, msg) -> { }));
            String address = m.address("events");
            ObjectNode launch = m.stream("app.echo.1", "echo", address);
            m.subscribe(launch);
            String id = launch.get("activation_id").asText();
            m.send("h1", launch);
            m.event(id, ActivationEvent.Started.class, WAIT);
            m.publish(address, "again", Map.of("x-am-replay", "42.3"));
            ReplayProcessed r = m.waitFor("replay-processed", WAIT, ReplayProcessed.class, x -> true);
            assertEquals("42.3", r.replay().toString());
            assertEquals(id, r.activationId());
        }
    }

    @Test
    void aLaunchWithUnknownFieldsAndANewerVersionStillRuns() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").standalone(AgentSpec.of("sleep"), SleepParams.class, SLEEP));
            ObjectNode launch = m.launch("app.sleep.1", "sleep");
            launch.put("v", 3);
            launch.put("priority", "high");
            ((ObjectNode) launch.get("retry")).put("jitter", "10%");
            ((ObjectNode) launch.get("dead_letter")).putObject("forward").put("to", "x");
            launch.putObject("placement").putArray("zones").add("eu");
            launch.putObject("parameters").put("duration", "10ms").put("unused", true);
            String id = launch.get("activation_id").asText();
            m.send("h1", launch);
            assertEquals(ActivationResult.SUCCEEDED, m.event(id, ActivationEvent.Finished.class, WAIT).result());
        }
    }

    @Test
    void aLaunchWithAnUnknownWordIsSkippedWithAReason() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").standalone(AgentSpec.of("sleep"), SleepParams.class, SLEEP));
            ObjectNode launch = m.launch("app.sleep.1", "sleep");
            launch.put("overlap", "queue-up");
            launch.put("fencing_token", 9);
            String id = launch.get("activation_id").asText();
            m.send("h1", launch);
            ActivationEvent.Skipped s = m.event(id, ActivationEvent.Skipped.class, WAIT);
            assertTrue(s.reason().contains("`overlap`") && s.reason().contains("`queue-up`"), s.reason());
            JsonNode raw = m.rawReports.stream().filter(r -> r.path("activation_id").asText().equals(id))
                    .findFirst().orElseThrow();
            assertEquals(9, raw.get("fencing_token").asInt());
            assertEquals("app.sleep.1", raw.get("launch_setting").asText());
            assertEquals(1, m.events(id).size(), "never accepted nor run");
        }
    }

    @Test
    void unreadableCommandsAreQuarantinedWithTheirReason() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").standalone(AgentSpec.of("sleep"), SleepParams.class, SLEEP));
            m.sendRaw("h1", "not json".getBytes(StandardCharsets.UTF_8));
            List<GetResponse> q = m.take(m.layout.names().quarantineQueue(), 1, WAIT);
            assertEquals(1, q.size());
            assertEquals("not json", new String(q.get(0).getBody(), StandardCharsets.UTF_8));
            Map<String, Object> h = q.get(0).getProps().getHeaders();
            assertTrue(text(h.get("x-am-quarantine-reason")).startsWith("not a JSON object with a numeric `v`"));
            assertEquals("h1", text(h.get("x-am-host")));
            m.waitFor("heartbeat counting it", WAIT, Heartbeat.class, hb -> hb.quarantined() == 1);
        }
    }

    @Test
    void anUnknownQueueEndsTheActivationFailedWithTheRustWording() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").messages(AgentSpec.of("echo"), JsonNode.class, (ctx, msg) -> { }));
            ObjectNode launch = m.stream("app.echo.9", "echo", m.address("nowhere"));
            String id = launch.get("activation_id").asText();
            m.send("h1", launch);
            ActivationEvent.Finished f = m.event(id, ActivationEvent.Finished.class, WAIT);
            assertEquals(ActivationResult.FAILED, f.result());
            assertEquals("queue `" + m.layout.names().subscription("app.echo.9") + "` of launch setting 'app.echo.9' "
                    + "does not exist on the broker; the manager declares it from its catalog (is the launch setting "
                    + "in the catalog and consuming data queue 'dq'?)", f.error());
        }
    }

    @Test
    void closeAsksEveryRunToStopAtOnceAndReportsIt() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            Map<String, Boolean> cancelledSeen = new ConcurrentHashMap<>();
            StandaloneAgent<SleepParams> sleep = ctx -> {
                try {
                    Thread.sleep(ctx.params().duration().value().toMillis());
                } catch (InterruptedException e) {
                    cancelledSeen.put(ctx.activationId(), ctx.isCancelled());
                    throw e;
                }
            };
            // Deaf to the interruption, ends on its own well within the shutdown timeout.
            StandaloneAgent<SleepParams> deaf = ctx -> {
                long end = System.nanoTime() + ctx.params().duration().value().toNanos();
                boolean interrupted = false;
                while (System.nanoTime() < end) {
                    try {
                        Thread.sleep(Math.max(1, (end - System.nanoTime()) / 1_000_000));
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                cancelledSeen.put(ctx.activationId(), ctx.isCancelled() && interrupted);
            };
            // The defaults (30 s): close() must not wait for them.
            Node node = m.start(m.node("h1").shutdownTimeout(Duration.ofSeconds(30)).interruptGrace(Duration.ofSeconds(30))
                    .standalone(AgentSpec.of("sleep"), SleepParams.class, sleep)
                    .standalone(AgentSpec.of("deaf"), SleepParams.class, deaf)
                    .messages(AgentSpec.of("echo"), JsonNode.class, (ctx, msg) -> { }));
            ObjectNode run = m.launch("app.sleep.1", "sleep");
            run.putObject("parameters").put("duration", "60s");
            m.send("h1", run);
            ObjectNode own = m.launch("app.deaf.1", "deaf");
            own.putObject("parameters").put("duration", "1500ms");
            String address = m.address("events");
            ObjectNode stream = m.stream("app.echo.1", "echo", address);
            m.subscribe(stream);
            m.send("h1", stream);
            String runId = run.get("activation_id").asText();
            String streamId = stream.get("activation_id").asText();
            String ownId = own.get("activation_id").asText();
            m.event(runId, ActivationEvent.Started.class, WAIT);
            m.event(streamId, ActivationEvent.Started.class, WAIT);
            m.send("h1", own);
            m.event(ownId, ActivationEvent.Started.class, WAIT);

            long t0 = System.nanoTime();
            node.close();
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            assertTrue(took.compareTo(Duration.ofSeconds(5)) < 0, "close() took " + took);
            // Flushed before close() returned: here as soon as the harness read them.
            Duration soon = Duration.ofSeconds(2);
            assertEquals(ActivationResult.INTERRUPTED, m.event(runId, ActivationEvent.Finished.class, soon).result());
            assertEquals(ActivationResult.INTERRUPTED, m.event(streamId, ActivationEvent.Finished.class, soon).result());
            assertEquals(ActivationResult.SUCCEEDED, m.event(ownId, ActivationEvent.Finished.class, soon).result(),
                    "a run that ends on its own in time reports its own result");
            assertEquals(Boolean.TRUE, cancelledSeen.get(runId), "its context says cancelled when interrupted");
            assertEquals(Boolean.TRUE, cancelledSeen.get(ownId), "asked to stop at once, not after the timeout");
            assertFalse(node.isConnected());
        }
    }

    @Test
    void pausedIntakeLetsRunsGoOnAndCommandsWait() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            Node node = m.start(m.node("h1").standalone(AgentSpec.of("sleep"), SleepParams.class, SLEEP));
            ObjectNode run = m.launch("app.sleep.1", "sleep");
            run.putObject("parameters").put("duration", "600ms");
            m.send("h1", run);
            String runId = run.get("activation_id").asText();
            m.event(runId, ActivationEvent.Started.class, WAIT);
            node.pauseIntake();
            ObjectNode later = m.launch("app.sleep.2", "sleep");
            later.putObject("parameters").put("duration", "0s");
            m.send("h1", later);
            String laterId = later.get("activation_id").asText();
            assertEquals(ActivationResult.SUCCEEDED, m.event(runId, ActivationEvent.Finished.class, WAIT).result(),
                    "a paused node's run goes on");
            Thread.sleep(200);
            assertTrue(m.events(laterId).isEmpty(), "the command waits in the control queue");
            node.resumeIntake();
            assertEquals(ActivationResult.SUCCEEDED, m.event(laterId, ActivationEvent.Finished.class, WAIT).result());
        }
    }

    private static String text(Object v) {
        assertNotNull(v);
        assertTrue(v instanceof LongString || v instanceof String, "a text header, not " + v.getClass());
        return v.toString();
    }

    @Test
    void theEnvironmentConfiguresANodeAndEveryBadVariableIsNamed() {
        NodeBuilder b = NodeBuilder.fromVariables(Map.of("AM_APP", "billing", "AM_HOST", "billing-01",
                "AM_PREFIX", "staging", "AM_CAPACITY", "3", "AM_QUEUE_EXPIRY", "1m")::get);
        assertEquals("billing-01", b.hostName());
        assertEquals(NodeBuilder.DEFAULT_AMQP_URL, b.brokerUrl());
        NodeConfigException e = org.junit.jupiter.api.Assertions.assertThrows(NodeConfigException.class,
                () -> NodeBuilder.fromVariables(Map.of("AM_CAPACITY", "0")::get));
        assertEquals(2, e.problems().size(), e.problems().toString());
        assertTrue(e.problems().get(0).startsWith("AM_APP: required"));
        assertTrue(e.problems().get(1).startsWith("AM_CAPACITY: `0`"));
        NodeConfigException bad = org.junit.jupiter.api.Assertions.assertThrows(NodeConfigException.class,
                () -> Node.builder().application("Bad App").host("h_1").amqpUrl("amqp://a:5672/%2f,http://b").validate());
        assertEquals(3, bad.problems().size(), bad.problems().toString());
        assertTrue(bad.problems().get(2).contains("address 2"), bad.problems().toString());
        assertInstanceOf(IllegalArgumentException.class, bad);
    }
}
