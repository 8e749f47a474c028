package io.agentmanager.client;

import io.agentmanager.client.wire.Concurrency;
import io.agentmanager.client.wire.InputKind;
import io.agentmanager.client.wire.OverlapPolicy;
import io.agentmanager.client.wire.ParamSpec;
import io.agentmanager.client.wire.PublishedAgent;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How an agent presents itself: id, title, parameter schema, suggestions for a new catalog
 * entry and, for message agents, the prefetch. Not thread-safe while being built; the node
 * copies what it needs when it is built.
 */
public final class AgentSpec {
    private final String id;
    private String title = "";
    private final List<ParamSpec> params = new ArrayList<>();
    private String dataQueue;
    private Concurrency concurrency;
    private OverlapPolicy overlap;
    private int prefetch = 10;

    private AgentSpec(String id) {
        this.id = Objects.requireNonNull(id, "id");
    }

    /**
     * A spec with the agent's id ({@code [a-z0-9][a-z0-9._-]*}).
     *
     * @param id the id
     * @return the spec
     */
    public static AgentSpec of(String id) {
        return new AgentSpec(id);
    }

    /**
     * The title shown to operators.
     *
     * @param title the title
     * @return this
     */
    public AgentSpec title(String title) {
        this.title = Objects.requireNonNull(title, "title");
        return this;
    }

    /**
     * Adds a parameter to the schema.
     *
     * @param spec the parameter
     * @return this
     */
    public AgentSpec param(ParamSpec spec) {
        params.add(Objects.requireNonNull(spec, "spec"));
        return this;
    }

    /**
     * Suggests the data queue of a new catalog entry (message agents).
     *
     * @param dataQueue the data queue's id
     * @return this
     */
    public AgentSpec suggestDataQueue(String dataQueue) {
        this.dataQueue = dataQueue;
        return this;
    }

    /**
     * Suggests the concurrency of a new catalog entry.
     *
     * @param concurrency ANY or MANY
     * @return this
     */
    public AgentSpec suggestConcurrency(Concurrency concurrency) {
        this.concurrency = concurrency;
        return this;
    }

    /**
     * Suggests the overlap policy of a new catalog entry.
     *
     * @param overlap the policy
     * @return this
     */
    public AgentSpec suggestOverlap(OverlapPolicy overlap) {
        this.overlap = overlap;
        return this;
    }

    /**
     * Messages the broker may hand the consumer before they are acknowledged (default 10).
     *
     * @param prefetch at least 1
     * @return this
     */
    public AgentSpec prefetch(int prefetch) {
        this.prefetch = Math.max(1, Math.min(prefetch, 65_535));
        return this;
    }

    /**
     * The id.
     *
     * @return the id
     */
    public String id() {
        return id;
    }

    /**
     * The parameter schema.
     *
     * @return a copy of the parameters
     */
    public List<ParamSpec> params() {
        return List.copyOf(params);
    }

    /**
     * The prefetch.
     *
     * @return the prefetch
     */
    public int prefetch() {
        return prefetch;
    }

    /**
     * The published form.
     *
     * @param input the agent's input kind
     * @return the publication entry
     */
    PublishedAgent publish(InputKind input) {
        return new PublishedAgent(id, title, input, params, dataQueue, concurrency, overlap);
    }
}
