package io.agentmanager.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentmanager.client.topology.Layout;
import io.agentmanager.client.wire.ActivationEvent;
import io.agentmanager.client.wire.ActivationReport;
import io.agentmanager.client.wire.ActivationResult;
import io.agentmanager.client.wire.ActivationCounters;
import io.agentmanager.client.wire.BreakerTripped;
import io.agentmanager.client.wire.ClassifierValue;
import io.agentmanager.client.wire.Concurrency;
import io.agentmanager.client.wire.Counters;
import io.agentmanager.client.wire.DataQueueKind;
import io.agentmanager.client.wire.DeadLetterPolicy;
import io.agentmanager.client.wire.DeadLetterSettings;
import io.agentmanager.client.wire.DecodedCommand;
import io.agentmanager.client.wire.ErrorSummary;
import io.agentmanager.client.wire.FailureReport;
import io.agentmanager.client.wire.Heartbeat;
import io.agentmanager.client.wire.HumanDuration;
import io.agentmanager.client.wire.InputKind;
import io.agentmanager.client.wire.Interrupt;
import io.agentmanager.client.wire.Launch;
import io.agentmanager.client.wire.LaunchKind;
import io.agentmanager.client.wire.Names;
import io.agentmanager.client.wire.OverlapPolicy;
import io.agentmanager.client.wire.ParamSpec;
import io.agentmanager.client.wire.Publication;
import io.agentmanager.client.wire.PublishedAgent;
import io.agentmanager.client.wire.ReplayProcessed;
import io.agentmanager.client.wire.ReplayToken;
import io.agentmanager.client.wire.RetryMath;
import io.agentmanager.client.wire.RetryPolicy;
import io.agentmanager.client.wire.RetryStep;
import io.agentmanager.client.wire.RunningLaunchSetting;
import io.agentmanager.client.wire.Stop;
import io.agentmanager.client.wire.Subscription;
import io.agentmanager.client.wire.ToManager;
import io.agentmanager.client.wire.ToNode;
import io.agentmanager.client.wire.WireCodec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The repository's published contract ({@code protocol/} at the repository's root, generated
 * from the Rust wire types) read by the Java codec, without a broker: every command example
 * decodes to its values (also with a field of a later release in every object and {@code v}
 * 99), every report example is what the Java encoder writes for the same values, the retry
 * ladders give the same delays, and durations read and write as the tables say.
 *
 * <p>The folder comes from the system property {@code protocol.dir} (set by this module's
 * surefire configuration), else the nearest {@code protocol/schemas} above the working directory
 * or the test classes.
 */
class ProtocolGoldenTest {
    private static final ObjectMapper JSON = WireCodec.mapper();
    private static final Set<String> COMMANDS = Set.of("launch", "stop", "interrupt");
    private static final Set<String> REPORTS = Set.of("publication", "heartbeat", "activation", "failure",
            "breaker-tripped", "replay-processed");
    /** Objects whose keys are data, read whole: never given an unknown field. */
    private static final Set<String> COMMAND_FREE_FORM = Set.of("parameters", "headers");
    private static final Set<String> REPORT_FREE_FORM = Set.of("default", "min", "max");

    // ---------------------------------------------------------------------------------------
    // Where the contract is

    static Path protocolDir() {
        List<String> tried = new ArrayList<>();
        String prop = System.getProperty("protocol.dir");
        if (prop != null && !prop.isBlank()) {
            Path p = Paths.get(prop).toAbsolutePath().normalize();
            if (Files.isDirectory(p.resolve("schemas"))) {
                return p;
            }
            tried.add("-Dprotocol.dir=" + p);
        }
        List<Path> starts = new ArrayList<>();
        starts.add(Paths.get(System.getProperty("user.dir")).toAbsolutePath());
        try {
            starts.add(Paths.get(ProtocolGoldenTest.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
        } catch (java.net.URISyntaxException | RuntimeException e) {
            // No code source: the working directory only.
        }
        for (Path start : starts) {
            for (Path dir = start; dir != null; dir = dir.getParent()) {
                if (Files.isDirectory(dir.resolve("protocol").resolve("schemas"))) {
                    return dir.resolve("protocol").normalize();
                }
            }
            tried.add("every parent of " + start);
        }
        fail("the repository's protocol/ folder (with protocol/schemas) was not found; tried " + tried
                + ". Run the tests inside the repository, or set -Dprotocol.dir=<repository>/protocol");
        return null;
    }

    private static JsonNode read(Path file) {
        try {
            return JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw new AssertionError("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static List<Path> examples() throws IOException {
        Path dir = protocolDir().resolve("examples");
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> out = files.filter(p -> p.toString().endsWith(".json")).sorted().toList();
            assertFalse(out.isEmpty(), "no examples in " + dir);
            return out;
        }
    }

    private static String type(JsonNode example) {
        return example.path("type").asText("");
    }

    @Test
    void everyExampleIsACommandOrAReportAndEveryTypeHasOne() throws IOException {
        Set<String> seen = new TreeSet<>();
        for (Path p : examples()) {
            String t = type(read(p));
            assertTrue(COMMANDS.contains(t) || REPORTS.contains(t),
                    p.getFileName() + ": type `" + t + "` is unknown to the Java client");
            seen.add(t);
        }
        Set<String> all = new TreeSet<>(COMMANDS);
        all.addAll(REPORTS);
        assertEquals(all, seen, "an example of every message type");
    }

    // ---------------------------------------------------------------------------------------
    // Commands: decoded by the Java codec

    /** A copy with {@code x_later_release} in every object but the free-form ones, and v 99. */
    static JsonNode laterRelease(JsonNode example, Set<String> freeForm) {
        JsonNode copy = example.deepCopy();
        addUnknown(copy, freeForm);
        ((ObjectNode) copy).put("v", 99);
        return copy;
    }

    private static void addUnknown(JsonNode node, Set<String> freeForm) {
        if (node.isObject()) {
            ObjectNode obj = (ObjectNode) node;
            for (Iterator<Map.Entry<String, JsonNode>> it = obj.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                if (!freeForm.contains(e.getKey())) {
                    addUnknown(e.getValue(), freeForm);
                }
            }
            ObjectNode later = JSON.createObjectNode();
            later.putObject("nested").putArray("deeper").add(1).add(2);
            obj.set("x_later_release", later);
        } else if (node.isArray()) {
            node.forEach(item -> addUnknown(item, freeForm));
        }
    }

    private static ToNode decodeCommand(JsonNode message, String what) throws IOException {
        DecodedCommand d = WireCodec.decodeCommand(JSON.writeValueAsBytes(message));
        return assertInstanceOf(DecodedCommand.Understood.class, d, what + ": " + d).command();
    }

    @TestFactory
    Stream<DynamicTest> everyCommandExampleDecodesToItsValues() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        for (Path p : examples()) {
            JsonNode example = read(p);
            if (!COMMANDS.contains(type(example))) {
                continue;
            }
            String name = p.getFileName().toString();
            tests.add(DynamicTest.dynamicTest(name, () -> {
                ToNode decoded = decodeCommand(example, name);
                assertCommand(example, decoded, name);
                // What the Java codec writes back is the example (the manager's own bytes).
                assertEquals(example, JSON.readTree(WireCodec.encodeCommand(decoded)), name + " written back");
            }));
            tests.add(DynamicTest.dynamicTest(name + " of a later release", () -> {
                JsonNode later = laterRelease(example, COMMAND_FREE_FORM);
                ToNode decoded = decodeCommand(later, name + " (later release)");
                assertCommand(example, decoded, name + " (later release)");
                assertEquals(example, JSON.readTree(WireCodec.encodeCommand(decoded)),
                        name + " (later release) written back without what it does not know");
            }));
        }
        assertFalse(tests.isEmpty(), "no command examples");
        return tests.stream();
    }

    private static String text(JsonNode obj, String field) {
        JsonNode v = obj.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    private static Duration duration(JsonNode obj, String field) {
        String t = text(obj, field);
        return t == null ? null : HumanDuration.parse(t).value();
    }

    private static Duration value(HumanDuration d) {
        return d == null ? null : d.value();
    }

    /** Every field of the example is one the Java model reads. */
    private static void onlyKnownFields(JsonNode obj, String where, String... known) {
        Set<String> k = Set.of(known);
        obj.fieldNames().forEachRemaining(f -> assertTrue(k.contains(f) || f.equals("x_later_release"),
                where + ": field `" + f + "` is not in the Java model"));
    }

    private static void assertCommand(JsonNode ex, ToNode decoded, String name) {
        switch (type(ex)) {
            case "launch" -> assertLaunch(ex, assertInstanceOf(Launch.class, decoded, name), name);
            case "stop" -> {
                onlyKnownFields(ex, name, "v", "type", "launch_setting", "reason");
                Stop s = assertInstanceOf(Stop.class, decoded, name);
                assertEquals(text(ex, "launch_setting"), s.launchSetting(), name);
                assertEquals(ex.path("reason").asText(""), s.reason(), name);
            }
            case "interrupt" -> {
                onlyKnownFields(ex, name, "v", "type", "activation_id", "reason", "up_to_token");
                Interrupt i = assertInstanceOf(Interrupt.class, decoded, name);
                assertEquals(text(ex, "activation_id"), i.activationId(), name);
                assertEquals(ex.path("reason").asText(""), i.reason(), name);
                assertEquals(ex.hasNonNull("up_to_token") ? ex.get("up_to_token").longValue() : null,
                        i.upToToken(), name);
            }
            default -> fail(name + ": not a command");
        }
    }

    private static void assertLaunch(JsonNode ex, Launch l, String name) {
        onlyKnownFields(ex, name, "v", "type", "activation_id", "launch_setting", "agent", "kind", "parameters",
                "fencing_token", "overlap", "retry", "retry_steps", "unavailable_for", "dead_letter",
                "failure_threshold", "subscription", "idle_timeout", "max_run_time");
        assertEquals(text(ex, "activation_id"), l.activationId(), name + " activation_id");
        assertEquals(text(ex, "launch_setting"), l.launchSetting(), name + " launch_setting");
        assertEquals(text(ex, "agent"), l.agent(), name + " agent");
        assertEquals(LaunchKind.fromWord(text(ex, "kind")), l.kind(), name + " kind");
        assertEquals(ex.get("fencing_token").longValue(), l.fencingToken(), name + " fencing_token");
        assertEquals(ex.has("parameters") ? ex.get("parameters") : JSON.createObjectNode(), l.parameters(),
                name + " parameters");
        assertEquals(ex.has("overlap") ? OverlapPolicy.fromWord(text(ex, "overlap")) : OverlapPolicy.ALLOW,
                l.overlap(), name + " overlap");
        assertEquals(ex.has("failure_threshold") ? ex.get("failure_threshold").longValue()
                : Launch.DEFAULT_FAILURE_THRESHOLD, l.failureThreshold(), name + " failure_threshold");
        assertEquals(ex.has("unavailable_for") ? duration(ex, "unavailable_for") : Duration.ofDays(1),
                l.unavailableFor().value(), name + " unavailable_for");
        assertEquals(duration(ex, "max_run_time"), value(l.maxRunTime()), name + " max_run_time");
        assertEquals(duration(ex, "idle_timeout"), value(l.idleTimeout()), name + " idle_timeout");

        JsonNode retry = ex.path("retry");
        onlyKnownFields(retry, name + " retry", "initial_delay", "multiplier", "max_delay", "max_deliveries");
        RetryPolicy r = l.retry();
        assertEquals(retry.has("initial_delay") ? duration(retry, "initial_delay") : Duration.ofSeconds(1),
                r.initialDelay().value(), name + " retry.initial_delay");
        assertEquals(retry.has("multiplier") ? retry.get("multiplier").doubleValue() : 2.0, r.multiplier(),
                name + " retry.multiplier");
        assertEquals(retry.has("max_delay") ? duration(retry, "max_delay") : Duration.ofMinutes(5),
                r.maxDelay().value(), name + " retry.max_delay");
        assertEquals(retry.has("max_deliveries") ? retry.get("max_deliveries").longValue() : 10L,
                r.maxDeliveries(), name + " retry.max_deliveries");

        List<RetryStep> steps = new ArrayList<>();
        for (JsonNode s : ex.path("retry_steps")) {
            onlyKnownFields(s, name + " retry_steps[]", "attempt", "delay_ms");
            steps.add(RetryStep.of(s.get("attempt").longValue(), s.get("delay_ms").longValue()));
        }
        assertEquals(steps, l.retrySteps(), name + " retry_steps");
        for (int n = 1; n <= steps.size() + 3; n++) {
            Duration want = RetryMath.retryDelay(r, n);
            if (!steps.isEmpty()) {
                RetryStep rung = steps.get(0);
                for (RetryStep s : steps) {
                    if (s.attempt() <= n) {
                        rung = s;
                    }
                }
                want = Duration.ofMillis(rung.delayMs());
            }
            assertEquals(want, l.retryDelay(n), name + " delay before retry " + n);
        }

        JsonNode dl = ex.path("dead_letter");
        onlyKnownFields(dl, name + " dead_letter", "policy", "park_cooldown", "notify_threshold", "forward_to");
        DeadLetterSettings d = l.deadLetter();
        assertEquals(dl.has("policy") ? DeadLetterPolicy.fromWord(text(dl, "policy")) : DeadLetterPolicy.DEAD_LETTER,
                d.policy(), name + " dead_letter.policy");
        assertEquals(dl.has("park_cooldown") ? duration(dl, "park_cooldown") : Duration.ofMinutes(10),
                d.parkCooldown().value(), name + " dead_letter.park_cooldown");
        assertEquals(dl.hasNonNull("notify_threshold") ? dl.get("notify_threshold").longValue() : null,
                d.notifyThreshold(), name + " dead_letter.notify_threshold");
        assertEquals(text(dl, "forward_to"), d.forwardTo(), name + " dead_letter.forward_to");

        JsonNode sub = ex.get("subscription");
        if (sub == null || sub.isNull()) {
            assertNull(l.subscription(), name + " subscription");
            return;
        }
        onlyKnownFields(sub, name + " subscription", "data_queue", "address", "kind", "filter", "delay");
        Subscription s = l.subscription();
        assertEquals(text(sub, "data_queue"), s.dataQueue(), name + " subscription.data_queue");
        assertEquals(text(sub, "address"), s.address(), name + " subscription.address");
        assertEquals(DataQueueKind.fromWord(text(sub, "kind")), s.kind(), name + " subscription.kind");
        assertEquals(duration(sub, "delay"), value(s.delay()), name + " subscription.delay");
        JsonNode filter = sub.path("filter");
        onlyKnownFields(filter, name + " subscription.filter", "headers");
        Map<String, String> headers = new TreeMap<>();
        filter.path("headers").fields().forEachRemaining(e -> headers.put(e.getKey(), e.getValue().asText()));
        assertEquals(headers, s.filter().headers(), name + " subscription.filter.headers");
    }

    // ---------------------------------------------------------------------------------------
    // Reports: written by the Java encoder

    @TestFactory
    Stream<DynamicTest> everyReportExampleIsWhatTheJavaEncoderWrites() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        for (Path p : examples()) {
            JsonNode example = read(p);
            if (!REPORTS.contains(type(example))) {
                continue;
            }
            String name = p.getFileName().toString();
            tests.add(DynamicTest.dynamicTest(name, () -> {
                ToManager built = build(example);
                JsonNode written = JSON.readTree(WireCodec.encode(built));
                assertEquals(example, written, name + ": the Java encoder writes\n" + written + "\ninstead of\n" + example);
            }));
            tests.add(DynamicTest.dynamicTest(name + " read back (also of a later release)", () -> {
                ToManager decoded = WireCodec.decodeReport(JSON.writeValueAsBytes(example));
                assertEquals(example, JSON.readTree(WireCodec.encode(decoded)), name);
                ToManager later = WireCodec.decodeReport(JSON.writeValueAsBytes(laterRelease(example, REPORT_FREE_FORM)));
                assertEquals(example, JSON.readTree(WireCodec.encode(later)), name + " (later release)");
            }));
        }
        assertFalse(tests.isEmpty(), "no report examples");
        return tests.stream();
    }

    private static Instant at(JsonNode ex) {
        return WireCodec.parseTime(ex.get("at").asText());
    }

    private static Long longOrNull(JsonNode obj, String field) {
        return obj.hasNonNull(field) ? obj.get(field).longValue() : null;
    }

    private static Counters counters(JsonNode c) {
        onlyKnownFields(c, "counters", "processed", "failed", "retried", "dead_lettered");
        return new Counters(c.get("processed").longValue(), c.get("failed").longValue(),
                c.get("retried").longValue(), c.get("dead_lettered").longValue());
    }

    /** The report of the example's type, built with the Java model from the example's values. */
    private static ToManager build(JsonNode ex) {
        String app = text(ex, "application");
        String host = text(ex, "host");
        return switch (type(ex)) {
            case "publication" -> publication(ex);
            case "heartbeat" -> {
                List<RunningLaunchSetting> running = new ArrayList<>();
                for (JsonNode r : ex.path("running")) {
                    List<String> activations = new ArrayList<>();
                    r.path("activations").forEach(a -> activations.add(a.asText()));
                    List<ActivationCounters> each = new ArrayList<>();
                    r.path("by_activation").forEach(a -> each.add(
                            new ActivationCounters(a.get("activation_id").asText(), counters(a.get("counters")))));
                    running.add(new RunningLaunchSetting(text(r, "launch_setting"), activations,
                            counters(r.get("counters")), each));
                }
                yield new Heartbeat(app, host, ex.get("capacity").longValue(), running,
                        ex.hasNonNull("load") ? ex.get("load").doubleValue() : null,
                        ex.get("dropped_reports").longValue(), ex.get("quarantined").longValue(), at(ex));
            }
            case "activation" -> new ActivationReport(app, host, text(ex, "activation_id"), text(ex, "launch_setting"),
                    ex.get("fencing_token").longValue(), event(ex.get("event")), at(ex));
            case "failure" -> new FailureReport(app, host, text(ex, "activation_id"), text(ex, "launch_setting"),
                    text(ex, "agent"), text(ex, "error_type"), text(ex, "message"), ex.path("details").asText(""),
                    text(ex, "data_message_id"), ex.get("attempt").longValue(), ex.get("temporary").booleanValue(),
                    text(ex, "disposition"), at(ex), text(ex, "report_id"),
                    ex.hasNonNull("replay") ? ReplayToken.parse(text(ex, "replay")) : null);
            case "breaker-tripped" -> {
                List<ErrorSummary> last = new ArrayList<>();
                ex.path("last_errors").forEach(e -> last.add(new ErrorSummary(text(e, "error_type"), text(e, "message"))));
                yield new BreakerTripped(app, host, text(ex, "activation_id"), text(ex, "launch_setting"),
                        ex.get("consecutive_failures").longValue(), ex.get("same_type_failures").longValue(), last,
                        at(ex));
            }
            case "replay-processed" -> new ReplayProcessed(app, host, text(ex, "activation_id"),
                    text(ex, "launch_setting"), ReplayToken.parse(text(ex, "replay")), at(ex));
            default -> throw new AssertionError("not a report: " + type(ex));
        };
    }

    private static ActivationEvent event(JsonNode e) {
        return switch (e.get("event").asText()) {
            case "accepted" -> new ActivationEvent.Accepted();
            case "started" -> new ActivationEvent.Started();
            case "skipped" -> new ActivationEvent.Skipped(text(e, "reason"));
            case "progress" -> new ActivationEvent.Progress(longOrNull(e, "done"), longOrNull(e, "total"),
                    e.path("message").asText(""));
            case "finished" -> new ActivationEvent.Finished(ActivationResult.fromWord(text(e, "result")),
                    text(e, "error"), e.hasNonNull("counters") ? counters(e.get("counters")) : null);
            default -> throw new AssertionError("unknown event " + e);
        };
    }

    /** Through the node's own API: {@link AgentSpec}, {@link ParamSpec}, {@link Classifier}. */
    private static Publication publication(JsonNode ex) {
        List<PublishedAgent> agents = new ArrayList<>();
        for (JsonNode a : ex.path("agents")) {
            onlyKnownFields(a, "publication agent", "id", "title", "input", "parameters", "suggested_data_queue",
                    "suggested_concurrency", "suggested_overlap");
            AgentSpec spec = AgentSpec.of(text(a, "id")).title(a.path("title").asText(""));
            for (JsonNode p : a.path("parameters")) {
                onlyKnownFields(p, "publication parameter", "name", "title", "description", "type", "array",
                        "required", "default", "min", "max", "pattern");
                ParamSpec ps = ParamSpec.of(text(p, "name"), text(p, "type")).withTitle(p.path("title").asText(""))
                        .withDescription(p.path("description").asText(""));
                if (p.path("array").asBoolean(false)) {
                    ps = ps.asArray();
                }
                if (p.path("required").asBoolean(false)) {
                    ps = ps.asRequired();
                }
                if (p.hasNonNull("default")) {
                    ps = ps.withDefault(p.get("default"));
                }
                if (p.hasNonNull("min")) {
                    ps = ps.withMin(p.get("min"));
                }
                if (p.hasNonNull("max")) {
                    ps = ps.withMax(p.get("max"));
                }
                if (p.hasNonNull("pattern")) {
                    ps = ps.withPattern(text(p, "pattern"));
                }
                spec.param(ps);
            }
            if (a.hasNonNull("suggested_data_queue")) {
                spec.suggestDataQueue(text(a, "suggested_data_queue"));
            }
            if (a.hasNonNull("suggested_concurrency")) {
                spec.suggestConcurrency(Concurrency.fromWord(text(a, "suggested_concurrency")));
            }
            if (a.hasNonNull("suggested_overlap")) {
                spec.suggestOverlap(OverlapPolicy.fromWord(text(a, "suggested_overlap")));
            }
            agents.add(spec.publish(InputKind.fromWord(text(a, "input"))));
        }
        List<io.agentmanager.client.wire.PublishedClassifier> classifiers = new ArrayList<>();
        for (JsonNode c : ex.path("classifiers")) {
            Classifier classifier = Classifier.of(text(c, "name"), c.path("title").asText(""));
            c.path("values").forEach(v -> classifier.value(text(v, "code"), text(v, "label")));
            classifiers.add(classifier.publish());
        }
        onlyKnownFields(ex, "publication", "v", "type", "application", "host", "version", "capacity", "agents",
                "classifiers", "protocol");
        // The protocol a Java node announces: the constant NodeRuntime publishes, not the file's.
        return new Publication(text(ex, "application"), text(ex, "host"), ex.path("version").asText(""),
                ex.get("capacity").longValue(), agents, classifiers, WireCodec.NODE_PROTOCOL);
    }

    // ---------------------------------------------------------------------------------------
    // Retry ladders and durations

    @TestFactory
    Stream<DynamicTest> retryLaddersGiveTheSameDelays() {
        JsonNode golden = read(protocolDir().resolve("golden").resolve("retry-ladders.json"));
        ArrayNode ladders = (ArrayNode) golden.get("ladders");
        assertTrue(ladders.size() > 0, "no ladders");
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode ladder : ladders) {
            JsonNode policyJson = ladder.get("policy");
            tests.add(DynamicTest.dynamicTest("ladder " + policyJson, () -> {
                RetryPolicy policy = JSON.treeToValue(policyJson, RetryPolicy.class);
                List<RetryStep> steps = new ArrayList<>();
                for (JsonNode s : ladder.get("retry_steps")) {
                    steps.add(JSON.treeToValue(s, RetryStep.class));
                }
                JsonNode delays = ladder.get("delays_ms");
                for (int n = 1; n <= delays.size(); n++) {
                    long want = delays.get(n - 1).longValue();
                    assertEquals(want, RetryMath.retryDelay(policy, n).toMillis(), policyJson + ": retry " + n);
                    assertEquals(Duration.ofMillis(want), RetryMath.stepDelay(steps, n).orElseThrow(),
                            policyJson + ": retry " + n + " from retry_steps");
                }
                assertEquals(steps, RetryMath.retryLadder(policy), policyJson + ": the ladder");
                List<String> waits = new ArrayList<>();
                ladder.get("wait_queues").forEach(w -> waits.add(w.asText()));
                Names am = new Names(Names.DEFAULT_PREFIX);
                assertEquals(waits, steps.stream().map(s -> am.waitMillis(s.delayMs())).toList(),
                        policyJson + ": wait queues");
                assertEquals(new LinkedHashSet<>(steps.stream().map(RetryStep::delayMs).toList()),
                        new LinkedHashSet<>(Layout.waitDelays(policy, DeadLetterSettings.defaults())),
                        policyJson + ": the wait delays declared");
            }));
        }
        return tests.stream();
    }

    @Test
    void durationsReadAndWriteAsTheTableSays() {
        JsonNode golden = read(protocolDir().resolve("golden").resolve("durations.json"));
        assertTrue(golden.get("read").size() > 0 && golden.get("written").size() > 0, "empty duration tables");
        for (JsonNode r : golden.get("read")) {
            String text = r.get("text").asText();
            assertEquals(r.get("ms").longValue(), HumanDuration.parse(text).toMillis(), "read `" + text + "`");
            assertEquals(r.get("ms").longValue(), HumanDuration.fromJson(r.get("text")).toMillis(),
                    "read `" + text + "` as a JSON value");
        }
        for (JsonNode w : golden.get("written")) {
            long ms = w.get("ms").longValue();
            assertEquals(w.get("text").asText(), HumanDuration.ofMillis(ms).toString(), "write " + ms + " ms");
            assertEquals(w.get("text"), JSON.valueToTree(HumanDuration.ofMillis(ms)), "serialise " + ms + " ms");
            assertEquals(ms, HumanDuration.parse(w.get("text").asText()).toMillis(), "read back " + ms + " ms");
        }
    }
}
