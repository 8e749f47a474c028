package io.agentmanager.client;

/**
 * An agent that runs on its own when a schedule fires: one {@link #run} per activation.
 * Returning ends the activation {@code succeeded}; an exception ends it {@code failed} (or
 * {@code interrupted} when it was asked to stop). Long runs check
 * {@link Context#isCancelled()} or react to thread interruption.
 *
 * @param <P> the parameter record, read from the launch setting's JSON values
 */
@FunctionalInterface
public interface StandaloneAgent<P> {
    /**
     * One run, on a thread of the node's executor.
     *
     * @param ctx the activation
     * @throws Exception a failure ({@link AgentException} to name its error type)
     */
    void run(Context<P> ctx) throws Exception;
}
