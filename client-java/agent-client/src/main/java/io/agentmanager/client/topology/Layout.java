package io.agentmanager.client.topology;

import com.rabbitmq.client.Channel;
import io.agentmanager.client.wire.DataQueueKind;
import io.agentmanager.client.wire.DeadLetterPolicy;
import io.agentmanager.client.wire.DeadLetterSettings;
import io.agentmanager.client.wire.MessageFilter;
import io.agentmanager.client.wire.Names;
import io.agentmanager.client.wire.RetryMath;
import io.agentmanager.client.wire.RetryStep;
import io.agentmanager.client.wire.RetryPolicy;
import io.agentmanager.client.wire.Subscription;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * Every name and argument of an installation's broker objects, byte for byte as the manager's
 * {@code Layout} builds them: a queue a node declares with other arguments is refused by the
 * broker (406 PRECONDITION_FAILED). Immutable and thread-safe.
 */
public final class Layout {
    /** Broker-side delivery limit of consumed queues. */
    public static final long SUBSCRIPTION_DELIVERY_LIMIT = 20;
    /** Most distinct wait delays one launch setting may use. */
    public static final int MAX_WAIT_LEVELS = RetryMath.MAX_WAIT_LEVELS;

    private final Names names;
    private final Duration expires;

    private Layout(Names names, Duration expires) {
        this.names = Objects.requireNonNull(names, "names");
        this.expires = expires;
    }

    /**
     * The layout of the installation named by {@code prefix}.
     *
     * @param prefix e.g. {@code am}
     * @return the layout
     */
    public static Layout of(String prefix) {
        return new Layout(new Names(prefix), null);
    }

    /**
     * Every queue expires after being unused this long ({@code x-expires}); the control exchange
     * auto-deletes. For tests and demos only; the manager's {@code AM_QUEUE_EXPIRY}.
     *
     * @param expiry the expiry, or null for none
     * @return a new layout
     */
    public Layout ephemeral(Duration expiry) {
        return new Layout(names, expiry);
    }

    /**
     * The names.
     *
     * @return the names
     */
    public Names names() {
        return names;
    }

    /**
     * The queue expiry, or null.
     *
     * @return the expiry
     */
    public Duration expires() {
        return expires;
    }

    private QueueSpec queue(String name, Map<String, Object> args) {
        Map<String, Object> all = new HashMap<>(args);
        all.put("x-queue-type", "quorum");
        if (expires != null) {
            all.put("x-expires", expires.toMillis());
        }
        return new QueueSpec(name, all);
    }

    /**
     * The dead-letter, reports and quarantine queues.
     *
     * @return the three queues
     */
    public java.util.List<QueueSpec> systemQueues() {
        return java.util.List.of(queue(names.deadLetterQueue(), Map.of()),
                queue(names.reportsQueue(), Map.of()), queue(names.quarantineQueue(), Map.of()));
    }

    /**
     * The control queue of one node.
     *
     * @param application the application
     * @param host the host
     * @return the queue
     */
    public QueueSpec nodeQueue(String application, String host) {
        return queue(names.nodeQueue(application, host), Map.of());
    }

    private Map<String, Object> consumedArgs() {
        Map<String, Object> args = new HashMap<>();
        args.put("x-delivery-limit", SUBSCRIPTION_DELIVERY_LIMIT);
        args.put("x-dead-letter-exchange", "");
        args.put("x-dead-letter-routing-key", names.deadLetterQueue());
        return args;
    }

    /**
     * A launch setting's subscription queue (topic data queues).
     *
     * @param launchSetting the launch setting
     * @return the queue
     */
    public QueueSpec subscriptionQueue(String launchSetting) {
        return queue(names.subscription(launchSetting), consumedArgs());
    }

    /**
     * A queue data queue's shared queue.
     *
     * @param dataQueue the data queue
     * @return the queue
     */
    public QueueSpec sharedQueue(String dataQueue) {
        return queue(names.sharedQueue(dataQueue), consumedArgs());
    }

    private Map<String, Object> expiringInto(long ttlMs, String target) {
        Map<String, Object> args = new HashMap<>();
        args.put("x-message-ttl", ttlMs);
        args.put("x-dead-letter-exchange", "");
        if (target != null) {
            args.put("x-dead-letter-routing-key", target);
        }
        return args;
    }

    /**
     * The wait queue of one delay: no dead-letter routing key, so an expired message returns
     * under the routing key it was published with.
     *
     * @param delayMs the delay
     * @return the queue
     */
    public QueueSpec waitQueue(long delayMs) {
        return queue(names.waitMillis(delayMs), expiringInto(delayMs, null));
    }

    /**
     * The fanout exchange nodes publish a message to for {@code delayMs}.
     *
     * @param delayMs the delay
     * @return the exchange
     */
    public ExchangeSpec waitExchange(long delayMs) {
        return new ExchangeSpec(names.waitMillis(delayMs), "fanout", Map.of());
    }

    /**
     * A Delayed launch setting's delay queue.
     *
     * @param launchSetting the launch setting
     * @param delay the data queue's delay
     * @return the queue
     */
    public QueueSpec delayQueue(String launchSetting, Duration delay) {
        return queue(names.prefix() + ".ls." + launchSetting + ".delay." + delay.toMillis() + "ms",
                expiringInto(delay.toMillis(), names.subscription(launchSetting)));
    }

    /**
     * Every wait delay (ms) a launch setting with this policy may use: its whole retry ladder
     * ({@link RetryMath#retryLadder}, what a launch carries as {@code retry_steps}) and the park
     * cool-down with policy {@code park}.
     *
     * @param retry the retry policy
     * @param deadLetter the dead-letter settings
     * @return the delays, ascending
     */
    public static TreeSet<Long> waitDelays(RetryPolicy retry, DeadLetterSettings deadLetter) {
        TreeSet<Long> delays = new TreeSet<>();
        for (RetryStep step : RetryMath.retryLadder(retry)) {
            delays.add(step.delayMs());
        }
        if (deadLetter.policy() == DeadLetterPolicy.PARK) {
            delays.add(deadLetter.parkCooldown().toMillis());
        }
        return delays;
    }

    /**
     * What the manager declares for one launch setting: its data queue's exchanges, the queue
     * it consumes (bound with its filter or through its delay queue) and its wait queues.
     *
     * @param launchSetting the launch setting
     * @param subscription its subscription
     * @param retry its retry policy
     * @param deadLetter its dead-letter settings
     * @return the objects
     */
    public BrokerObjects launchObjects(String launchSetting, Subscription subscription,
            RetryPolicy retry, DeadLetterSettings deadLetter) {
        BrokerObjects out = new BrokerObjects();
        String dq = subscription.dataQueue();
        String unrouted = names.unrouted(dq);
        out.add(new ExchangeSpec(unrouted, "fanout", Map.of()));
        out.add(queue(unrouted, Map.of()));
        out.bind(new BindingSpec(unrouted, unrouted, Map.of()));
        out.add(new ExchangeSpec(subscription.address(), "headers", Map.of("alternate-exchange", unrouted)));
        for (long ms : waitDelays(retry, deadLetter)) {
            QueueSpec q = waitQueue(ms);
            out.bind(new BindingSpec(q.name(), q.name(), Map.of()));
            out.add(q);
            out.add(waitExchange(ms));
        }
        if (subscription.kind() == DataQueueKind.TOPIC) {
            QueueSpec consumed = subscriptionQueue(launchSetting);
            String bound = consumed.name();
            if (subscription.delay() != null && !subscription.delay().isZero()) {
                QueueSpec delay = delayQueue(launchSetting, subscription.delay().value());
                out.add(delay);
                bound = delay.name();
            }
            out.add(consumed);
            out.bind(filterBinding(bound, subscription.address(), subscription.filter()));
        } else {
            QueueSpec consumed = sharedQueue(dq);
            out.bind(filterBinding(consumed.name(), subscription.address(), MessageFilter.none()));
            out.add(consumed);
        }
        return out;
    }

    /**
     * A binding taking the messages whose headers all equal the filter's.
     *
     * @param queue the queue
     * @param exchange the headers exchange
     * @param filter the filter
     * @return the binding
     */
    public BindingSpec filterBinding(String queue, String exchange, MessageFilter filter) {
        Map<String, Object> args = new HashMap<>(filter.headers());
        args.put("x-match", "all");
        return new BindingSpec(queue, exchange, args);
    }

    /**
     * Declares the manager side: the control exchange and the system queues.
     *
     * @param channel an open channel
     * @throws IOException when the broker refuses
     */
    public void declareManagerSide(Channel channel) throws IOException {
        channel.exchangeDeclare(names.controlExchange(), "direct", true, expires != null, Map.of());
        for (QueueSpec q : systemQueues()) {
            channel.queueDeclare(q.name(), true, false, false, q.args());
        }
    }

    /**
     * Everything a node needs before it listens: the manager side and its own control queue
     * (a quorum queue), bound under the node's routing key.
     *
     * @param channel an open channel
     * @param application the application
     * @param host the host
     * @throws IOException when the broker refuses
     */
    public void declareNode(Channel channel, String application, String host) throws IOException {
        declareManagerSide(channel);
        QueueSpec q = nodeQueue(application, host);
        channel.queueDeclare(q.name(), true, false, false, q.args());
        channel.queueBind(q.name(), names.controlExchange(), names.nodeRoutingKey(application, host), Map.of());
    }
}
