package io.agentmanager.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import io.agentmanager.client.topology.BrokerObjects;
import io.agentmanager.client.topology.Layout;
import io.agentmanager.client.topology.QueueSpec;
import io.agentmanager.client.wire.ActivationEvent;
import io.agentmanager.client.wire.ActivationReport;
import io.agentmanager.client.wire.DecodedCommand;
import io.agentmanager.client.wire.Launch;
import io.agentmanager.client.wire.RetryPolicy;
import io.agentmanager.client.wire.RetryStep;
import io.agentmanager.client.wire.ToManager;
import io.agentmanager.client.wire.WireCodec;
import io.agentmanager.client.wire.WireException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * The manager's side for the demo node's tests: declares what the manager would under a unique
 * prefix {@code jt-<random>} (queues expire after 60 s), sends commands, reads reports,
 * publishes data messages; {@link #close()} deletes every queue and exchange it knows of.
 */
final class TestManager implements AutoCloseable {
    static final String APP = "app";
    static final String AMQP_URL = System.getenv().getOrDefault("AM_TEST_AMQP_URL",
            "amqp://guest:guest@127.0.0.1:5672/%2f");

    final Layout layout;
    final List<ToManager> reports = new CopyOnWriteArrayList<>();
    private final Connection conn;
    private final Channel channel;
    private final Set<String> hosts = new TreeSet<>();
    private final Set<String> queues = new TreeSet<>();
    private final Set<String> exchanges = new TreeSet<>();

    TestManager() throws Exception {
        String prefix = "jt-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        layout = Layout.of(prefix).ephemeral(Duration.ofSeconds(60));
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(AMQP_URL);
        f.setAutomaticRecoveryEnabled(false);
        conn = f.newConnection("am-java-demo-test-manager " + prefix);
        channel = conn.createChannel();
        channel.confirmSelect();
        layout.declareManagerSide(channel);
        Channel reader = conn.createChannel();
        reader.basicConsume(layout.names().reportsQueue(), true, new DefaultConsumer(reader) {
            @Override
            public void handleDelivery(String tag, Envelope e, AMQP.BasicProperties p, byte[] body) throws IOException {
                try {
                    reports.add(WireCodec.decodeReport(body));
                } catch (WireException ex) {
                    throw new IOException("a node sent an unreadable report: "
                            + new String(body, StandardCharsets.UTF_8), ex);
                }
            }
        });
    }

    String prefix() {
        return layout.names().prefix();
    }

    /** The node's control queue is deleted at the end. */
    void host(String host) {
        hosts.add(host);
    }

    /** A launch of {@code agent} as the manager writes it (version 1). */
    ObjectNode launch(String launchSetting, String agent, ObjectNode parameters) {
        ObjectNode l = WireCodec.mapper().createObjectNode();
        l.put("v", 1);
        l.put("type", "launch");
        l.put("activation_id", UUID.randomUUID().toString());
        l.put("launch_setting", launchSetting);
        l.put("agent", agent);
        l.put("kind", "scheduled");
        l.set("parameters", parameters == null ? WireCodec.mapper().createObjectNode() : parameters);
        l.put("fencing_token", 1);
        l.put("overlap", "allow");
        return l;
    }

    /**
     * A stream of a messages agent on a topic data queue whose exchange is {@code address}: its
     * {@code retry} says one hour, its {@code retry_steps} the ladder of {@code ladder}. Only the
     * ladder's wait queues are declared ({@link #subscribe}): a node that retried by the formula
     * would name a wait exchange that does not exist.
     */
    ObjectNode stream(String launchSetting, String agent, String address, RetryPolicy ladder, long maxDeliveries) {
        ObjectNode l = launch(launchSetting, agent, null);
        l.put("kind", "stream");
        ObjectNode retry = l.putObject("retry");
        retry.put("initial_delay", "1h");
        retry.put("multiplier", 2.0);
        retry.put("max_delay", "1h");
        retry.put("max_deliveries", maxDeliveries);
        ArrayNode steps = l.putArray("retry_steps");
        for (RetryStep s : io.agentmanager.client.wire.RetryMath.retryLadder(ladder)) {
            steps.addObject().put("attempt", s.attempt()).put("delay_ms", s.delayMs());
        }
        ObjectNode sub = l.putObject("subscription");
        sub.put("data_queue", "dq");
        sub.put("address", address);
        sub.put("kind", "topic");
        sub.putObject("filter").putObject("headers");
        exchanges.add(address);
        return l;
    }

    /** Declares what the manager would for this stream: its queue, bindings and ladder's wait queues. */
    void subscribe(ObjectNode launchJson, RetryPolicy ladder) throws Exception {
        Launch launch = (Launch) ((DecodedCommand.Understood) WireCodec.decodeCommand(
                WireCodec.mapper().writeValueAsBytes(launchJson))).command();
        BrokerObjects objects = layout.launchObjects(launch.launchSetting(), launch.subscription(), ladder,
                launch.deadLetter());
        queues.addAll(objects.queues().keySet());
        exchanges.addAll(objects.exchanges().keySet());
        objects.declare(channel);
    }

    void send(String host, JsonNode command) throws Exception {
        channel.basicPublish(layout.names().controlExchange(), layout.names().nodeRoutingKey(APP, host), false,
                new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                WireCodec.mapper().writeValueAsBytes(command));
        channel.waitForConfirmsOrDie(5_000);
    }

    void publish(String address, String body) throws Exception {
        channel.basicPublish(address, "", false, new AMQP.BasicProperties.Builder().deliveryMode(2)
                .messageId("m-" + UUID.randomUUID()).headers(Map.of()).build(), body.getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(5_000);
    }

    /** Waits for a report of {@code type} matching {@code pred}. */
    <T extends ToManager> T waitFor(String what, Duration timeout, Class<T> type, Predicate<T> pred)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            for (ToManager r : reports) {
                if (type.isInstance(r) && pred.test(type.cast(r))) {
                    return type.cast(r);
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no report " + what + " within " + timeout + "; got " + reports);
            }
            Thread.sleep(20);
        }
    }

    /** Waits for an activation event of {@code type}. */
    <E extends ActivationEvent> E event(String activationId, Class<E> type, Duration timeout)
            throws InterruptedException {
        ActivationReport r = waitFor(type.getSimpleName() + " of " + activationId, timeout, ActivationReport.class,
                a -> a.activationId().equals(activationId) && type.isInstance(a.event()));
        return type.cast(r.event());
    }

    /** The events of an activation, in order. */
    List<ActivationEvent> events(String activationId) {
        return reports.stream().filter(r -> r instanceof ActivationReport a && a.activationId().equals(activationId))
                .map(r -> ((ActivationReport) r).event()).toList();
    }

    /** Takes up to {@code n} messages from a queue, waiting up to {@code timeout}. */
    List<GetResponse> take(String queue, int n, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<GetResponse> out = new ArrayList<>();
        while (out.size() < n && System.nanoTime() < deadline) {
            GetResponse r = channel.basicGet(queue, true);
            if (r == null) {
                Thread.sleep(20);
            } else {
                out.add(r);
            }
        }
        return out;
    }

    /** Deletes every queue and exchange of this test (nodes are closed by the tests). */
    @Override
    public void close() throws Exception {
        List<String> qs = new ArrayList<>();
        for (QueueSpec q : layout.systemQueues()) {
            qs.add(q.name());
        }
        for (String h : hosts) {
            qs.add(layout.names().nodeQueue(APP, h));
        }
        qs.addAll(queues);
        for (String q : qs) {
            Channel ch = conn.createChannel();
            try {
                ch.queueDelete(q);
            } catch (IOException e) {
                // Absent already: the broker closed the channel.
            } finally {
                closeQuietly(ch);
            }
        }
        List<String> xs = new ArrayList<>(exchanges);
        xs.add(layout.names().controlExchange());
        for (String x : xs) {
            Channel ch = conn.createChannel();
            try {
                ch.exchangeDelete(x);
            } catch (IOException e) {
                // Absent already.
            } finally {
                closeQuietly(ch);
            }
        }
        conn.close(200, "test done", 5_000);
    }

    private static void closeQuietly(Channel ch) {
        try {
            if (ch.isOpen()) {
                ch.close();
            }
        } catch (IOException | java.util.concurrent.TimeoutException | RuntimeException e) {
            // Closed by the broker already.
        }
    }
}
