package io.agentmanager.client;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Small helpers around amqp-client channels and their errors. */
final class Channels {
    private static final Logger LOG = LoggerFactory.getLogger(Channels.class);

    private Channels() {
    }

    /** Closes a channel that may already be closed; problems are logged at debug level. */
    static void closeQuietly(Channel channel) {
        if (channel == null || !channel.isOpen()) {
            return;
        }
        try {
            channel.close();
        } catch (ShutdownSignalException e) {
            LOG.debug("channel already closed: {}", e.getMessage());
        } catch (IOException | TimeoutException e) {
            LOG.debug("channel close failed: {}", e.toString());
        }
    }

    /** The AMQP reply code of a channel or connection error, or 0. */
    static int replyCode(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ShutdownSignalException sse
                    && sse.getReason() instanceof com.rabbitmq.client.AMQP.Channel.Close close) {
                return close.getReplyCode();
            }
            if (t instanceof ShutdownSignalException sse
                    && sse.getReason() instanceof com.rabbitmq.client.AMQP.Connection.Close close) {
                return close.getReplyCode();
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return 0;
    }

    /** The broker's text of a channel error, or the exception's. */
    static String replyText(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ShutdownSignalException sse
                    && sse.getReason() instanceof com.rabbitmq.client.AMQP.Channel.Close close) {
                return close.getReplyText();
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return e.toString();
    }
}
