package io.agentmanager.client;

import com.fasterxml.jackson.databind.JsonNode;
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
import io.agentmanager.client.wire.ActivationEvent;
import io.agentmanager.client.wire.ActivationReport;
import io.agentmanager.client.wire.ToManager;
import io.agentmanager.client.wire.WireCodec;
import io.agentmanager.client.wire.WireException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * A stand-in for the manager: sends commands to nodes, reads their reports, publishes data
 * messages and inspects queues. Everything lives under a unique prefix {@code jt-<random>};
 * queues expire when unused (60 s) and {@link #close()} deletes everything created.
 */
final class ManagerHarness implements AutoCloseable {
    static final String APP = "app";
    static final String AMQP_URL = System.getenv().getOrDefault("AM_TEST_AMQP_URL",
            "amqp://guest:guest@127.0.0.1:5672/%2f");

    final Layout layout;
    private final Connection conn;
    private final Channel channel;
    /** Each report with its raw JSON, in arrival order. */
    final List<ToManager> reports = new CopyOnWriteArrayList<>();
    final List<JsonNode> rawReports = new CopyOnWriteArrayList<>();
    /** Each report with its AMQP headers (null when it had none), in arrival order. */
    final List<Received> received = new CopyOnWriteArrayList<>();
    private final Set<String> hosts = new TreeSet<>();
    private final Set<String> queues = new TreeSet<>();
    private final Set<String> exchanges = new TreeSet<>();
    private final List<Node> nodes = new ArrayList<>();
    private final java.util.concurrent.atomic.AtomicBoolean returned = new java.util.concurrent.atomic.AtomicBoolean();

    ManagerHarness() throws Exception {
        String prefix = "jt-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        layout = Layout.of(prefix).ephemeral(Duration.ofSeconds(60));
        ConnectionFactory f = new ConnectionFactory();
        f.setUri(AMQP_URL);
        f.setAutomaticRecoveryEnabled(false);
        conn = f.newConnection("am-java-test-manager " + prefix);
        channel = conn.createChannel();
        channel.confirmSelect();
        channel.addReturnListener(r -> returned.set(true));
        layout.declareManagerSide(channel);
        Channel reader = conn.createChannel();
        reader.basicConsume(layout.names().reportsQueue(), true, new DefaultConsumer(reader) {
            @Override
            public void handleDelivery(String tag, Envelope e, AMQP.BasicProperties p, byte[] body) throws IOException {
                try {
                    rawReports.add(WireCodec.mapper().readTree(body));
                    ToManager report = WireCodec.decodeReport(body);
                    reports.add(report);
                    received.add(new Received(report, p.getHeaders()));
                } catch (WireException ex) {
                    throw new IOException("a node sent an unreadable report: "
                            + new String(body, StandardCharsets.UTF_8), ex);
                }
            }
        });
    }

    /** A report as it arrived. */
    record Received(ToManager report, Map<String, Object> headers) {
    }

    String prefix() {
        return layout.names().prefix();
    }

    /** A node builder wired to this harness, with short timings. */
    NodeBuilder node(String host) {
        hosts.add(host);
        return Node.builder().application(APP).host(host).amqpUrl(AMQP_URL).prefix(prefix())
                .queueExpiry(Duration.ofSeconds(60))
                .heartbeatEvery(Duration.ofMillis(200))
                .interruptGrace(Duration.ofSeconds(2))
                .shutdownTimeout(Duration.ofSeconds(5))
                .defaultIdleTimeout(Duration.ofMillis(500));
    }

    /** Starts a node and waits until it listens; closed by {@link #close()}. */
    Node start(NodeBuilder b) throws InterruptedException {
        Node n = b.start();
        nodes.add(n);
        if (!n.awaitReady(Duration.ofSeconds(15))) {
            throw new AssertionError("the node did not become ready");
        }
        return n;
    }

    /** A unique data exchange name. */
    String address(String name) {
        String a = prefix() + ".data." + name;
        exchanges.add(a);
        return a;
    }

    /** A launch of {@code agent} as the manager writes it (version 1), as a JSON tree. */
    ObjectNode launch(String launchSetting, String agent) {
        ObjectNode l = WireCodec.mapper().createObjectNode();
        l.put("v", 1);
        l.put("type", "launch");
        l.put("activation_id", UUID.randomUUID().toString());
        l.put("launch_setting", launchSetting);
        l.put("agent", agent);
        l.put("kind", "scheduled");
        l.putObject("parameters");
        l.put("fencing_token", 1);
        l.put("overlap", "allow");
        ObjectNode retry = l.putObject("retry");
        retry.put("initial_delay", "100ms");
        retry.put("multiplier", 2.0);
        retry.put("max_delay", "400ms");
        retry.put("max_deliveries", 3);
        l.put("unavailable_for", "1day");
        ObjectNode dl = l.putObject("dead_letter");
        dl.put("policy", "dead-letter");
        dl.put("park_cooldown", "10m");
        l.put("failure_threshold", 10);
        return l;
    }

    /** A stream launch of a messages agent on a topic data queue with exchange {@code address}. */
    ObjectNode stream(String launchSetting, String agent, String address) {
        ObjectNode l = launch(launchSetting, agent);
        l.put("kind", "stream");
        ObjectNode sub = l.putObject("subscription");
        sub.put("data_queue", "dq");
        sub.put("address", address);
        sub.put("kind", "topic");
        sub.putObject("filter").putObject("headers");
        return l;
    }

    /** Declares what the manager would for this launch (queue, bindings, wait queues). */
    void subscribe(ObjectNode launchJson) throws Exception {
        io.agentmanager.client.wire.Launch launch = (io.agentmanager.client.wire.Launch)
                ((io.agentmanager.client.wire.DecodedCommand.Understood)
                        WireCodec.decodeCommand(WireCodec.mapper().writeValueAsBytes(launchJson))).command();
        BrokerObjects objects = layout.launchObjects(launch.launchSetting(), launch.subscription(),
                launch.retry(), launch.deadLetter());
        queues.addAll(objects.queues().keySet());
        exchanges.addAll(objects.exchanges().keySet());
        objects.declare(channel);
    }

    void send(String host, JsonNode command) throws Exception {
        sendRaw(host, WireCodec.mapper().writeValueAsBytes(command));
    }

    void sendRaw(String host, byte[] bytes) throws Exception {
        send(host, bytes, null);
    }

    /** Sends a command with AMQP headers (a {@code traceparent}, as the manager's relay does). */
    void send(String host, byte[] bytes, Map<String, Object> headers) throws Exception {
        returned.set(false);
        channel.basicPublish(layout.names().controlExchange(), layout.names().nodeRoutingKey(APP, host), true,
                new AMQP.BasicProperties.Builder().deliveryMode(2).headers(headers).build(), bytes);
        channel.waitForConfirmsOrDie(5_000);
        if (returned.get()) {
            throw new AssertionError("the node's control queue does not exist");
        }
    }

    void publish(String address, String body, Map<String, Object> headers) throws Exception {
        channel.basicPublish(address, "", false, new AMQP.BasicProperties.Builder().deliveryMode(2)
                .messageId("m-" + body).headers(new HashMap<>(headers)).build(), body.getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(5_000);
    }

    /** Waits for a report matching {@code pred}. */
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

    /** Closes every node, then deletes every queue and exchange of this test. */
    @Override
    public void close() throws Exception {
        for (Node n : nodes) {
            n.close();
        }
        List<String> qs = new ArrayList<>(List.of(layout.names().reportsQueue(), layout.names().quarantineQueue(),
                layout.names().deadLetterQueue()));
        for (String h : hosts) {
            qs.add(layout.names().nodeQueue(APP, h));
        }
        qs.addAll(queues);
        for (String q : qs) {
            Channel ch = conn.createChannel();
            try {
                ch.queueDelete(q);
            } catch (IOException e) {
                // Absent already: its channel is closed, nothing to delete.
            } finally {
                Channels.closeQuietly(ch);
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
                Channels.closeQuietly(ch);
            }
        }
        conn.close(200, "test done", 5_000);
    }
}
