package io.agentmanager.demo;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentmanager.client.AgentException;
import io.agentmanager.client.AgentSpec;
import io.agentmanager.client.Context;
import io.agentmanager.client.Message;
import io.agentmanager.client.MessageAgent;
import io.agentmanager.client.NodeBuilder;
import io.agentmanager.client.StandaloneAgent;
import io.agentmanager.client.TemporarilyUnavailableException;
import io.agentmanager.client.wire.HumanDuration;
import io.agentmanager.client.wire.ParamSpec;
import io.agentmanager.client.wire.WireCodec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scripted agents of the node conformance suite (docs/conformance.md), registered when
 * {@code AM_RECORD} names a file: {@code script} (standalone) and {@code script-messages}
 * (messages) do what the suite scripts, a run by its parameters and a data message by its body,
 * and append what they saw to that file, one JSON object per line (each line one write to a
 * file opened for appending, so nothing is buffered in the process).
 */
final class ScriptAgents implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ScriptAgents.class);
    /** The variable naming the record file. */
    static final String RECORD_VARIABLE = "AM_RECORD";
    /** The standalone agent's id. */
    static final String SCRIPT = "script";
    /** The messages agent's id. */
    static final String SCRIPT_MESSAGES = "script-messages";

    private final Path path;
    private final FileChannel file;

    private ScriptAgents(Path path, FileChannel file) {
        this.path = path;
        this.file = file;
    }

    /**
     * Opens (creates, appends to) the record file.
     *
     * @param path the file {@code AM_RECORD} names
     * @return the agents, not yet registered
     * @throws IllegalArgumentException naming the variable when the file cannot be opened
     */
    static ScriptAgents open(Path path) {
        try {
            FileChannel file = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND);
            return new ScriptAgents(path, file);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException(RECORD_VARIABLE + ": cannot open `" + path + "`: " + e, e);
        }
    }

    /**
     * Registers {@code script} and {@code script-messages} on {@code builder}.
     *
     * @param builder the node's builder
     * @return the builder
     */
    NodeBuilder register(NodeBuilder builder) {
        return builder
                .standalone(AgentSpec.of(SCRIPT).title("Script")
                        .param(ParamSpec.of("sleep", "duration").withDefault("0s"))
                        .param(ParamSpec.of("fail", "string"))
                        .param(ParamSpec.of("progress", "boolean")),
                        JsonNode.class, new Script())
                .messages(AgentSpec.of(SCRIPT_MESSAGES).title("Script messages"), JsonNode.class,
                        new ScriptMessages());
    }

    /** The record file. */
    Path path() {
        return path;
    }

    @Override
    public void close() {
        try {
            file.close();
        } catch (IOException e) {
            LOG.warn("cannot close the record file {}: {}", path, e.toString());
        }
    }

    /** Appends one line: one write of the whole line, under a lock (one writer at a time). */
    void record(ObjectNode line) {
        // JsonNode.toString() is the node as JSON (Jackson 2.10 and later).
        byte[] bytes = (line.toString() + "\n").getBytes(StandardCharsets.UTF_8);
        synchronized (file) {
            try {
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                while (buffer.hasRemaining()) {
                    file.write(buffer);
                }
            } catch (IOException e) {
                LOG.error("cannot append to the record file {}: {}", path, e.toString());
            }
        }
    }

    private static ObjectNode line(String agent) {
        ObjectNode line = WireCodec.mapper().createObjectNode();
        line.put("agent", agent);
        return line;
    }

    // -------------------------------------------------------------------------------------
    // script

    /** What a {@code script} run was asked to do. */
    record ScriptParams(Duration sleep, String fail, boolean progress) {

        /** Reads the parameters as the agent received them (the schema's default applied). */
        static ScriptParams of(JsonNode params) throws AgentException {
            try {
                JsonNode sleep = params.get("sleep");
                Duration d = sleep == null || sleep.isNull() ? Duration.ZERO : HumanDuration.fromJson(sleep).value();
                JsonNode fail = params.get("fail");
                if (fail != null && !fail.isNull() && !fail.isTextual()) {
                    throw new IllegalArgumentException("`fail` is an error type (text), not " + fail);
                }
                JsonNode progress = params.get("progress");
                if (progress != null && !progress.isNull() && !progress.isBoolean()) {
                    throw new IllegalArgumentException("`progress` is a boolean, not " + progress);
                }
                return new ScriptParams(d, fail == null || fail.isNull() ? null : fail.textValue(),
                        progress != null && progress.booleanValue());
            } catch (IllegalArgumentException e) {
                throw new AgentException("InvalidParameters", "parameters do not fit: " + e.getMessage());
            }
        }
    }

    /**
     * {@code script}: sleeps {@code sleep} (cancellably), reports progress {@code 1/1 "slept"}
     * when {@code progress}, fails with {@code fail} as its error type when given; records its
     * start and its end.
     */
    final class Script implements StandaloneAgent<JsonNode> {
        @Override
        public void run(Context<JsonNode> ctx) throws Exception {
            ScriptParams p = ScriptParams.of(ctx.params());
            ObjectNode start = line(SCRIPT);
            start.put("event", "start");
            start.put("activation", ctx.activationId());
            start.put("launch_setting", ctx.launchSetting());
            start.set("params", ctx.params());
            record(start);
            String outcome = "failed";
            try {
                sleep(ctx, p.sleep());
                if (p.progress()) {
                    ctx.progress(1L, 1L, "slept");
                }
                if (p.fail() != null) {
                    if (ctx.isCancelled()) {
                        // The node reports a cancelled run interrupted whatever it throws.
                        throw new InterruptedException("cancelled");
                    }
                    throw new AgentException(p.fail(), "scripted failure");
                }
                outcome = "succeeded";
            } catch (InterruptedException e) {
                outcome = "interrupted";
                throw e;
            } finally {
                ObjectNode end = line(SCRIPT);
                end.put("event", "end");
                end.put("activation", ctx.activationId());
                end.put("outcome", outcome);
                record(end);
            }
        }

        /**
         * Sleeps; an interrupt, stop, maximum run time or graceful stop ({@code Node.close()})
         * ends it at once: each cancels the run, which interrupts this thread.
         */
        private void sleep(Context<JsonNode> ctx, Duration sleep) throws InterruptedException {
            long deadline = System.nanoTime() + sleep.toNanos();
            while (true) {
                if (ctx.isCancelled()) {
                    throw new InterruptedException("cancelled");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                // The 100 ms cap re-checks the cancellation flag should the interrupt be missed.
                TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
            }
        }
    }

    // -------------------------------------------------------------------------------------
    // script-messages

    /**
     * What a data message asks of {@code script-messages}: {@code {"id", "fail", "error_type",
     * "unavailable", "hold"}}.
     */
    record MessageScript(String id, long fail, String errorType, long unavailable, Duration hold) {

        /**
         * Reads a body; unknown fields are ignored, a missing or null optional field takes its
         * default.
         *
         * @throws IllegalArgumentException saying why the body is not a script
         */
        static MessageScript of(byte[] body) {
            JsonNode tree;
            try {
                tree = WireCodec.mapper().readTree(body);
            } catch (IOException e) {
                String why = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
                throw new IllegalArgumentException("the body is not JSON: " + why, e);
            }
            if (tree == null || !tree.isObject()) {
                throw new IllegalArgumentException("the body is not a JSON object");
            }
            JsonNode id = tree.get("id");
            if (id == null || !id.isTextual()) {
                throw new IllegalArgumentException("missing field `id` (text)");
            }
            JsonNode errorType = tree.get("error_type");
            if (errorType != null && !errorType.isNull() && !errorType.isTextual()) {
                throw new IllegalArgumentException("`error_type` is text, not " + errorType);
            }
            JsonNode hold = tree.get("hold");
            return new MessageScript(id.textValue(), count(tree, "fail"),
                    errorType == null || errorType.isNull() ? "Scripted" : errorType.textValue(),
                    count(tree, "unavailable"),
                    hold == null || hold.isNull() ? Duration.ZERO : HumanDuration.fromJson(hold).value());
        }

        private static long count(JsonNode tree, String field) {
            JsonNode v = tree.get(field);
            if (v == null || v.isNull()) {
                return 0;
            }
            if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < 0) {
                throw new IllegalArgumentException("`" + field + "` is a count, not " + v);
            }
            return v.longValue();
        }
    }

    /**
     * {@code script-messages}: records every delivery, then answers "temporarily unavailable"
     * while the message's answers so far are fewer than {@code unavailable}, else fails while its
     * attempt is at most {@code fail}, else holds {@code hold} deaf to cancellation (a stuck
     * handler) and succeeds. A body that is no such object fails with error type
     * {@code Unreadable}.
     */
    final class ScriptMessages implements MessageAgent<JsonNode> {
        @Override
        public void handle(Context<JsonNode> ctx, Message msg) throws Exception {
            MessageScript script = null;
            String unreadable = null;
            try {
                script = MessageScript.of(msg.body());
            } catch (IllegalArgumentException e) {
                unreadable = e.getMessage();
            }
            ObjectNode seen = line(SCRIPT_MESSAGES);
            seen.put("activation", ctx.activationId());
            seen.put("launch_setting", ctx.launchSetting());
            if (script == null) {
                seen.putNull("id");
            } else {
                seen.put("id", script.id());
            }
            seen.put("attempt", msg.attempt());
            seen.put("unavailable", msg.unavailable());
            // Delivered before in any way (a retry, an earlier "temporarily unavailable", the
            // broker's redelivery), as the Rust node's Message::redelivered.
            seen.put("redelivered", msg.redelivered());
            record(seen);
            if (script == null) {
                throw new AgentException("Unreadable", unreadable);
            }
            if (msg.unavailable() < script.unavailable()) {
                throw new TemporarilyUnavailableException("scripted unavailability");
            }
            if (msg.attempt() <= script.fail()) {
                throw new AgentException(script.errorType(), "scripted failure");
            }
            hold(script.hold());
        }

        /** Sleeps {@code hold} whatever happens: interruptions are noted and restored after. */
        private void hold(Duration hold) {
            long deadline = System.nanoTime() + hold.toNanos();
            boolean interrupted = false;
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.sleep(left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
