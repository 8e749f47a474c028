package io.agentmanager.client;

import com.rabbitmq.client.AMQP;
import io.agentmanager.client.wire.FailureReport.Disposition;
import io.agentmanager.client.wire.Headers;
import io.agentmanager.client.wire.Launch;
import io.agentmanager.client.wire.WireCodec;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a message the agent failed on goes, each copy confirmed before the original is
 * acknowledged: back after its retry delay through the wait exchange of that delay (routing
 * key: the queue it came from), to the park sump, or to the dead-letter queue with every
 * {@code x-am-*} header. Headers as the Rust node writes them: integers as long, text and
 * times (RFC 3339, {@code +00:00}) as strings.
 */
final class FailedMessages {
    private static final Logger LOG = LoggerFactory.getLogger(FailedMessages.class);

    /** Where an "unavailable" answer sent the message, and the error to report for it. */
    record Unavailable(IOException sendError, String disposition, AgentError error) {
    }

    private final NodeRuntime node;
    private final ActivationRun run;
    private final Launch launch;

    FailedMessages(NodeRuntime node, ActivationRun run, Launch launch) {
        this.node = node;
        this.run = run;
        this.launch = launch;
    }

    private static Map<String, Object> headersOf(AMQP.BasicProperties props) {
        return props.getHeaders() == null ? new HashMap<>() : new HashMap<>(props.getHeaders());
    }

    private static AMQP.BasicProperties withHeaders(AMQP.BasicProperties props, Map<String, Object> headers) {
        return props.builder().headers(headers).deliveryMode(2).build();
    }

    /**
     * Retry: {@code x-am-attempt} = attempt + 1, to the wait exchange of its delay (the launch's
     * {@code retry_steps}, else the policy's formula: {@link Launch#retryDelay}).
     */
    void retry(MessageSession session, MessageSession.Delivery d, long attempt) throws IOException {
        Duration delay = launch.retryDelay(attempt);
        String wait = node.layout.names().wait(delay);
        Map<String, Object> headers = headersOf(d.properties());
        headers.put(Headers.ATTEMPT, attempt + 1);
        headers.putIfAbsent(Headers.FIRST_FAILURE, WireCodec.headerTime(Instant.now()));
        LOG.debug("message sent to retry in {} (next attempt {})", delay, attempt + 1);
        session.publishConfirmed(wait, session.queue, withHeaders(d.properties(), headers), d.body());
    }

    /** Park: a fresh round after the cool-down, marked so the next give-up is final. */
    void park(MessageSession session, MessageSession.Delivery d) throws IOException {
        Duration cooldown = launch.deadLetter().parkCooldown().value();
        Map<String, Object> headers = headersOf(d.properties());
        headers.remove(Headers.UNAVAILABLE_SINCE);
        headers.remove(Headers.UNAVAILABLE);
        String now = WireCodec.headerTime(Instant.now());
        headers.put(Headers.ATTEMPT, 1L);
        headers.put(Headers.PARKED, now);
        headers.putIfAbsent(Headers.FIRST_FAILURE, now);
        LOG.info("message parked for {}", cooldown);
        session.publishConfirmed(node.layout.names().wait(cooldown), session.queue,
                withHeaders(d.properties(), headers), d.body());
    }

    /** Dead letter: to {@code <prefix>.dead-letters} with every dead-letter header. */
    void deadLetter(MessageSession session, MessageSession.Delivery d, long attempt, AgentError err)
            throws IOException {
        String now = WireCodec.headerTime(Instant.now());
        Map<String, Object> headers = headersOf(d.properties());
        Object first = headers.get(Headers.FIRST_FAILURE);
        String firstText = first == null ? null : HeaderValues.text(first);
        headers.put(Headers.DL_DATA_QUEUE, launch.subscription().dataQueue());
        headers.put(Headers.DL_LAUNCH_SETTING, run.launchSetting);
        headers.put(Headers.DL_ERROR_TYPE, err.errorType());
        headers.put(Headers.DL_ERROR_MESSAGE, err.message());
        headers.put(Headers.FIRST_FAILURE, firstText == null ? now : firstText);
        headers.put(Headers.DL_LAST_FAILURE, now);
        headers.put(Headers.DL_HOST, node.host);
        headers.put(Headers.DL_QUEUE, session.queue);
        headers.put(Headers.DL_ATTEMPTS, attempt);
        LOG.info("message dead-lettered after attempt {}", attempt);
        session.publishConfirmed("", node.layout.names().deadLetterQueue(),
                withHeaders(d.properties(), headers), d.body());
    }

    /**
     * An answer "temporarily unavailable": back after the delay of its n-th such answer, its
     * attempt unchanged; or, once {@code unavailable_for} has passed since the first such
     * answer, to the dead-letter queue saying so.
     */
    Unavailable unavailable(MessageSession session, MessageSession.Delivery d, Message message, AgentError err) {
        Instant now = Instant.now();
        Map<String, Object> headers = headersOf(d.properties());
        Instant since = now;
        Object raw = headers.get(Headers.UNAVAILABLE_SINCE);
        if (raw != null && HeaderValues.text(raw) != null) {
            try {
                since = WireCodec.parseTime(HeaderValues.text(raw));
            } catch (DateTimeParseException e) {
                LOG.debug("unreadable {} header `{}`; counting from now", Headers.UNAVAILABLE_SINCE, raw);
            }
        }
        long answers = message.unavailable() + 1;
        Duration spent = Duration.between(since, now);
        if (spent.isNegative()) {
            spent = Duration.ZERO;
        }
        if (spent.compareTo(launch.unavailableFor().value()) >= 0) {
            AgentError error = AgentError.temporary("still unavailable after " + launch.unavailableFor()
                    + " (" + answers + " answers since " + WireCodec.headerTime(since) + "): " + err.message());
            try {
                deadLetter(session, d, message.attempt(), error);
                return new Unavailable(null, Disposition.DEAD_LETTER, error);
            } catch (IOException e) {
                return new Unavailable(e, Disposition.DEAD_LETTER, error);
            }
        }
        Duration delay = launch.retryDelay(answers);
        headers.put(Headers.UNAVAILABLE_SINCE, WireCodec.headerTime(since));
        headers.put(Headers.UNAVAILABLE, answers);
        LOG.debug("message unavailable ({} answers); back in {}", answers, delay);
        try {
            session.publishConfirmed(node.layout.names().wait(delay), session.queue,
                    withHeaders(d.properties(), headers), d.body());
            return new Unavailable(null, Disposition.RETRY, err);
        } catch (IOException e) {
            return new Unavailable(e, Disposition.RETRY, err);
        }
    }
}
