package io.agentmanager.client.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The wire format without a broker: what is written, what is read, what is refused. */
class WireCodecTest {

    private static DecodedCommand decode(String json) {
        return WireCodec.decodeCommand(json.getBytes(StandardCharsets.UTF_8));
    }

    private static JsonNode written(ToManager report) throws Exception {
        return WireCodec.mapper().readTree(WireCodec.encode(report));
    }

    @Test
    void aMinimalLaunchGetsTheManagersDefaults() {
        DecodedCommand d = decode("{\"v\":1,\"type\":\"launch\",\"activation_id\":\"a1\",\"launch_setting\":\"x.1\","
                + "\"agent\":\"sleep\",\"kind\":\"scheduled\",\"fencing_token\":1}");
        Launch l = (Launch) assertInstanceOf(DecodedCommand.Understood.class, d).command();
        assertEquals(OverlapPolicy.ALLOW, l.overlap());
        assertEquals(10L, l.failureThreshold());
        assertEquals(10L, l.retry().maxDeliveries());
        assertEquals(Duration.ofHours(24), l.unavailableFor().value());
        assertEquals(DeadLetterPolicy.DEAD_LETTER, l.deadLetter().policy());
        assertEquals(Duration.ofMinutes(10), l.deadLetter().parkCooldown().value());
        assertNull(l.subscription());
    }

    @Test
    void unknownFieldsAtEveryDepthAndANewerVersionAreRead() {
        DecodedCommand d = decode("{\"v\":7,\"type\":\"launch\",\"activation_id\":\"a1\",\"launch_setting\":\"x.1\","
                + "\"agent\":\"echo\",\"kind\":\"stream\",\"fencing_token\":3,\"future\":{\"a\":1},"
                + "\"retry\":{\"initial_delay\":\"1s\",\"jitter\":0.5},\"dead_letter\":{\"policy\":\"park\",\"x\":1},"
                + "\"subscription\":{\"data_queue\":\"dq\",\"address\":\"ex\",\"kind\":\"topic\",\"shards\":4,"
                + "\"filter\":{\"headers\":{\"site\":\"par\"},\"mode\":\"any\"}}}");
        Launch l = (Launch) assertInstanceOf(DecodedCommand.Understood.class, d).command();
        assertEquals(3L, l.fencingToken());
        assertEquals(DeadLetterPolicy.PARK, l.deadLetter().policy());
        assertEquals("par", l.subscription().filter().headers().get("site"));
    }

    @Test
    void anUnknownWordMakesALaunchNotUnderstoodNamingTheField() {
        DecodedCommand d = decode("{\"v\":1,\"type\":\"launch\",\"activation_id\":\"a1\",\"launch_setting\":\"x.1\","
                + "\"agent\":\"echo\",\"kind\":\"scheduled\",\"fencing_token\":4,\"overlap\":\"queue-up\"}");
        DecodedCommand.LaunchNotUnderstood n = assertInstanceOf(DecodedCommand.LaunchNotUnderstood.class, d);
        assertEquals(4L, n.fencingToken());
        assertTrue(n.reason().contains("`overlap`") && n.reason().contains("`queue-up`"), n.reason());
        DecodedCommand bad = decode("{\"v\":1,\"type\":\"launch\",\"activation_id\":\"a1\",\"launch_setting\":\"x\","
                + "\"agent\":\"e\",\"kind\":\"scheduled\",\"fencing_token\":4,\"retry\":{\"initial_delay\":\"soon\"}}");
        n = assertInstanceOf(DecodedCommand.LaunchNotUnderstood.class, bad);
        assertTrue(n.reason().contains("initial_delay") && n.reason().contains("`soon`"), n.reason());
    }

    @Test
    void garbageAndUnknownCommandsAreUnreadableWithTheRustWording() {
        assertTrue(((DecodedCommand.Unreadable) decode("[1]")).reason().startsWith("not a JSON object with a numeric `v`"));
        assertTrue(((DecodedCommand.Unreadable) decode("{\"type\":\"stop\"}")).reason().contains("missing `v`"));
        assertTrue(((DecodedCommand.Unreadable) decode("{\"v\":0,\"type\":\"stop\",\"launch_setting\":\"x\"}"))
                .reason().startsWith("protocol version 0 is not supported"));
        assertTrue(((DecodedCommand.Unreadable) decode("{\"v\":1,\"type\":\"explode\"}")).reason()
                .startsWith("invalid message: unknown variant `explode`"));
        assertTrue(((DecodedCommand.Unreadable) decode("{\"v\":1,\"type\":\"interrupt\"}")).reason()
                .contains("activation_id"));
        Stop s = (Stop) ((DecodedCommand.Understood) decode("{\"v\":2,\"type\":\"stop\",\"launch_setting\":\"x\"}")).command();
        assertEquals("", s.reason());
    }

    @Test
    void reportsAreVersionTwoSnakeCaseAndOmitWhatRustOmits() throws Exception {
        assertEquals(2, WireCodec.PROTOCOL_VERSION);
        assertEquals(3, WireCodec.NODE_PROTOCOL);
        Instant at = Instant.parse("2026-01-02T03:04:05.123Z");
        JsonNode v = written(new ActivationReport("billing", "h1", "a1", "x.1", 2,
                new ActivationEvent.Finished(ActivationResult.FAILED, "boom", null), at));
        assertEquals(2, v.get("v").asInt());
        assertEquals("activation", v.get("type").asText());
        assertEquals("finished", v.get("event").get("event").asText());
        assertEquals("failed", v.get("event").get("result").asText());
        assertFalse(v.get("event").has("counters"));
        assertEquals("2026-01-02T03:04:05.123Z", v.get("at").asText());
        JsonNode accepted = written(new ActivationReport("b", "h", "a", "l", 1, new ActivationEvent.Accepted(), at));
        assertEquals("{\"event\":\"accepted\"}", accepted.get("event").toString());
        JsonNode progress = written(new ActivationReport("b", "h", "a", "l", 1,
                new ActivationEvent.Progress(null, 5L, ""), at));
        assertEquals("{\"event\":\"progress\",\"total\":5}", progress.get("event").toString());
        JsonNode failure = written(new FailureReport("b", "h", "a", "l", "ag", "E", "m", "", null, 1, false,
                null, at, "r1", null));
        for (String absent : List.of("details", "data_message_id", "disposition", "replay")) {
            assertFalse(failure.has(absent), absent);
        }
        assertFalse(failure.get("temporary").asBoolean());
        JsonNode hb = written(new Heartbeat("b", "h", 2, List.of(new RunningLaunchSetting("l", List.of("a"),
                new Counters(1, 0, 0, 0), List.of())), null, 0, 0, at));
        assertFalse(hb.has("load"));
        assertFalse(hb.get("running").get(0).has("by_activation"));
        assertEquals(1, hb.get("running").get(0).get("counters").get("processed").asInt());
        JsonNode trip = written(new BreakerTripped("b", "h", "a", "l", 3, 3, List.of(new ErrorSummary("E", "m")), at));
        assertEquals("breaker-tripped", trip.get("type").asText());
        JsonNode replay = written(new ReplayProcessed("b", "h", "a", "l", ReplayToken.parse("42.3"), at));
        assertEquals("replay-processed", replay.get("type").asText());
        assertEquals("42.3", replay.get("replay").asText());
        JsonNode spec = WireCodec.mapper().valueToTree(ParamSpec.of("duration", "duration").withTitle("Duration")
                .withDefault("10s"));
        assertEquals("{\"name\":\"duration\",\"title\":\"Duration\",\"type\":\"duration\",\"default\":\"10s\"}",
                spec.toString());
    }

    @Test
    void durationsReadAndWriteAsHumantime() {
        assertEquals(Duration.ofMillis(500), HumanDuration.parse("500ms").value());
        assertEquals(Duration.ofMinutes(90), HumanDuration.parse("1h 30m").value());
        assertEquals(Duration.ofSeconds(86_400), HumanDuration.parse("1day").value());
        assertEquals(Duration.ofSeconds(2_630_016), HumanDuration.parse("1month").value());
        assertEquals(Duration.ofSeconds(31_557_600), HumanDuration.parse("1year").value());
        assertEquals(Duration.ofSeconds(31_557_600 + 2_630_016), HumanDuration.parse("1y1M").value());
        assertEquals(Duration.ofMillis(1500), HumanDuration.fromJson(WireCodec.mapper().valueToTree(1500)).value());
        assertEquals("1h 30m", HumanDuration.parse("90m").toString());
        assertEquals("1day", HumanDuration.parse("24h").toString());
        assertEquals("2days 1s", HumanDuration.parse("172801s").toString());
        assertEquals("1s 500ms", HumanDuration.parse("1500ms").toString());
        assertEquals("0s", HumanDuration.ofMillis(0).toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HumanDuration.parse("soon"));
        assertTrue(e.getMessage().contains("`soon`"));
    }

    private static RetryPolicy policy(long initialMs, double multiplier, long maxMs) {
        return new RetryPolicy(HumanDuration.ofMillis(initialMs), multiplier, HumanDuration.ofMillis(maxMs), 5L);
    }

    @Test
    void retryDelaysMatchTheRustArithmetic() {
        RetryPolicy p = policy(500, 3.0, 10_000);
        long[] want = {500, 1500, 4500, 10_000, 10_000, 10_000};
        for (int a = 1; a <= 6; a++) {
            assertEquals(want[a - 1], RetryMath.retryDelay(p, a).toMillis(), "attempt " + a);
        }
        assertEquals(500, RetryMath.retryDelay(p, 0).toMillis(), "attempt 0 counts as the first");
        assertEquals(Duration.ofSeconds(300), RetryMath.retryDelay(policy(1000, 2.0, 300_000), 0xFFFF_FFFFL));
        assertEquals(Duration.ofSeconds(300), RetryMath.retryDelay(policy(1000, Double.MAX_VALUE, 300_000), 3));
        assertEquals(Duration.ofSeconds(1), RetryMath.retryDelay(policy(1000, Double.NaN, 60_000), 5));
        assertEquals(Duration.ofSeconds(1), RetryMath.retryDelay(policy(1000, 0.5, 60_000), 5));
        // Fractional growth: 100 ms × 1.5^3 = 337.5 ms, the wait queue of 337 ms.
        assertEquals(337, RetryMath.retryDelay(policy(100, 1.5, 60_000), 4).toMillis());
        assertEquals(Duration.ofNanos(337_500_000), RetryMath.retryDelay(policy(100, 1.5, 60_000), 4));
        // 0.1 s × 1.1 = 0.11000000000000001 s: rounded to the nearest nanosecond, 110 ms.
        assertEquals(Duration.ofMillis(110), RetryMath.retryDelay(policy(100, 1.1, 60_000), 2));
        assertEquals("am.wait.337ms", new Names("am").wait(RetryMath.retryDelay(policy(100, 1.5, 60_000), 4)));
        assertEquals(3, RetryMath.sameTypeThreshold(10));
        assertEquals(1, RetryMath.sameTypeThreshold(2));
        assertEquals(1, RetryMath.sameTypeThreshold(0));
        RetryPolicy r = policy(1000, 2.0, 60_000);
        assertFalse(RetryMath.shouldDeadLetter(DeadLetterSettings.defaults(), r, 4));
        assertTrue(RetryMath.shouldDeadLetter(DeadLetterSettings.defaults(), r, 5));
        assertFalse(RetryMath.shouldDeadLetter(new DeadLetterSettings(DeadLetterPolicy.RETRY_FOREVER, null, null, null),
                r, 1_000));
        RetryPolicy zero = new RetryPolicy(null, null, null, 0L);
        assertFalse(RetryMath.shouldDeadLetter(DeadLetterSettings.defaults(), zero, 0));
        assertTrue(RetryMath.shouldDeadLetter(DeadLetterSettings.defaults(), zero, 1));
    }

    private static Launch launchWith(String retryStepsJson) {
        String steps = retryStepsJson == null ? "" : ",\"retry_steps\":" + retryStepsJson;
        DecodedCommand d = decode("{\"v\":1,\"type\":\"launch\",\"activation_id\":\"a1\",\"launch_setting\":\"x.1\","
                + "\"agent\":\"echo\",\"kind\":\"stream\",\"fencing_token\":1,"
                + "\"retry\":{\"initial_delay\":\"100ms\",\"multiplier\":2.0,\"max_delay\":\"1s\",\"max_deliveries\":5}"
                + steps + "}");
        return (Launch) assertInstanceOf(DecodedCommand.Understood.class, d).command();
    }

    @Test
    void retryStepsDecideTheDelayWhenPresentElseThePolicysFormula() {
        Launch l = launchWith("[{\"attempt\":1,\"delay_ms\":150},{\"attempt\":3,\"delay_ms\":400}]");
        assertEquals(List.of(RetryStep.of(1, 150), RetryStep.of(3, 400)), l.retrySteps());
        long[] want = {150, 150, 150, 400, 400, 400};
        for (int a = 0; a <= 5; a++) {
            assertEquals(Duration.ofMillis(want[a]), l.retryDelay(a), "attempt " + a + " (0 counts as 1)");
        }
        assertEquals(Duration.ofMillis(400), l.retryDelay(0xFFFF_FFFFL));
        // Smaller than every step: the first step.
        Launch late = launchWith("[{\"attempt\":2,\"delay_ms\":700},{\"attempt\":4,\"delay_ms\":900}]");
        assertEquals(Duration.ofMillis(700), late.retryDelay(1));
        assertEquals(Duration.ofMillis(700), late.retryDelay(-3));
        assertEquals(Duration.ofMillis(700), late.retryDelay(3));
        assertEquals(Duration.ofMillis(900), late.retryDelay(4));
        // A ladder out of order: the last step, in the ladder's order, whose attempt is ≤ a.
        Launch unordered = launchWith("[{\"attempt\":1,\"delay_ms\":100},{\"attempt\":5,\"delay_ms\":500},"
                + "{\"attempt\":3,\"delay_ms\":300}]");
        assertEquals(Duration.ofMillis(100), unordered.retryDelay(2));
        assertEquals(Duration.ofMillis(300), unordered.retryDelay(4));
        assertEquals(Duration.ofMillis(300), unordered.retryDelay(9));
        // Absent, empty or null: the policy's formula (100 ms × 2^(a-1), at most 1 s).
        for (String none : java.util.Arrays.asList(null, "[]", "null")) {
            Launch f = launchWith(none);
            assertEquals(List.of(), f.retrySteps(), String.valueOf(none));
            assertEquals(Duration.ofMillis(100), f.retryDelay(1));
            assertEquals(Duration.ofMillis(400), f.retryDelay(3));
            assertEquals(Duration.ofSeconds(1), f.retryDelay(9));
        }
        assertEquals(java.util.Optional.empty(), RetryMath.stepDelay(List.of(), 1));
        assertEquals(java.util.Optional.empty(), RetryMath.stepDelay(null, 1));
        // Unknown fields inside a step are ignored; a step without its delay is a launch not understood.
        assertEquals(List.of(RetryStep.of(1, 250)),
                launchWith("[{\"attempt\":1,\"delay_ms\":250,\"jitter\":{\"x\":1}}]").retrySteps());
        for (String bad : List.of("[{\"attempt\":1}]", "[{\"attempt\":-1,\"delay_ms\":5}]",
                "[{\"attempt\":1,\"delay_ms\":\"1s\"}]", "{\"attempt\":1}")) {
            DecodedCommand d = decode("{\"v\":3,\"type\":\"launch\",\"activation_id\":\"a1\",\"launch_setting\":\"x\","
                    + "\"agent\":\"e\",\"kind\":\"scheduled\",\"fencing_token\":2,\"retry_steps\":" + bad + "}");
            DecodedCommand.LaunchNotUnderstood n = assertInstanceOf(DecodedCommand.LaunchNotUnderstood.class, d, bad);
            assertTrue(n.reason().contains("retry_steps"), n.reason());
        }
    }

    @Test
    void aLaunchWritesItsRetryStepsOnlyWhenItHasSome() throws Exception {
        Launch with = launchWith("[{\"attempt\":1,\"delay_ms\":150}]");
        JsonNode w = WireCodec.mapper().readTree(WireCodec.encodeCommand(with));
        assertEquals("[{\"attempt\":1,\"delay_ms\":150}]", w.get("retry_steps").toString());
        JsonNode without = WireCodec.mapper().readTree(WireCodec.encodeCommand(launchWith(null)));
        assertFalse(without.has("retry_steps"));
    }

    @Test
    void theLadderOfAPolicyIsTheManagers() {
        assertEquals(List.of(RetryStep.of(1, 1000), RetryStep.of(2, 2000), RetryStep.of(3, 4000), RetryStep.of(4, 5000)),
                RetryMath.retryLadder(policy(1000, 2.0, 5000)));
        assertEquals(List.of(RetryStep.of(1, 5000)), RetryMath.retryLadder(policy(10_000, 2.0, 5000)));
        assertEquals(List.of(RetryStep.of(1, 1000)), RetryMath.retryLadder(policy(1000, 1.0, 300_000)));
        List<RetryStep> slow = RetryMath.retryLadder(policy(1000, 1.01, 3_600_000));
        assertEquals(RetryMath.MAX_WAIT_LEVELS + 1, slow.size(), "a ladder stops after MAX_WAIT_LEVELS + 1 rungs");
    }

    @Test
    void namesAreThoseOfTheRustSide() {
        Names n = new Names("t-1");
        assertEquals("t-1.control", n.controlExchange());
        assertEquals("t-1.node.billing.h1", n.nodeQueue("billing", "h1"));
        assertEquals("node.billing.h1", n.nodeRoutingKey("billing", "h1"));
        assertEquals("t-1.dead-letters", n.deadLetterQueue());
        assertEquals("t-1.dq.jobs", n.sharedQueue("jobs"));
        assertEquals("t-1.dq.jobs.unrouted", n.unrouted("jobs"));
        assertEquals("t-1.wait.1500ms", n.wait(Duration.ofMillis(1500)));
        assertEquals(java.util.TreeSet.class, io.agentmanager.client.topology.Layout.waitDelays(
                RetryPolicy.defaults(), DeadLetterSettings.defaults()).getClass());
        assertEquals(1_000L, io.agentmanager.client.topology.Layout.waitDelays(
                RetryPolicy.defaults(), DeadLetterSettings.defaults()).first());
    }
}
