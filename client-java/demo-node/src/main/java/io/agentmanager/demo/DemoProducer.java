package io.agentmanager.demo;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.agentmanager.client.BrokerAddresses;
import io.agentmanager.client.wire.WireCodec;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Demo traffic ({@code AM_DEMO_PRODUCE=<ms>}): a small JSON event every that many milliseconds
 * to each exchange of {@code AM_DEMO_EXCHANGES} (default {@code demo.events,demo.later}), with
 * a {@code site} header; every tenth event is poison. Waits for the manager to declare the
 * exchanges; publishes with confirms; reconnects after any failure. Runs on its own thread.
 */
final class DemoProducer implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(DemoProducer.class);
    private static final String DEMO_EXCHANGES = "demo.events,demo.later";
    private static final long POISON_EVERY = 10;
    private static final List<String> SITES = List.of("par", "lyo", "mrs");
    private static final Duration MIN_BACKOFF = Duration.ofMillis(200);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    private final BrokerAddresses brokers;
    private final String host;
    private final Duration interval;
    private final List<String> exchanges;
    private final long started = System.currentTimeMillis();
    private volatile boolean stopped;

    private DemoProducer(BrokerAddresses brokers, String host, Duration interval, List<String> exchanges) {
        this.brokers = brokers;
        this.host = host;
        this.interval = interval;
        this.exchanges = exchanges;
    }

    /** Null when {@code AM_DEMO_PRODUCE} is unset or 0. */
    static DemoProducer fromEnv(String amqpUrl, String host) {
        String raw = System.getenv("AM_DEMO_PRODUCE");
        if (raw == null) {
            return null;
        }
        long millis;
        try {
            millis = Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("AM_DEMO_PRODUCE: `" + raw + "` is not a number of milliseconds", e);
        }
        if (millis == 0) {
            return null;
        }
        String list = System.getenv().getOrDefault("AM_DEMO_EXCHANGES", DEMO_EXCHANGES);
        List<String> exchanges = Arrays.stream(list.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
        if (exchanges.isEmpty()) {
            throw new IllegalArgumentException("AM_DEMO_EXCHANGES: name at least one exchange");
        }
        return new DemoProducer(BrokerAddresses.parse(amqpUrl).spreadBy(host), host, Duration.ofMillis(millis),
                exchanges);
    }

    void stop() {
        stopped = true;
    }

    @Override
    public void run() {
        long sent = 0;
        Duration backoff = MIN_BACKOFF;
        while (!stopped) {
            String url = brokers.nextUrl();
            try {
                ConnectionFactory f = new ConnectionFactory();
                f.setUri(url);
                f.setAutomaticRecoveryEnabled(false);
                try (Connection conn = f.newConnection("am-demo-producer " + host)) {
                    Channel ch = conn.createChannel();
                    ch.confirmSelect();
                    for (String e : exchanges) {
                        ch.exchangeDeclarePassive(e);
                    }
                    LOG.info("demo producer publishing to {} every {}", exchanges, interval);
                    backoff = MIN_BACKOFF;
                    while (!stopped) {
                        Thread.sleep(interval.toMillis());
                        String site = SITES.get((int) (sent % SITES.size()));
                        ObjectNode body = WireCodec.mapper().createObjectNode();
                        body.put("n", sent).put("from", host).put("site", site)
                                .put("at", WireCodec.headerTime(Instant.now()))
                                .put("text", sent % POISON_EVERY == 3 ? "this one is poison" : "hello");
                        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder()
                                .messageId(host + "-" + started + "-" + sent).contentType("application/json")
                                .deliveryMode(2).headers(Map.of("site", site)).build();
                        byte[] bytes = WireCodec.mapper().writeValueAsBytes(body);
                        for (String e : exchanges) {
                            ch.basicPublish(e, "", props, bytes);
                        }
                        ch.waitForConfirmsOrDie(30_000);
                        sent++;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                LOG.warn("demo producer: broker error (retry in {}): {}", backoff, e.toString());
            }
            try {
                Thread.sleep(backoff.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
        }
    }
}
