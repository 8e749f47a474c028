package io.agentmanager.client.wire;

import java.time.Duration;
import java.util.Objects;

/**
 * Broker names of one installation, derived from its prefix ({@code am} by default), as
 * {@code am_domain::wire::names::Names} builds them.
 *
 * @param prefix the prefix every name starts with
 */
public record Names(String prefix) {

    /** The prefix used when none is configured. */
    public static final String DEFAULT_PREFIX = "am";

    /** Checks the prefix. */
    public Names {
        Objects.requireNonNull(prefix, "prefix");
    }

    /**
     * Direct exchange of manager → node commands.
     *
     * @return {@code <prefix>.control}
     */
    public String controlExchange() {
        return prefix + ".control";
    }

    /**
     * Routing key of one node on the control exchange.
     *
     * @param application the application
     * @param host the host
     * @return {@code node.<app>.<host>}
     */
    public String nodeRoutingKey(String application, String host) {
        return "node." + application + "." + host;
    }

    /**
     * Control queue of one node.
     *
     * @param application the application
     * @param host the host
     * @return {@code <prefix>.node.<app>.<host>}
     */
    public String nodeQueue(String application, String host) {
        return prefix + ".node." + application + "." + host;
    }

    /**
     * Queue the manager reads reports from.
     *
     * @return {@code <prefix>.reports}
     */
    public String reportsQueue() {
        return prefix + ".reports";
    }

    /**
     * Where unreadable control messages go.
     *
     * @return {@code <prefix>.quarantine}
     */
    public String quarantineQueue() {
        return prefix + ".quarantine";
    }

    /**
     * The system dead-letter queue.
     *
     * @return {@code <prefix>.dead-letters}
     */
    public String deadLetterQueue() {
        return prefix + ".dead-letters";
    }

    /**
     * Subscription queue of a launch setting.
     *
     * @param launchSetting the launch setting
     * @return {@code <prefix>.ls.<ls>}
     */
    public String subscription(String launchSetting) {
        return prefix + ".ls." + launchSetting;
    }

    /**
     * Queue shared by the launch settings of a {@code queue} data queue.
     *
     * @param dataQueue the data queue
     * @return {@code <prefix>.dq.<dq>}
     */
    public String sharedQueue(String dataQueue) {
        return prefix + ".dq." + dataQueue;
    }

    /**
     * Alternate exchange and queue of a data queue's exchange.
     *
     * @param dataQueue the data queue
     * @return {@code <prefix>.dq.<dq>.unrouted}
     */
    public String unrouted(String dataQueue) {
        return prefix + ".dq." + dataQueue + ".unrouted";
    }

    /**
     * Wait exchange and queue of one delay; the delay in whole milliseconds, truncated.
     *
     * @param delay the delay
     * @return {@code <prefix>.wait.<ms>ms}
     */
    public String wait(Duration delay) {
        return waitMillis(delay.toMillis());
    }

    /**
     * Wait exchange and queue of a delay in milliseconds.
     *
     * @param millis the delay
     * @return {@code <prefix>.wait.<ms>ms}
     */
    public String waitMillis(long millis) {
        return prefix + ".wait." + millis + "ms";
    }

    /**
     * The queue a launch consumes: its subscription on a topic data queue, the shared queue on
     * a queue data queue.
     *
     * @param launchSetting the launch setting
     * @param subscription its subscription
     * @return the queue name
     */
    public String consumedQueue(String launchSetting, Subscription subscription) {
        return subscription.kind() == DataQueueKind.QUEUE
                ? sharedQueue(subscription.dataQueue())
                : subscription(launchSetting);
    }
}
