package io.agentmanager.client.topology;

import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A set of broker objects: exchanges, queues, bindings. Not thread-safe while built.
 */
public final class BrokerObjects {
    private final Map<String, ExchangeSpec> exchanges = new TreeMap<>();
    private final Map<String, QueueSpec> queues = new TreeMap<>();
    private final List<BindingSpec> bindings = new ArrayList<>();

    void add(ExchangeSpec e) {
        exchanges.put(e.name(), e);
    }

    void add(QueueSpec q) {
        queues.put(q.name(), q);
    }

    void bind(BindingSpec b) {
        if (!bindings.contains(b)) {
            bindings.add(b);
        }
    }

    /**
     * The exchanges by name.
     *
     * @return the exchanges
     */
    public Map<String, ExchangeSpec> exchanges() {
        return Map.copyOf(exchanges);
    }

    /**
     * The queues by name.
     *
     * @return the queues
     */
    public Map<String, QueueSpec> queues() {
        return Map.copyOf(queues);
    }

    /**
     * The bindings.
     *
     * @return the bindings
     */
    public List<BindingSpec> bindings() {
        return List.copyOf(bindings);
    }

    /**
     * Declares everything: exchanges (fanout alternates before headers), queues, bindings.
     *
     * @param channel an open channel
     * @throws IOException when the broker refuses one (the channel is then closed)
     */
    public void declare(Channel channel) throws IOException {
        List<ExchangeSpec> ordered = new ArrayList<>(exchanges.values());
        ordered.sort(Comparator.comparingInt(e -> List.of("direct", "fanout", "headers").indexOf(e.type())));
        for (ExchangeSpec e : ordered) {
            channel.exchangeDeclare(e.name(), e.type(), true, false, e.args());
        }
        for (QueueSpec q : queues.values()) {
            channel.queueDeclare(q.name(), true, false, false, q.args());
        }
        for (BindingSpec b : bindings) {
            channel.queueBind(b.queue(), b.exchange(), "", b.args());
        }
    }
}
