package io.agentmanager.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.rabbitmq.client.GetResponse;
import io.agentmanager.client.wire.ActivationEvent;
import io.agentmanager.client.wire.ActivationResult;
import io.agentmanager.client.wire.BreakerTripped;
import io.agentmanager.client.wire.FailureReport;
import io.agentmanager.client.wire.Heartbeat;
import io.agentmanager.client.wire.HumanDuration;
import io.agentmanager.client.wire.Publication;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Overlap, capacity, breaker, unavailable budget, park, idle timeout and reconnect. */
@Timeout(60)
class NodeBehaviourTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Parameters of the sleeping agent. */
    record SleepParams(HumanDuration duration) {
    }

    private static final StandaloneAgent<SleepParams> SLEEP = ctx -> Thread.sleep(ctx.params().duration().toMillis());

    private static ObjectNode sleepFor(ManagerHarness m, String ls, String duration) {
        ObjectNode l = m.launch(ls, "sleep");
        l.putObject("parameters").put("duration", duration);
        return l;
    }

    private static String id(ObjectNode launch) {
        return launch.get("activation_id").asText();
    }

    @Test
    void overlapSkipRefusesAndAFullNodeQueuesTheLaunch() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").capacity(1).standalone(AgentSpec.of("sleep"), SleepParams.class, SLEEP));
            ObjectNode first = sleepFor(m, "app.s.1", "1500ms");
            m.send("h1", first);
            m.event(id(first), ActivationEvent.Started.class, WAIT);
            ObjectNode skipped = sleepFor(m, "app.s.1", "10ms").put("overlap", "skip");
            m.send("h1", skipped);
            ActivationEvent.Skipped s = m.event(id(skipped), ActivationEvent.Skipped.class, WAIT);
            assertEquals("an activation of this launch setting is still running (overlap policy: skip)", s.reason());
            // Another launch setting, no slot free: accepted now, started when the first ends.
            ObjectNode queued = sleepFor(m, "app.s.2", "10ms");
            m.send("h1", queued);
            m.event(id(queued), ActivationEvent.Accepted.class, WAIT);
            m.waitFor("a heartbeat listing the waiting launch", WAIT, Heartbeat.class,
                    h -> h.running().stream().anyMatch(r -> r.activations().contains(id(queued))));
            assertTrue(m.events(id(queued)).stream().noneMatch(e -> e instanceof ActivationEvent.Started));
            m.event(id(first), ActivationEvent.Finished.class, WAIT);
            assertEquals(ActivationResult.SUCCEEDED, m.event(id(queued), ActivationEvent.Finished.class, WAIT).result());
            // Overlap interrupt: the running one ends interrupted, then the new one runs.
            ObjectNode longRun = sleepFor(m, "app.s.3", "30s");
            m.send("h1", longRun);
            m.event(id(longRun), ActivationEvent.Started.class, WAIT);
            ObjectNode replacing = sleepFor(m, "app.s.3", "10ms").put("overlap", "interrupt");
            m.send("h1", replacing);
            assertEquals(ActivationResult.INTERRUPTED, m.event(id(longRun), ActivationEvent.Finished.class, WAIT).result());
            assertEquals(ActivationResult.SUCCEEDED, m.event(id(replacing), ActivationEvent.Finished.class, WAIT).result());
        }
    }

    @Test
    void theMaximumRunTimeInterruptsARun() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").standalone(AgentSpec.of("sleep"), SleepParams.class, SLEEP));
            ObjectNode launch = sleepFor(m, "app.s.1", "30s").put("max_run_time", "300ms");
            m.send("h1", launch);
            assertEquals(ActivationResult.INTERRUPTED, m.event(id(launch), ActivationEvent.Finished.class, WAIT).result());
        }
    }

    @Test
    void theBreakerTripsAfterNFailuresOfOneType() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").messages(AgentSpec.of("bad"), JsonNode.class, (ctx, msg) -> {
                throw new IllegalStateException("broken " + msg.text());
            }));
            String address = m.address("events");
            ObjectNode launch = m.stream("app.bad.1", "bad", address);
            launch.put("failure_threshold", 6); // N = 2
            m.subscribe(launch);
            m.send("h1", launch);
            m.event(id(launch), ActivationEvent.Started.class, WAIT);
            m.publish(address, "a", Map.of());
            m.publish(address, "b", Map.of());
            BreakerTripped trip = m.waitFor("breaker-tripped", WAIT, BreakerTripped.class, t -> true);
            assertEquals(2, trip.consecutiveFailures());
            assertEquals(2, trip.sameTypeFailures());
            assertEquals("IllegalStateException", trip.lastErrors().get(1).errorType());
            ActivationEvent.Finished f = m.event(id(launch), ActivationEvent.Finished.class, WAIT);
            assertEquals(ActivationResult.FAILED, f.result());
            assertEquals("breaker tripped after 2 consecutive failures (2 of type IllegalStateException)", f.error());
        }
    }

    @Test
    void temporarilyUnavailableUsesNoAttemptAndIsDeadLetteredAfterItsBudget() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            List<String> seen = new CopyOnWriteArrayList<>();
            m.start(m.node("h1").messages(AgentSpec.of("lagging"), JsonNode.class, (ctx, msg) -> {
                seen.add(msg.attempt() + "/" + msg.unavailable());
                throw new TemporarilyUnavailableException("replica lagging");
            }));
            String address = m.address("events");
            ObjectNode launch = m.stream("app.lag.1", "lagging", address);
            launch.put("unavailable_for", "700ms");
            m.subscribe(launch);
            m.send("h1", launch);
            m.event(id(launch), ActivationEvent.Started.class, WAIT);
            m.publish(address, "later", Map.of());
            List<GetResponse> dead = m.take(m.layout.names().deadLetterQueue(), 1, WAIT);
            assertEquals(1, dead.size());
            Map<String, Object> h = dead.get(0).getProps().getHeaders();
            assertEquals("TemporarilyUnavailable", h.get("x-am-last-error-type").toString());
            assertTrue(h.get("x-am-last-error-message").toString().startsWith("still unavailable after 700ms ("),
                    h.get("x-am-last-error-message").toString());
            assertEquals(1L, h.get("x-am-attempts"), "unavailable answers use no attempt");
            assertTrue(seen.size() >= 3 && seen.stream().allMatch(s -> s.startsWith("1/")), seen.toString());
            assertEquals("1/0", seen.get(0));
            assertEquals("1/1", seen.get(1));
            m.waitFor("the dead-letter failure", WAIT, FailureReport.class, f -> "dead-letter".equals(f.disposition()));
            List<FailureReport> failures = m.reports.stream().filter(r -> r instanceof FailureReport)
                    .map(r -> (FailureReport) r).toList();
            assertTrue(failures.stream().allMatch(FailureReport::temporary));
            assertEquals("dead-letter", failures.get(failures.size() - 1).disposition());
            assertEquals(0, m.reports.stream().filter(r -> r instanceof BreakerTripped).count());
        }
    }

    @Test
    void parkSendsTheMessageToTheCooldownThenGivesUpForGood() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            List<String> seen = new CopyOnWriteArrayList<>();
            m.start(m.node("h1").messages(AgentSpec.of("poison"), JsonNode.class, (ctx, msg) -> {
                seen.add(msg.attempt() + (msg.header("x-am-parked") == null ? "" : "p"));
                throw new AgentException("Poisoned", "no");
            }));
            String address = m.address("events");
            ObjectNode launch = m.stream("app.park.1", "poison", address);
            ((ObjectNode) launch.get("retry")).put("max_deliveries", 2);
            ((ObjectNode) launch.get("dead_letter")).put("policy", "park").put("park_cooldown", "300ms");
            m.subscribe(launch);
            m.send("h1", launch);
            m.event(id(launch), ActivationEvent.Started.class, WAIT);
            m.publish(address, "p1", Map.of());
            List<GetResponse> dead = m.take(m.layout.names().deadLetterQueue(), 1, WAIT);
            assertEquals(1, dead.size());
            assertEquals(List.of("1", "2", "1p", "2p"), seen);
            assertTrue(dead.get(0).getProps().getHeaders().containsKey("x-am-parked"));
            // The failure report follows the confirmed copy: wait for it.
            m.waitFor("the dead-letter failure", WAIT, FailureReport.class, f -> "dead-letter".equals(f.disposition()));
            List<String> dispositions = m.reports.stream().filter(r -> r instanceof FailureReport)
                    .map(r -> ((FailureReport) r).disposition()).toList();
            assertEquals(List.of("retry", "park", "retry", "dead-letter"), dispositions);
        }
    }

    @Test
    void aScheduledMessagesRunEndsWhenIdle() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            m.start(m.node("h1").messages(AgentSpec.of("echo"), JsonNode.class, (ctx, msg) -> { }));
            String address = m.address("events");
            ObjectNode launch = m.stream("app.echo.1", "echo", address);
            launch.put("kind", "scheduled");
            launch.put("idle_timeout", "400ms");
            m.subscribe(launch);
            m.publish(address, "waiting", Map.of());
            m.send("h1", launch);
            ActivationEvent.Finished f = m.event(id(launch), ActivationEvent.Finished.class, WAIT);
            assertEquals(ActivationResult.SUCCEEDED, f.result());
            assertEquals(1, f.counters().processed());
        }
    }

    @Test
    void afterAConnectionCutTheNodePublishesAgainAndResubscribes() throws Exception {
        try (ManagerHarness m = new ManagerHarness()) {
            List<String> bodies = new CopyOnWriteArrayList<>();
            Node node = m.start(m.node("h1").messages(AgentSpec.of("echo"), JsonNode.class,
                    (ctx, msg) -> bodies.add(msg.text())));
            String address = m.address("events");
            ObjectNode launch = m.stream("app.echo.1", "echo", address);
            m.subscribe(launch);
            m.send("h1", launch);
            m.event(id(launch), ActivationEvent.Started.class, WAIT);
            m.publish(address, "before", Map.of());
            closeConnection(node.connectionName());
            m.waitFor("a second publication", WAIT, Publication.class,
                    p -> m.reports.stream().filter(r -> r instanceof Publication).count() >= 2);
            m.publish(address, "after", Map.of());
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!bodies.contains("after") && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertTrue(bodies.contains("before") && bodies.contains("after"), bodies.toString());
            assertTrue(m.events(id(launch)).stream().noneMatch(e -> e instanceof ActivationEvent.Finished),
                    "the activation survives the reconnect");
            ObjectNode again = sleeplessLaunch(m);
            m.send("h1", again);
            m.event(id(again), ActivationEvent.Skipped.class, WAIT);
        }
    }

    private static ObjectNode sleeplessLaunch(ManagerHarness m) {
        return m.launch("app.none.1", "none");
    }

    /** Closes a connection from the broker side (rabbitmqctl, as root or through sudo -n). */
    private static void closeConnection(String name) throws IOException, InterruptedException {
        String list = run("list_connections", "pid", "client_properties");
        String pid = list.lines().filter(l -> l.contains(name)).map(l -> l.split("\\s+")[0]).findFirst()
                .orElseThrow(() -> new AssertionError("connection `" + name + "` not found in " + list));
        run("close_connection", pid, "test cuts the connection");
    }

    private static String run(String... args) throws IOException, InterruptedException {
        for (List<String> prefix : List.of(List.of("rabbitmqctl", "-q"), List.of("sudo", "-n", "rabbitmqctl", "-q"))) {
            List<String> cmd = new java.util.ArrayList<>(prefix);
            cmd.addAll(List.of(args));
            Process p;
            try {
                p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            } catch (IOException e) {
                continue;
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() == 0) {
                return out;
            }
        }
        throw new AssertionError("rabbitmqctl is needed to cut a connection");
    }
}
