package io.agentmanager.client;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import io.agentmanager.client.wire.DecodedCommand;
import io.agentmanager.client.wire.Headers;
import io.agentmanager.client.wire.WireCodec;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Listens to the node's control queue: commands go to the {@link Dispatcher}, a launch the
 * node does not understand is answered {@code skipped}, unreadable messages go to the
 * quarantine queue with {@code x-am-quarantine-reason} (and {@code x-am-host}) once the broker
 * confirmed the copy. Deliveries run on amqp-client's dispatch thread; subscribe/pause are
 * serialised by this object's monitor.
 */
final class ControlListener {
    private static final Logger LOG = LoggerFactory.getLogger(ControlListener.class);

    private final NodeRuntime node;
    private final Dispatcher dispatcher;
    private final String queue;
    private Channel channel;
    private Channel quarantine;
    private boolean paused;
    private volatile CompletableFuture<Void> ready = new CompletableFuture<>();

    ControlListener(NodeRuntime node, Dispatcher dispatcher) {
        this.node = node;
        this.dispatcher = dispatcher;
        this.queue = node.layout.names().nodeQueue(node.application, node.host);
    }

    /** Completes once the node listens to its control queue. */
    CompletableFuture<Void> ready() {
        return ready;
    }

    /** Subscribes on {@code conn} unless intake is paused. */
    synchronized void subscribe(Connection conn) {
        if (paused || conn == null || !conn.isOpen()) {
            return;
        }
        closeChannels();
        try {
            Channel ch = conn.createChannel();
            ch.basicQos(32);
            Channel q = conn.createChannel();
            q.confirmSelect();
            AtomicBoolean returned = new AtomicBoolean();
            q.addReturnListener(r -> returned.set(true));
            channel = ch;
            quarantine = q;
            ch.basicConsume(queue, false, new DefaultConsumer(ch) {
                @Override
                public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties props, byte[] body) {
                    deliver(ch, q, returned, envelope.getDeliveryTag(), props, body);
                }

                @Override
                public void handleShutdownSignal(String tag, ShutdownSignalException sig) {
                    lost(ch, sig);
                }
            });
            ready.complete(null);
            LOG.debug("listening to {}", queue);
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot listen to the control queue {}: {}", queue, e.toString());
            closeChannels();
            node.timers.schedule(() -> subscribe(node.link.current()), 100, TimeUnit.MILLISECONDS);
        }
    }

    /** Stops taking commands; they wait in the control queue. */
    synchronized void pause() {
        paused = true;
        closeChannels();
    }

    /** Takes commands again. */
    void resume() {
        synchronized (this) {
            paused = false;
        }
        subscribe(node.link.current());
    }

    /** The connection is gone: the next one subscribes again. */
    synchronized void connectionLost() {
        channel = null;
        quarantine = null;
        if (ready.isDone()) {
            ready = new CompletableFuture<>();
        }
    }

    private void closeChannels() {
        Channel ch = channel;
        Channel q = quarantine;
        channel = null;
        quarantine = null;
        if (ready.isDone()) {
            ready = new CompletableFuture<>();
        }
        Channels.closeQuietly(ch);
        Channels.closeQuietly(q);
    }

    private void lost(Channel ch, ShutdownSignalException sig) {
        boolean resubscribe;
        synchronized (this) {
            resubscribe = channel == ch && !paused && !sig.isHardError();
        }
        if (resubscribe) {
            LOG.warn("control channel closed: {}; listening again", sig.getMessage());
            node.timers.schedule(() -> subscribe(node.link.current()), 100, TimeUnit.MILLISECONDS);
        }
    }

    private void deliver(Channel ch, Channel q, AtomicBoolean returned, long tag, AMQP.BasicProperties props,
            byte[] body) {
        try {
            DecodedCommand decoded = WireCodec.decodeCommand(body);
            if (decoded instanceof DecodedCommand.Understood u) {
                // The launch's run continues the trace it was published under.
                dispatcher.command(u.command(), TraceContext.fromHeaders(props.getHeaders()));
                ch.basicAck(tag, false);
            } else if (decoded instanceof DecodedCommand.LaunchNotUnderstood n) {
                dispatcher.notUnderstood(n);
                ch.basicAck(tag, false);
            } else if (decoded instanceof DecodedCommand.Unreadable r) {
                node.quarantined.incrementAndGet();
                LOG.warn("control message quarantined: {}", r.reason());
                try {
                    toQuarantine(q, returned, props, body, r.reason());
                    ch.basicAck(tag, false);
                } catch (IOException | TimeoutException e) {
                    LOG.error("cannot quarantine a control message; dropping it: {}", e.toString());
                    ch.basicReject(tag, false);
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.error("control message not settled; the broker delivers it again", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void toQuarantine(Channel q, AtomicBoolean returned, AMQP.BasicProperties props, byte[] body,
            String reason) throws IOException, TimeoutException, InterruptedException {
        Map<String, Object> headers = props.getHeaders() == null ? new HashMap<>() : new HashMap<>(props.getHeaders());
        headers.put(Headers.QUARANTINE_REASON, reason);
        headers.put(Headers.DL_HOST, node.host);
        String target = node.layout.names().quarantineQueue();
        returned.set(false);
        q.basicPublish("", target, true, new AMQP.BasicProperties.Builder().headers(headers).deliveryMode(2).build(),
                body);
        if (!q.waitForConfirms(30_000)) {
            throw new IOException("the broker refused the message for `" + target + "`");
        }
        if (returned.get()) {
            throw new IOException("`" + target + "` routed the message to no queue");
        }
    }
}
