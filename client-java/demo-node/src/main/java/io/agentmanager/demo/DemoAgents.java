package io.agentmanager.demo;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import io.agentmanager.client.AgentException;
import io.agentmanager.client.Context;
import io.agentmanager.client.Message;
import io.agentmanager.client.MessageAgent;
import io.agentmanager.client.StandaloneAgent;
import io.agentmanager.client.TemporarilyUnavailableException;
import io.agentmanager.client.wire.HumanDuration;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The demo agents of {@code client-lib/src/bin/demo-node.rs}, with the same behaviour. */
final class DemoAgents {
    private static final Logger LOG = LoggerFactory.getLogger(DemoAgents.class);

    private DemoAgents() {
    }

    /** {@code echo}: logs each message and succeeds. */
    static final class Echo implements MessageAgent<JsonNode> {
        @Override
        public void handle(Context<JsonNode> ctx, Message msg) {
            LOG.info("echo launch_setting={} attempt={} body={}", ctx.launchSetting(), msg.attempt(), msg.text());
        }
    }

    /**
     * Parameters of {@code flaky}: rates as numbers or decimal strings.
     *
     * @param temporaryRate share of temporary failures
     * @param failureRate share of failures
     */
    record FlakyParams(@JsonProperty("temporary_rate") JsonNode temporaryRate,
            @JsonProperty("failure_rate") JsonNode failureRate) {
    }

    static double rate(JsonNode v) {
        if (v == null) {
            return 0.0;
        }
        if (v.isNumber()) {
            return v.asDouble();
        }
        if (v.isTextual()) {
            try {
                return Double.parseDouble(v.textValue());
            } catch (NumberFormatException e) {
                return 0.0;
            }
        }
        return 0.0;
    }

    /** {@code flaky}: fails temporarily or for good at the rates of its parameters. */
    static final class Flaky implements MessageAgent<FlakyParams> {
        @Override
        public void handle(Context<FlakyParams> ctx, Message msg) throws AgentException {
            double roll = ThreadLocalRandom.current().nextDouble();
            double temporary = rate(ctx.params().temporaryRate());
            if (roll < temporary) {
                throw new TemporarilyUnavailableException("the dice said: later");
            }
            if (roll < temporary + rate(ctx.params().failureRate())) {
                throw new AgentException("FlakyFailure", "the dice said: no");
            }
        }
    }

    /** {@code poison}: fails on messages whose body contains {@code poison}. */
    static final class Poison implements MessageAgent<JsonNode> {
        @Override
        public void handle(Context<JsonNode> ctx, Message msg) throws AgentException {
            String body = msg.text();
            if (body.contains("poison")) {
                throw new AgentException("Poisoned", "the message contains poison");
            }
            LOG.info("passed launch_setting={} attempt={} body={}", ctx.launchSetting(), msg.attempt(), body);
        }
    }

    /**
     * Parameters of {@code sleep}.
     *
     * @param duration how long to sleep
     */
    record SleepParams(@JsonProperty("duration") HumanDuration duration) {
    }

    /** {@code sleep}: sleeps, reporting progress each second; honours interruption. */
    static final class Sleep implements StandaloneAgent<SleepParams> {
        @Override
        public void run(Context<SleepParams> ctx) throws InterruptedException {
            Duration total = ctx.params().duration().value();
            long started = System.nanoTime();
            while (true) {
                Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
                if (elapsed.compareTo(total) >= 0) {
                    return;
                }
                Duration left = total.minus(elapsed);
                Thread.sleep(Math.max(1, Math.min(left.toMillis(), 1_000)));
                long done = Duration.ofNanos(System.nanoTime() - started).toSeconds();
                ctx.progress(done, total.toSeconds(), "slept " + done + "s");
            }
        }
    }

    /** {@code fail}: always fails. */
    static final class Fail implements StandaloneAgent<JsonNode> {
        @Override
        public void run(Context<JsonNode> ctx) throws AgentException {
            throw new AgentException("DemoFailure", "the fail agent always fails", "by design", null);
        }
    }
}
