package io.agentmanager.client;

/**
 * An agent that handles the data messages of its launch setting's subscription, one at a time
 * per activation. A message is acknowledged only after {@link #handle} returns; an exception
 * sends it back later (growing delay) or, after the last attempt, to the dead-letter queue;
 * {@link TemporarilyUnavailableException} sends it back without using an attempt. Order is
 * not kept across redeliveries.
 *
 * @param <P> the parameter record
 */
@FunctionalInterface
public interface MessageAgent<P> {
    /**
     * Handles one message, on a thread of the node's executor.
     *
     * @param ctx the activation
     * @param message the data message
     * @throws Exception a failure
     */
    void handle(Context<P> ctx, Message message) throws Exception;
}
