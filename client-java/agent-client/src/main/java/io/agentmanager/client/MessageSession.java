package io.agentmanager.client;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The channels of one subscription on one connection: a consuming channel whose deliveries
 * land in {@link #inbox} (amqp-client's dispatch thread puts, the activation's runner takes),
 * and a publisher channel with confirms for the copies of failed messages. Used by the
 * runner thread only, apart from the inbox.
 */
final class MessageSession {
    /** A delivery of the subscription. */
    record Delivery(long tag, AMQP.BasicProperties properties, byte[] body, boolean redelivered) {
    }

    /** The consumer ended (channel or connection lost, queue deleted). */
    static final Object LOST = new Object();
    /** Something to look at (a cancellation). */
    static final Object WAKE = new Object();

    /** The queue does not exist on the broker. */
    static final class QueueMissing extends Exception {
        private static final long serialVersionUID = 1L;

        QueueMissing(String queue, Throwable cause) {
            super(queue, cause);
        }
    }

    final String queue;
    final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    private final Channel channel;
    private final Channel publisher;
    private final AtomicBoolean returned = new AtomicBoolean();

    private MessageSession(String queue, Channel channel, Channel publisher) {
        this.queue = queue;
        this.channel = channel;
        this.publisher = publisher;
    }

    static MessageSession open(Connection conn, String queue, int prefetch) throws IOException, QueueMissing {
        Channel channel = conn.createChannel();
        try {
            channel.queueDeclarePassive(queue);
        } catch (IOException e) {
            if (Channels.replyCode(e) == AMQP.NOT_FOUND) {
                throw new QueueMissing(queue, e);
            }
            throw e;
        }
        Channel publisher = null;
        try {
            publisher = conn.createChannel();
            publisher.confirmSelect();
            MessageSession s = new MessageSession(queue, channel, publisher);
            publisher.addReturnListener(r -> s.returned.set(true));
            channel.basicQos(prefetch);
            channel.basicConsume(queue, false, new DefaultConsumer(channel) {
                @Override
                public void handleDelivery(String consumerTag, Envelope envelope,
                        AMQP.BasicProperties properties, byte[] body) {
                    s.inbox.add(new Delivery(envelope.getDeliveryTag(), properties, body, envelope.isRedeliver()));
                }

                @Override
                public void handleCancel(String consumerTag) {
                    s.inbox.add(LOST);
                }

                @Override
                public void handleShutdownSignal(String consumerTag, ShutdownSignalException sig) {
                    s.inbox.add(LOST);
                }
            });
            return s;
        } catch (IOException | RuntimeException e) {
            Channels.closeQuietly(channel);
            Channels.closeQuietly(publisher);
            throw e;
        }
    }

    void ack(long tag) throws IOException {
        channel.basicAck(tag, false);
    }

    void requeue(long tag) throws IOException {
        channel.basicNack(tag, false, true);
    }

    /**
     * Publishes a copy mandatory and waits for the broker's confirm; a copy no queue took is
     * an error. The original may be acknowledged only after this returned.
     */
    void publishConfirmed(String exchange, String routingKey, AMQP.BasicProperties props, byte[] body)
            throws IOException {
        String target = exchange.isEmpty() ? routingKey : exchange;
        returned.set(false);
        try {
            publisher.basicPublish(exchange, routingKey, true, props, body);
            if (!publisher.waitForConfirms(30_000)) {
                throw new IOException("the broker refused the message for `" + target + "`");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the confirm of `" + target + "`", e);
        } catch (TimeoutException e) {
            throw new IOException("no confirm from the broker for `" + target + "`", e);
        } catch (ShutdownSignalException e) {
            throw new IOException("channel closed while publishing to `" + target + "`", e);
        }
        if (returned.get()) {
            throw new IOException("`" + target + "` routed the message to no queue");
        }
    }

    /** Closing the channel hands every unacknowledged (prefetched) message back. */
    void close() {
        Channels.closeQuietly(channel);
        Channels.closeQuietly(publisher);
    }
}
