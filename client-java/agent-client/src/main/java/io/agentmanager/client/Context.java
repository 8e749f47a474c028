package io.agentmanager.client;

import io.agentmanager.client.wire.ActivationEvent;

/**
 * An agent's view of its activation: typed parameters, ids, cancellation and progress.
 * Thread-safe; valid for the activation's lifetime.
 *
 * @param <P> the parameter type
 */
public final class Context<P> {
    private final ActivationRun run;
    private final String host;
    private final P params;

    Context(ActivationRun run, String host, P params) {
        this.run = run;
        this.host = host;
        this.params = params;
    }

    /**
     * The launch setting's parameters, read into the agent's own type (schema defaults applied).
     *
     * @return the parameters
     */
    public P params() {
        return params;
    }

    /**
     * The activation's id (a UUID chosen by the manager).
     *
     * @return the id
     */
    public String activationId() {
        return run.activationId;
    }

    /**
     * The launch setting this activation runs.
     *
     * @return its id
     */
    public String launchSetting() {
        return run.launchSetting;
    }

    /**
     * The agent's id.
     *
     * @return the id
     */
    public String agent() {
        return run.agent;
    }

    /**
     * This node's host name.
     *
     * @return the host
     */
    public String host() {
        return host;
    }

    /**
     * The fencing token of the launch this run came from.
     *
     * @return the token
     */
    public long fencingToken() {
        return run.fencingToken;
    }

    /**
     * Whether the activation was asked to stop (stop, interrupt, breaker, max run time,
     * shutdown). The agent's thread is also interrupted then.
     *
     * @return true once asked to stop
     */
    public boolean isCancelled() {
        return run.isCancelled();
    }

    /**
     * Reports progress to the manager (shown on the activation's timeline).
     *
     * @param done units done, or null
     * @param total units in all, or null
     * @param message free text (may be empty)
     */
    public void progress(Long done, Long total, String message) {
        run.report(new ActivationEvent.Progress(done, total, message == null ? "" : message));
    }
}
